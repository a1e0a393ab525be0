"""Judge-run throughput against the local OpenAI-compatible server (tests/support) with a
fixed latency per answer: the app's own overhead per item (issue 33: under 20 ms).

On a throwaway SQLite database and PostgreSQL (``bench.databases``): 100 transcripts judged
by a run (``editor.assist.runs.run_judge_run``) at concurrency 1 and 8, the server answering
each request after 50 ms. The overhead per item is the run's wall time times its
concurrency, divided by the items, less the server's latency: what one worker thread spends
per item besides waiting for the model (the prompt, the request through the ``openai``
client, its ModelRequest row, reading the answer, the suggestion's INSERT, progress).

    .venv/bin/python -m bench.bench_judge
"""

from __future__ import annotations

import sys
import time

ITEMS = 100
LATENCY = 0.05
CONCURRENCIES = (1, 8)


def run() -> None:
    from bench.databases import on_each_database

    on_each_database("bench.bench_judge")


def _child() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from editor import formats
    from editor.assist import judges, runs
    from editor.labels import create_label_schema
    from editor.models import Dataset, JudgeRun, Membership, ModelConnection, Role, Suggestion
    from editor.storage.create import create_transcript
    from tests.support import openai_server
    from tests.support.judging import QUESTIONS
    from tests.support.openai_server import OpenAIServer

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench")
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    M = formats.Message
    text = formats.serialize(
        formats.Transcript(
            spec="openchatml-2.2",
            messages=[
                M(role="user", content="Is the tide high at noon in Brest today? " * 5),
                M(role="assistant", channel="final", content="Yes: high tide is at 12:10. " * 5),
            ],
        )
    )
    for n in range(ITEMS):
        create_transcript(dataset, author=user, text=text, spec="openchatml-2.2", title=f"{n}")
    schema = create_label_schema(dataset, author=user, name="Quality", questions=QUESTIONS)
    # The test server writes its headers and its body apart: with Nagle's algorithm on, the
    # client's delayed ACK holds each answer ~40 ms, which is the server's cost, not the app's.
    openai_server._Handler.disable_nagle_algorithm = True
    server = OpenAIServer().start()
    server.latency = LATENCY
    server.respond_with(lambda body: {"value": "yes", "rationale": "It answered."})
    ids = sorted(dataset.transcripts.values_list("pk", flat=True))
    try:
        for concurrency, cached in [(c, False) for c in CONCURRENCIES] + [(1, True)]:
            if cached:
                # What one ``openai.OpenAI`` per connection (not per request) would give: the
                # client's construction (an SSL context, ~40 ms) is most of the overhead.
                import functools

                from editor.assist import client

                client._client = functools.lru_cache(maxsize=None)(client._client)
            connection = ModelConnection.objects.create(
                dataset=dataset,
                name=f"local-{concurrency}-{cached}",
                base_url=server.base_url,
                model="bench-model",
                max_concurrency=concurrency,
            )
            judge = judges.attach_judge(
                schema, question="helpful", connection=connection, user=user
            )
            run = JudgeRun.objects.create(
                dataset=dataset,
                judge=judge,
                schema_version=schema.current_version,
                created_by=user,
                transcript_ids=ids,
            )
            started = time.perf_counter()
            done = runs.run_judge_run(run.pk)
            wall = time.perf_counter() - started
            assert done.status == "succeeded", done.error
            assert Suggestion.objects.filter(run=run).count() == ITEMS
            overhead = (wall * concurrency / ITEMS - LATENCY) * 1000
            print(
                f"  {ITEMS} items, concurrency {concurrency}, {LATENCY * 1000:.0f} ms latency"
                f"{', one openai client per connection' if cached else ''}: "
                f"{wall:.2f} s ({ITEMS / wall:.0f} items/s), overhead {overhead:.1f} ms per item"
            )
    finally:
        server.stop()


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child()
    else:
        run()
