"""Backup and restore as docs/deploy.md says: `pg_dump -Fc`, then `pg_restore` into an empty
database, where every transcript, revision, message, label, queue and login is found again
exactly, and an old revision can still be restored.

It runs in the PostgreSQL pass of the suite, on two scratch databases of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SOURCE_DB, RESTORED_DB = "ocm_backup_source", "ocm_backup_restored"

pytestmark = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql",
    reason="runs in the PostgreSQL pass of the suite (pg_dump and pg_restore need it)",
)


def _server() -> dict:
    db = settings.DATABASES["default"]
    return {
        "host": db.get("HOST") or "127.0.0.1",
        "port": str(db.get("PORT") or 5432),
        "user": db.get("USER") or "postgres",
        "password": db.get("PASSWORD") or "",
    }


def _url(name: str) -> str:
    s = _server()
    password = f":{s['password']}" if s["password"] else ""
    return f"postgres://{s['user']}{password}@{s['host']}:{s['port']}/{name}"


def _admin(*statements: str) -> None:
    with psycopg.connect(_url("postgres"), autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def _manage(database: str, *args: str, stdin: Path | None = None) -> str:
    env = {**os.environ, "DATABASE_URL": _url(database), "DJANGO_DEBUG": "true"}
    with open(stdin) if stdin else open(os.devnull) as given:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            stdin=given,
            capture_output=True,
            text=True,
            check=True,
        ).stdout


def _pg(tool: str, *args: str) -> None:
    s = _server()
    env = {**os.environ, "PGPASSWORD": s["password"]}
    common = ["-h", s["host"], "-p", s["port"], "-U", s["user"]]
    subprocess.run([tool, *common, *args], env=env, check=True, capture_output=True)


@pytest.fixture
def databases():
    for tool in ("pg_dump", "pg_restore"):
        assert shutil.which(tool), f"{tool} is missing: install the PostgreSQL client (15)"
    drop = [f"DROP DATABASE IF EXISTS {name} WITH (FORCE)" for name in (SOURCE_DB, RESTORED_DB)]
    _admin(*drop, f"CREATE DATABASE {SOURCE_DB}", f"CREATE DATABASE {RESTORED_DB}")
    yield
    _admin(*drop)


def test_a_dump_restored_into_an_empty_database_holds_everything(databases, tmp_path):
    _manage(SOURCE_DB, "migrate", "--noinput", "--verbosity=0")
    _manage(SOURCE_DB, "shell", stdin=HERE / "seed_for_backup.py")
    before = json.loads(_manage(SOURCE_DB, "shell", stdin=HERE / "digest.py").splitlines()[-1])
    assert len(before["transcripts"]) == 12 and len(before["revisions"]) > 12

    dump = tmp_path / "ocm.dump"
    _pg("pg_dump", "--format=custom", "--no-owner", f"--file={dump}", SOURCE_DB)
    _pg("pg_restore", "--no-owner", "--exit-on-error", f"--dbname={RESTORED_DB}", str(dump))

    after = json.loads(_manage(RESTORED_DB, "shell", stdin=HERE / "digest.py").splitlines()[-1])
    for table in before:
        assert after[table] == before[table], f"{table} differs after the restore"
    # The restored database is at the code's migrations, and keeps working: an old revision
    # of the most edited transcript is restored as a new revision.
    _manage(RESTORED_DB, "migrate", "--check")
    restored = _manage(
        RESTORED_DB,
        "shell",
        "-c",
        "from editor.models import Transcript;"
        "from editor.revisions import restore_revision;"
        "t = Transcript.objects.get(title='T3');"
        "r = t.revisions.get(number=1);"
        "u = restore_revision(r, expected_version=t.version, author=None, note='restored');"
        "print(u.version, 'Answer 3<' in u.source_text)",
    )
    assert restored.splitlines()[-1].split() == ["5", "True"]
