"""Creating a dataset version of 100,000 transcripts (issue 35: cheap, it refers to revisions
and copies no text): ``versions.create_version`` timed from the call to its return, the size
of the row it writes, then comparing two such versions, and the first 1,000 lines of the
version's export after a tenth of the transcripts moved on (read from their revisions).

Runs in a child process on a throwaway SQLite database and on PostgreSQL when a server
answers (``bench.databases``). ``OCM_BENCH_VERSION_TRANSCRIPTS`` sets how many (100000).

    .venv/bin/python -m bench.bench_versions
"""

from __future__ import annotations

import os
import time
from itertools import islice

from bench.databases import on_each_database
from bench.report import main

TRANSCRIPTS = int(os.environ.get("OCM_BENCH_VERSION_TRANSCRIPTS", "100000"))
MOVED = TRANSCRIPTS // 10  # edited after the first version


def run() -> None:
    on_each_database("bench.bench_versions")


def _child() -> None:
    import django

    django.setup()
    from django.db import connection, connections

    from bench.fixtures import add_transcripts, bench_dataset, same_content
    from editor import versions
    from editor.models import DatasetVersion, Transcript
    from editor.storage.save import save_transcript

    user, dataset = bench_dataset()
    add_transcripts(dataset, user, TRANSCRIPTS, same_content(6, 60))
    print(f"  ({TRANSCRIPTS:,} transcripts of 6 messages)", flush=True)

    started = time.perf_counter()
    first = versions.create_version(dataset, "v1", author=user)
    took = time.perf_counter() - started
    with connection.cursor() as cursor:
        table = DatasetVersion._meta.db_table
        if connection.vendor == "postgresql":
            cursor.execute(f"SELECT pg_column_size(members) FROM {table} WHERE id = %s", [first.pk])
        else:
            cursor.execute(f"SELECT length(members) FROM {table} WHERE id = %s", [first.pk])
        stored = cursor.fetchone()[0]
    print(
        f"  create a version of {first.transcript_count:,} transcripts: {took:6.2f} s"
        f"   (members stored in {stored / 1024:.0f} KiB)",
        flush=True,
    )

    # A tenth of the transcripts move on (a title change: one revision each), then v2.
    for transcript in Transcript.objects.filter(dataset=dataset).order_by("pk")[:MOVED]:
        save_transcript(
            transcript, expected_version=transcript.version, author=user, title="moved on"
        )
    second = versions.create_version(dataset, "v2", author=user)
    started = time.perf_counter()
    diff = versions.diff_versions(
        DatasetVersion.objects.get(pk=first.pk), DatasetVersion.objects.get(pk=second.pk)
    )
    took = time.perf_counter() - started
    print(
        f"  compare two versions: {took:6.2f} s   ({len(diff.changed):,} changed, "
        "members read back included)",
        flush=True,
    )
    started = time.perf_counter()
    lines = list(islice(iter(versions.export_version(first)), 1000))
    took = time.perf_counter() - started
    print(
        f"  first {len(lines):,} lines of v1's export ({min(MOVED, len(lines)):,} read from "
        f"revisions): {took:6.2f} s",
        flush=True,
    )
    connections.close_all()


if __name__ == "__main__":
    main(run, _child)
