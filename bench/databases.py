"""Run a benchmark module once per database, each in a child process with its own
DATABASE_URL and a throwaway database: a temporary SQLite file, and a
``bench_<pid>_<random>`` database created (and dropped, whatever happens) on the PostgreSQL
server of DATABASE_URL, or 127.0.0.1:5432; PostgreSQL is skipped, saying so, when no server
answers. The child is ``python -m MODULE --child``."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DATABASE_PREFIX = "bench"
LOCAL_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"


def on_each_database(module: str) -> None:
    _collect_static()
    with tempfile.TemporaryDirectory() as folder:
        _in_child(module, "SQLite", f"sqlite:///{Path(folder) / 'bench.sqlite3'}")
    server = _postgres_server()
    if server is None:
        print("PostgreSQL: skipped, no server reachable (set DATABASE_URL to a postgres:// URL)")
        return
    with _throwaway_postgres(server) as url:
        _in_child(module, "PostgreSQL", url)


def _in_child(module: str, label: str, database_url: str) -> None:
    print(f"{label}:", flush=True)
    subprocess.run([sys.executable, "-m", module, "--child"], env=_env(database_url), check=True)


def _env(database_url: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_DEBUG": "false"}
    env.setdefault("DJANGO_SETTINGS_MODULE", "ocm_site.settings")
    return env


def _collect_static() -> None:
    """Pages render as in production (``DJANGO_DEBUG=false``), whose static files come from
    the collected manifest: a fresh clone has none yet."""
    manage = Path(__file__).resolve().parent.parent / "manage.py"
    command = [sys.executable, str(manage), "collectstatic", "--noinput", "--verbosity", "0"]
    subprocess.run(command, env=_env("sqlite://:memory:"), check=True)


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
