"""The editor's server time on long transcripts (issue 8's targets).

* live validation of a one-message draft in a 100 KB, 500-message transcript (p50, p95;
  target: under 50 ms);
* saving a one-message edit in a 2,000-message transcript (p50, p95);
* the transcript page (first page of messages, annotator rendering) of a 2,000-message
  transcript (p50, p95; target: under 300 ms);
* the save and the page again with the same messages as an openai-messages JSON document
  (the JSON formats' own read and write paths).

Runs in a child process on a throwaway SQLite database and on PostgreSQL when a server
answers (``bench.databases``).

    .venv/bin/python -m bench.bench_editor          # or `make bench` (every benchmark)
"""

from __future__ import annotations

import json

from bench.databases import on_each_database
from bench.report import get_page, main, timed


def run() -> None:
    on_each_database("bench.bench_editor")


def long_transcript(formats, messages: int, body: int, spec: str = "openchatml-2.2") -> str:
    """An OpenChatML 2.2 text (or a document of ``spec``) of ``messages`` messages in turns of
    user, analysis, a call, its reply and a final answer, each body about ``body`` characters."""
    filler = ("The tide tables for the harbour list two highs a day. " * 20)[:body]
    out = [formats.Message(role="system", content="You are a careful assistant.")]
    turn = 0
    while len(out) < messages:
        call_id = f"c{turn}"
        out += [
            formats.Message(role="user", content=f"Question {turn}: {filler}"),
            formats.Message(role="assistant", channel="analysis", content=filler),
            formats.Message(
                role="assistant",
                channel="commentary",
                recipient="functions.lookup",
                call_id=call_id,
                constrain="json",
                content=json.dumps({"query": f"tides {turn}"}),
                end=formats.CALL,
            ),
            formats.Message(
                role="tool",
                name="functions.lookup",
                call_id=call_id,
                channel="commentary",
                recipient="assistant",
                content=json.dumps({"ok": True, "content": filler[:60]}),
            ),
            formats.Message(role="assistant", channel="final", content=f"Answer {turn}: {filler}"),
        ]
        turn += 1
    header = {"version": "2.2"} if spec == "openchatml-2.2" else {}
    return formats.serialize(formats.Transcript(spec=spec, header=header, messages=out[:messages]))


def _child() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from editor import editing, formats
    from editor.models import Dataset, Membership, Role
    from editor.storage.create import create_transcript

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench")
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)

    text = long_transcript(formats, 500, 180)
    medium = create_transcript(dataset, text=text, spec="openchatml-2.2", author=user)
    label = f"live validation, {len(text) // 1000} KB / 500 messages"
    timed(
        label,
        lambda n: editing.validate_message_draft(medium, 250, {"content": f"Draft {n}."}),
    )

    client = Client()
    client.force_login(user)
    for spec, named in (("openchatml-2.2", ""), ("openai-messages", " (openai-messages)")):
        long = create_transcript(
            dataset, text=long_transcript(formats, 2000, 180, spec), spec=spec, author=user
        )

        def save(n: int, long=long) -> None:
            version = long.revisions.order_by("-number").values_list("number", flat=True)[0]
            editing.edit_message(
                long, 1900, {"content": f"Edit {n}."}, expected_version=version, author=user
            )

        timed(f"save one message of 2,000{named}", save)
        timed(
            f"transcript page, 2,000 messages{named}",
            lambda n, long=long: get_page(client, f"/transcripts/{long.pk}/?audience=annotator"),
        )
    connections.close_all()  # before the parent drops the database


if __name__ == "__main__":
    main(run, _child)
