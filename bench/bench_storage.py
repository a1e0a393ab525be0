"""Storage throughput: import 10,000 transcripts of 10 messages from JSONL, export them back.

Runs once per database, each in a child process with a throwaway database
(``bench.databases``). Prints
transcripts/s and MB/s for the import, the database's size after it, the export in the
transcripts' own spec (stored text) and the export converted to openai-messages, then the
time and the space that 1,000 edits take.

    .venv/bin/python -m bench.bench_storage          # or `make bench` (every benchmark)
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench.databases import on_each_database
from bench.report import main

TRANSCRIPTS = 10_000
MESSAGES = 10
EDITS = 1_000


def run() -> None:
    on_each_database("bench.bench_storage")


def _child() -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from editor import formats
    from editor.exporting import export_dataset
    from editor.importing import import_transcripts
    from editor.models import Dataset

    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "bench.jsonl"
        _write_jsonl(source, formats)
        size = source.stat().st_size
        dataset = Dataset.objects.create(name="Bench", slug="bench")

        started = time.perf_counter()
        report = import_transcripts(source, dataset=dataset)
        _figure("import (JSONL, openchatml-2.2)", report.counts["created"], size, started)
        _footprint(connections["default"], size)

        for spec, label in ((None, "own spec"), ("openai-messages", "to openai-messages")):
            target = Path(folder) / "export.jsonl"
            started = time.perf_counter()
            with target.open("w", encoding="utf-8") as out:
                export = export_dataset(dataset, spec=spec)
                out.writelines(export)
            _figure(f"export ({label})", export.count, target.stat().st_size, started)
        _edits(dataset, connections["default"])
    connections.close_all()  # before the parent drops the database


def _edits(dataset, connection) -> None:
    """``EDITS`` transcripts edited once each (one word of one message): the time, and what
    each edit adds to the database (the revision keeping the state before it, the rows
    changed)."""
    from editor.models import Transcript
    from editor.storage.save import save_transcript

    transcripts = list(Transcript.objects.filter(dataset=dataset).order_by("pk")[:EDITS])
    before = _stored_size(connection, used=True)
    started = time.perf_counter()
    for transcript in transcripts:
        edited = transcript.source_text.replace("tides", "waves", 1)
        save_transcript(transcript, expected_version=transcript.version, author=None, text=edited)
    seconds = time.perf_counter() - started
    added = _stored_size(connection, used=True) - before
    print(
        f"  {f'{EDITS:,} edits (a word each)':34} {seconds:6.2f} s  {EDITS / seconds:8.0f} edits/s"
        f"  stored size +{added / 1e6:.2f} MB ({added / EDITS:,.0f} bytes an edit)",
        flush=True,
    )


def _write_jsonl(path: Path, formats) -> None:
    with path.open("w", encoding="utf-8") as out:
        for n in range(TRANSCRIPTS):
            messages = [formats.Message(role="system", content="You are a careful assistant.")]
            for turn in range((MESSAGES - 1) // 2 + 1):
                messages.append(
                    formats.Message(role="user", content=f"Question {n}.{turn}: how do tides work?")
                )
                messages.append(
                    formats.Message(
                        role="assistant",
                        channel="final",
                        content="The moon's gravity pulls the oceans into two bulges. " * 4,
                    )
                )
            text = formats.serialize(
                formats.Transcript(spec="openchatml-2.2", messages=messages[:MESSAGES])
            )
            line = {"id": f"t{n}", "title": f"Bench {n}", "spec": "openchatml-2.2", "text": text}
            out.write(json.dumps(line) + "\n")


def _footprint(connection, jsonl_size: int) -> None:
    """The database's size after the import, against the JSONL imported (the issue's target
    is 1.5 times)."""
    stored = _stored_size(connection)
    print(
        f"  {'stored size':34} {stored / 1e6:8.1f} MB for {jsonl_size / 1e6:.1f} MB of JSONL "
        f"({stored / jsonl_size:.1f} times as much)",
        flush=True,
    )


def _stored_size(connection, used: bool = False) -> int:
    """SQLite's pages (free ones included, unless ``used``: edits fill the pages an import
    left free before they grow the file), or PostgreSQL's tables with their TOAST and
    indexes. Not PostgreSQL's whole database: its system catalogs are 7.5 MB in an empty
    one, the same whatever is stored."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = "page_count - freelist_count" if used else "page_count"
            cursor.execute(
                f"SELECT ({pages}) * page_size"
                " FROM pragma_page_count, pragma_freelist_count, pragma_page_size"
            )
        else:
            cursor.execute(
                "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')"
            )
        return cursor.fetchone()[0]


def _figure(label: str, count: int, size: int, started: float) -> None:
    seconds = time.perf_counter() - started
    print(
        f"  {label:34} {count:6} transcripts  {seconds:6.2f} s  "
        f"{count / seconds:8.0f} transcripts/s  {size / seconds / 1e6:6.2f} MB/s",
        flush=True,
    )


if __name__ == "__main__":
    main(run, _child)
