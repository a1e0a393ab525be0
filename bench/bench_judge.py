"""Judge-run throughput against the local OpenAI-compatible server (tests/support) with a
fixed latency per answer: the app's own overhead per item (issue 33: under 20 ms).

On a throwaway SQLite database and PostgreSQL (``bench.databases``): 100 transcripts judged
by a run (``editor.assist.runs.run_judge_run``) at concurrency 1 and 8, the server answering
each request after 50 ms. The server runs in a process of its own, so that the run's process
holds only the app's work. Two figures per run:

- *overhead*: the run's wall time times its concurrency, divided by the items, less the
  server's latency — what one worker thread spends per item besides waiting for the model.
  At concurrency 8 on a 2-core machine it mostly measures the threads queueing for the GIL
  and the CPUs (8 threads' waits added up), not work;
- *CPU*: the run process's CPU time (every thread) per item: the app's own work per item
  (the prompt, the request through the ``openai`` client, its ModelRequest row, reading the
  answer, the suggestion's INSERT, progress), whatever the concurrency.

Each configuration runs with one ``openai.OpenAI`` per connection kept between requests
(``editor.assist.clients``, the app's way) and, interleaved with it, with a new client per
request (how it was before; ``--fresh`` labels), so both see the same machine load.

    .venv/bin/python -m bench.bench_judge
    .venv/bin/python -m bench.bench_judge --profile   # cProfile of a concurrency-1 run (SQLite)
"""

from __future__ import annotations

import multiprocessing
import sys
import time

ITEMS = 100
LATENCY = 0.05
CONCURRENCIES = (1, 8)
ROUNDS = 2  # each configuration twice, the two client modes alternating


def run() -> None:
    from bench.databases import on_each_database

    on_each_database("bench.bench_judge")


def _serve(latency: float, ready, stop) -> None:
    """The local server, in its own process: answers every judge request "yes"."""
    from tests.support import openai_server
    from tests.support.openai_server import OpenAIServer

    # The test server writes its headers and its body apart: with Nagle's algorithm on, the
    # client's delayed ACK holds each answer ~40 ms, which is the server's cost, not the app's.
    openai_server._Handler.disable_nagle_algorithm = True
    server = OpenAIServer().start()
    server.latency = latency
    server.respond_with(lambda body: {"value": "yes", "rationale": "It answered."})
    ready.send(server.base_url)
    stop.wait()
    server.stop()


def _child(profile: bool = False) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from editor import formats
    from editor.assist import client, judges, runs
    from editor.assist.clients import NO_KEY
    from editor.labels import create_label_schema
    from editor.models import Dataset, JudgeRun, Membership, ModelConnection, Role, Suggestion
    from editor.storage.create import create_transcript
    from tests.support.judging import QUESTIONS

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
    ids = sorted(dataset.transcripts.values_list("pk", flat=True))

    kept_client = client._client

    def fresh_client(connection):  # a new client per request: how it was before
        import openai

        return openai.OpenAI(
            base_url=connection.base_url,
            api_key=client.api_key(connection) or NO_KEY,
            timeout=connection.timeout_seconds,
            max_retries=0,
        )

    context = multiprocessing.get_context("spawn")
    ready, ready_child = context.Pipe()
    stop = context.Event()
    server = context.Process(target=_serve, args=(LATENCY, ready_child, stop), daemon=True)
    server.start()
    base_url = ready.recv()
    runs_made = 0

    def judge_run(concurrency: int, fresh: bool) -> tuple[float, float]:
        nonlocal runs_made
        runs_made += 1
        client._client = fresh_client if fresh else kept_client
        connection = ModelConnection.objects.create(
            dataset=dataset,
            name=f"local-{runs_made}",
            base_url=base_url,
            model="bench-model",
            max_concurrency=concurrency,
        )
        judge = judges.attach_judge(schema, question="helpful", connection=connection, user=user)
        run = JudgeRun.objects.create(
            dataset=dataset,
            judge=judge,
            schema_version=schema.current_version,
            created_by=user,
            transcript_ids=ids,
        )
        started, cpu = time.perf_counter(), time.process_time()
        done = runs.run_judge_run(run.pk)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert done.status == "succeeded", done.error
        assert Suggestion.objects.filter(run=run).count() == ITEMS
        return wall, cpu

    try:
        if profile:
            import cProfile
            import pstats

            judge_run(1, fresh=False)  # warm: the first request builds the client
            # The items are asked on the run's worker threads: each profiled on its own.
            profiles: list[cProfile.Profile] = []
            worker = runs._worker

            def profiled_worker(*args):
                profiler = cProfile.Profile()
                profiles.append(profiler)
                profiler.runcall(worker, *args)

            runs._worker = profiled_worker
            judge_run(1, fresh=False)
            runs._worker = worker
            stats = pstats.Stats(profiles[0])
            for more in profiles[1:]:
                stats.add(more)
            stats.sort_stats("tottime").print_stats(30)
            stats.sort_stats("cumulative").print_stats(60)
            return
        judge_run(1, fresh=False)  # warm-up, not reported: imports, first connections
        for concurrency in CONCURRENCIES:
            figures: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
            for _ in range(ROUNDS):
                for fresh in (True, False):
                    figures[fresh].append(judge_run(concurrency, fresh))
            for fresh in (True, False):
                wall = min(w for w, _ in figures[fresh])
                cpu = min(c for _, c in figures[fresh])
                overhead = (wall * concurrency / ITEMS - LATENCY) * 1000
                label = "a new openai client per request" if fresh else "one client kept"
                print(
                    f"  {ITEMS} items, concurrency {concurrency}, {LATENCY * 1000:.0f} ms "
                    f"latency, {label}: {wall:.2f} s ({ITEMS / wall:.0f} items/s), "
                    f"overhead {overhead:.1f} ms per item, CPU {cpu * 1000 / ITEMS:.1f} ms "
                    "per item",
                    flush=True,
                )
    finally:
        stop.set()
        server.join(timeout=5)


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child()
    elif "--profile" in sys.argv:
        import os
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as folder:
            os.environ["DATABASE_URL"] = f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocm_site.settings")
            _child(profile=True)
    else:
        run()
