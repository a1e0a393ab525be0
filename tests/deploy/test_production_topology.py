"""The production topology, for real: gunicorn with two web workers, one task worker,
PostgreSQL and Redis, each its own process, as `make serve` and docs/deploy.md set them up.

An import through the API is polled to completion through both web workers; then the task
worker is killed (SIGKILL) in the middle of a second import, which is found dead, queued
again with nothing of it written, and succeeds once a new worker runs.

It runs in the PostgreSQL pass of the suite (DATABASE_URL=postgres://…), in a scratch
database of its own, and needs Redis on REDIS_URL (default 127.0.0.1:6379).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
import redis
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SCRATCH_DB = "ocm_topology_scratch"

pytestmark = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql",
    reason="runs in the PostgreSQL pass of the suite (the production topology needs it)",
)


def _server_url() -> str:
    """The PostgreSQL server of the suite's own database, without a database name."""
    db = settings.DATABASES["default"]
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _recreate(server: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {SCRATCH_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {SCRATCH_DB}")


def _drop(server: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {SCRATCH_DB} WITH (FORCE)")


class Stack:
    """The processes of the topology and how to talk to them."""

    def __init__(self, tmp: Path):
        server = _server_url()
        self.server = server
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}/api/v1"
        self.log = tmp / "gunicorn-access.log"
        self.env = {
            **os.environ,
            "DATABASE_URL": f"{server}/{SCRATCH_DB}",
            "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
            "DJANGO_DEBUG": "false",
            "DJANGO_HTTPS_ONLY": "false",
            "DJANGO_SECRET_KEY": "topology-test-" + "k" * 40,
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_STATIC_ROOT": str(tmp / "static"),
            "OCM_TASKS": "database",
            "OCM_UPLOAD_DIR": str(tmp / "uploads"),
            "OCM_TASK_HEARTBEAT_SECONDS": "0.2",
            "PYTHONUNBUFFERED": "1",
        }
        self.processes: list[subprocess.Popen] = []
        self.worker: subprocess.Popen | None = None

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def start_web(self) -> None:
        web = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "ocm_site.wsgi",
                "--config=python:ocm_site.gunicorn_conf",
                "--workers=2",
                f"--bind=127.0.0.1:{self.port}",
                "--reuse-port",  # a socket per worker, as scripts/serve.sh
                f"--access-logfile={self.log}",
                "--access-logformat=%(p)s %(m)s %(U)s %(s)s",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.processes.append(web)

    def start_worker(self) -> None:
        self.worker = subprocess.Popen(
            [sys.executable, "manage.py", "task_worker", "--no-reload", "--interval=0.2"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.processes.append(self.worker)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture
def stack(tmp_path):
    redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")).ping()
    stack = Stack(tmp_path)
    _recreate(stack.server)
    try:
        stack.manage("migrate", "--noinput", "--verbosity=0")
        stack.manage("collectstatic", "--noinput", "--verbosity=0")
        stack.manage(
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model as g;"
            "from editor.models import Dataset, Membership, Role;"
            "u = g().objects.create_user('curator');"
            "d = Dataset.objects.create(name='Topology', slug='topology');"
            "Membership.objects.create(user=u, dataset=d, role=Role.CURATOR)",
        )
        stack.token = stack.manage("api_token", "curator").strip()
        stack.start_web()
        stack.start_worker()
        yield stack
    finally:
        stack.stop()
        _drop(stack.server)


def _jsonl(count: int, tag: str) -> bytes:
    lines = []
    for n in range(count):
        messages = [
            {"role": "system", "content": "You answer briefly."},
            {"role": "user", "content": f"{tag} question {n}?"},
            {"role": "assistant", "content": f"{tag} answer {n}."},
        ]
        lines.append(json.dumps({"id": f"{tag}-{n}", "messages": messages}))
    return ("\n".join(lines) + "\n").encode()


def _wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_imports_survive_a_killed_task_worker_behind_two_web_workers(stack):
    import httpx

    headers = {"Authorization": f"Bearer {stack.token}"}
    client = httpx.Client(base_url=stack.base, headers=headers, timeout=30)

    def healthy():
        try:
            return client.get(stack.base.removesuffix("/api/v1") + "/healthz").status_code == 200
        except httpx.TransportError:
            return False

    _wait_until(healthy, 60, "the stack to be healthy")
    # gunicorn's own name and version are not sent (ocm_site/gunicorn_conf.py).
    assert client.get("/datasets").headers["Server"] == "ocm"

    def start(content: bytes, name: str) -> int:
        response = client.post(
            "/datasets/topology/imports", files={"file": (name, content, "application/jsonl")}
        )
        assert response.status_code == 202, response.text
        return response.json()["id"]

    def poll(pk: int) -> dict:
        response = client.get(f"/imports/{pk}")
        assert response.status_code == 200, response.text
        return response.json()

    def count() -> int:
        return client.get("/datasets/topology/transcripts", params={"limit": 1}).json()["count"]

    # 1. An import polled to completion, through both web workers.
    first = start(_jsonl(300, "first"), "first.jsonl")
    with ThreadPoolExecutor(4) as pool:
        done = _wait_until(
            lambda: all(t["status"] == "succeeded" for t in pool.map(poll, [first] * 4)),
            120,
            "the first import",
        )
    assert done
    assert count() == 300
    polled_by = set(re.findall(r"^<(\d+)> GET /api/v1/imports/", stack.log.read_text(), re.M))
    assert len(polled_by) == 2, f"polls were answered by {polled_by}, not both web workers"

    # 2. The task worker is killed midway through a second import.
    second = start(_jsonl(20000, "second"), "second.jsonl")
    _wait_until(lambda: poll(second)["status"] == "running", 60, "the second import to start")
    time.sleep(0.5)
    os.kill(stack.worker.pid, signal.SIGKILL)
    stack.worker.wait()
    state = poll(second)  # the web worker finds its worker gone (same host): queued again
    assert state["status"] == "queued", state
    assert "stopped; queued again" in state["error"]
    assert count() == 300  # nothing of the killed attempt was written

    # 3. A new worker picks it up again, and it succeeds.
    stack.start_worker()
    final = _wait_until(
        lambda: (s := poll(second))["status"] in {"succeeded", "failed"} and s, 240, "the retry"
    )
    assert final["status"] == "succeeded", final
    assert final["attempts"] == 2
    assert count() == 20300
