"""Storage throughput: import 10,000 transcripts of 10 messages from JSONL, export them back.

Runs once per database, each in a child process with its own DATABASE_URL and a throwaway
database: a temporary SQLite file, and a ``bench_storage_<pid>_<random>`` database created
(and dropped, whatever happens) on the PostgreSQL server of DATABASE_URL, or 127.0.0.1:5432;
PostgreSQL is skipped, saying so, when no server answers. Prints
transcripts/s and MB/s for the import, the export in the transcripts' own spec (stored
text) and the export converted to openai-messages.

    .venv/bin/python -m bench.bench_storage          # or `make bench` (every benchmark)
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRANSCRIPTS = 10_000
MESSAGES = 10
BENCH_DATABASE_PREFIX = "bench_storage"
LOCAL_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"


def run() -> None:
    with tempfile.TemporaryDirectory() as folder:
        _in_child("SQLite", f"sqlite:///{Path(folder) / 'bench.sqlite3'}")
    server = _postgres_server()
    if server is None:
        print("PostgreSQL: skipped, no server reachable (set DATABASE_URL to a postgres:// URL)")
        return
    with _throwaway_postgres(server) as url:
        _in_child("PostgreSQL", url)


def _in_child(label: str, database_url: str) -> None:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_DEBUG": "false"}
    env.setdefault("DJANGO_SETTINGS_MODULE", "ocm_site.settings")
    print(f"{label}:", flush=True)
    subprocess.run([sys.executable, "-m", "bench.bench_storage", "--child"], env=env, check=True)


def _postgres_server() -> str | None:
    try:
        import psycopg
    except ImportError:
        return None
    url = os.environ.get("DATABASE_URL", "")
    server = url if url.startswith(("postgres://", "postgresql://")) else LOCAL_POSTGRES
    try:
        psycopg.connect(_with_database(server, "postgres"), connect_timeout=3).close()
    except psycopg.Error:
        return None
    return server


def _with_database(url: str, name: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + name


class _throwaway_postgres:
    """A database of its own for this run: a fixed name would collide with another engineer's
    run (or a crashed one's leftovers) on a shared server."""

    def __init__(self, server: str):
        self.name = f"{BENCH_DATABASE_PREFIX}_{os.getpid()}_{secrets.token_hex(4)}"
        self.admin_url = _with_database(server, "postgres")
        self.url = _with_database(server, self.name)

    def _execute(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            connection.execute(sql)

    def __enter__(self) -> str:
        self._execute(f'CREATE DATABASE "{self.name}"')
        return self.url

    def __exit__(self, *exc_info) -> None:
        # The child has exited, so no session of ours is left; FORCE ends any other one
        # (PostgreSQL 13+) instead of failing with "being accessed by other users".
        self._execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


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

        for spec, label in ((None, "own spec"), ("openai-messages", "to openai-messages")):
            target = Path(folder) / "export.jsonl"
            started = time.perf_counter()
            with target.open("w", encoding="utf-8") as out:
                export = export_dataset(dataset, spec=spec)
                out.writelines(export)
            _figure(f"export ({label})", export.count, target.stat().st_size, started)
    connections.close_all()  # before the parent drops the database


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


def _figure(label: str, count: int, size: int, started: float) -> None:
    seconds = time.perf_counter() - started
    print(
        f"  {label:34} {count:6} transcripts  {seconds:6.2f} s  "
        f"{count / seconds:8.0f} transcripts/s  {size / seconds / 1e6:6.2f} MB/s",
        flush=True,
    )


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child()
    else:
        run()
