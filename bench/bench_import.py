"""An import as a user waits for it (issue 34): the upload POSTed to the API until the task
says ``succeeded``, through a real web server and a real task worker.

Per database (``bench.databases``: a throwaway SQLite file, then PostgreSQL when a server
answers), in a child process: migrate, a curator with an API token and an empty dataset, the
10,000 ten-message chats of ``bench.bench_storage`` as JSONL (16 MB); then gunicorn (one
worker) and one ``manage.py task_worker`` in processes of their own. The upload is POSTed to
``/api/v1/datasets/{slug}/imports`` and ``GET /api/v1/imports/{id}`` polled every
``POLL_SECONDS`` until the task has ended. Printed:

- *POST → succeeded*: what the user waits, and its parts: the upload (the POST's answer), the
  wait for a worker to take the task (the task row's ``started_at`` less its ``created_at``),
  the worker's run (``finished_at`` less ``started_at``: reading, parsing, checking, writing,
  the report), and what is left (the commit becoming visible to the poll, the poll's period);
- the task worker's peak memory (``VmHWM`` of ``/proc/<pid>/status``) and its memory before
  the import, and those of its import helper process (``editor.importing.preparing``), with
  the CPU time of each;
- the same upload pushed by ``editor.client.Client`` once, as a pipeline waits for it (the
  client polls on its own schedule, not every ``POLL_SECONDS``), and how long after the task
  row's ``finished_at`` it saw the end (the rounds' "rest": on PostgreSQL the commit, then the
  poll's lateness and the last GET);
- the floor it is compared with, measured in the same run: ``json.loads`` of every line and
  one ``executemany`` of the same message rows (transcript, index, role, channel, content)
  into a fresh table of a scratch SQLite file; on PostgreSQL also one ``COPY`` of those rows
  into a fresh table of the benchmark's database — after each round, the median of
  ``FLOOR_RUNS`` measurements (their spread printed), and the import's ratio to it.

Each database imports ``ROUNDS`` times (a fresh dataset each time), so one run shows the
spread; ``OCM_BENCH_IMPORT_PYSPY=FOLDER`` records the worker with py-spy during the first
round of each database (``FOLDER/<database>.svg``; py-spy is not a dependency of the
project: install it in the venv to use this).

    .venv/bin/python -m bench.bench_import
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench.databases import on_each_database

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = int(os.environ.get("OCM_BENCH_IMPORT_ROUNDS", "2"))
POLL_SECONDS = 0.05  # each poll costs the web worker CPU the import needs on two cores
IDLE_SECONDS = 3
TIMEOUT_SECONDS = 300
# The floor takes a few tenths of a second, and one measurement of it moved by half within a
# run on a loaded machine: each round's ratio is to the median of several.
FLOOR_RUNS = 3


def run() -> None:
    on_each_database("bench.bench_import")


# --- the stack: a web server and a task worker, in processes of their own ------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack:
    """gunicorn and one task worker over this process's ``DATABASE_URL``."""

    def __init__(self, folder: Path, threads: int = 4):
        self.threads = threads
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "DJANGO_DEBUG": "false",
            "DJANGO_HTTPS_ONLY": "false",
            "DJANGO_SECRET_KEY": "bench-import-" + "k" * 50,
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_LOG_LEVEL": "ERROR",
            "OCM_TASKS": "database",
            "OCM_UPLOAD_DIR": str(folder / "uploads"),
        }
        self.web: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None

    def start(self) -> None:
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        bin_dir = Path(sys.executable).parent
        self.web = subprocess.Popen(
            [
                str(bin_dir / "gunicorn"),
                "ocm_site.wsgi",
                "--workers=1",
                "--worker-class=gthread",
                f"--threads={self.threads}",
                f"--bind=127.0.0.1:{self.port}",
            ],
            cwd=ROOT,
            env=self.env,
            **quiet,
        )
        self.worker = subprocess.Popen(
            [sys.executable, "manage.py", "task_worker", "--no-reload", "--verbosity", "0"],
            cwd=ROOT,
            env=self.env,
            **quiet,
        )

    def web_worker_pid(self) -> int:
        """gunicorn's one worker process (the requests run there, not in the arbiter)."""
        children = Path(f"/proc/{self.web.pid}/task/{self.web.pid}/children").read_text().split()
        return int(children[0])

    def wait_ready(self, timeout: float = 60) -> None:
        """The web server answers and the worker has said it is alive (so that its start-up
        is not counted in the first import)."""
        import httpx

        from editor.models import TaskWorker

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                answered = httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
            except httpx.TransportError:
                answered = False
            answered = answered and bool(
                Path(f"/proc/{self.web.pid}/task/{self.web.pid}/children").read_text().split()
            )
            worker_id = f"{socket.gethostname()}:{self.worker.pid}"
            if answered and TaskWorker.objects.filter(worker_id=worker_id).exists():
                time.sleep(1.5)  # past db_worker's random start-up delay (up to 1 s)
                return
            time.sleep(0.2)
        raise SystemExit("the web server or the task worker did not start in time")

    def stop(self) -> None:
        for process in (self.web, self.worker):
            if process is not None:
                process.terminate()
        for process in (self.web, self.worker):
            if process is None:
                continue
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


@contextmanager
def running_stack(folder: Path, threads: int = 4):
    from django.db import connections

    connections.close_all()
    stack = Stack(folder, threads)
    stack.start()
    try:
        stack.wait_ready()
        yield stack
    finally:
        stack.stop()


def memory_kb(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (the peak) of a process, in kB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


def helper_pids(pid: int) -> list[int]:
    """The import helper process(es) of the task worker ``pid`` (``editor.importing.
    preparing``): its children started by ``multiprocessing``'s spawn."""
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(child) for child in (task / "children").read_text().split()]
    return [
        child for child in children if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used (``/proc/<pid>/stat``): what survives the
    machine's load, where wall time does not."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def seed_curator(slug: str):
    """A curator, an API token and an empty dataset; the token's text."""
    from django.contrib.auth import get_user_model

    from editor.models import ApiToken, Dataset, Membership, Role

    user, _ = get_user_model().objects.get_or_create(username="bench")
    dataset = Dataset.objects.create(name=slug, slug=slug)
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    return ApiToken.issue(user)[1]


def post_import(client, slug: str, path: Path, partial: bool = False) -> int:
    """POST the upload on a connection of its own: the client's pooled one, idle while the
    floor was measured, may be closed by gunicorn (its keep-alive is 2 s) just as it is
    reused, and the POST then fails with no answer."""
    import httpx

    fresh = httpx.Client(base_url=client.base_url, headers=client.headers, timeout=client.timeout)
    with fresh, path.open("rb") as upload:
        response = fresh.post(
            f"/api/v1/datasets/{slug}/imports",
            files={"file": (path.name, upload, "application/x-ndjson")},
            data={"partial": "true"} if partial else {},
        )
    if response.status_code != 202:
        raise SystemExit(f"the import was refused: {response.status_code} {response.text[:300]}")
    return response.json()["id"]


def wait_until_ended(client, task_id: int) -> tuple[dict, float]:
    """The ended task, and how long its last GET took (it carries the whole report)."""
    import httpx

    deadline = time.monotonic() + TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        asked = time.perf_counter()
        try:
            task = client.get(f"/api/v1/imports/{task_id}").json()
        except httpx.RemoteProtocolError:  # a pooled connection closed as it was reused
            continue
        if task["status"] in ("succeeded", "failed"):
            return task, time.perf_counter() - asked
        time.sleep(POLL_SECONDS)
    raise SystemExit(f"import {task_id} did not end in {TIMEOUT_SECONDS} s")


# --- the floor: json.loads and one executemany of the same rows ----------------------------


def message_rows(lines: list[str]) -> list[tuple]:
    """The rows a loader would store, parsed outside any timing: (transcript, index, role,
    channel, content)."""
    from editor import formats

    rows = []
    for n, line in enumerate(lines):
        record = json.loads(line)
        parsed = formats.parse(record["text"], spec=record["spec"])
        for index, message in enumerate(parsed.transcript.messages):
            rows.append((n, index, message.role, message.channel or "", message.content))
    return rows


def sqlite_floor(lines: list[str], rows: list[tuple], folder: Path) -> float:
    path = folder / f"floor-{time.monotonic_ns()}.sqlite3"
    started = time.perf_counter()
    for line in lines:
        json.loads(line)
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE message (transcript INTEGER, idx INTEGER, role TEXT, channel TEXT,"
        " content TEXT, PRIMARY KEY (transcript, idx))"
    )
    with connection:
        connection.executemany("INSERT INTO message VALUES (?, ?, ?, ?, ?)", rows)
    connection.close()
    took = time.perf_counter() - started
    path.unlink()
    return took


def postgres_floor(lines: list[str], rows: list[tuple]) -> float:
    from django.db import connection

    started = time.perf_counter()
    for line in lines:
        json.loads(line)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE bench_floor (transcript integer, idx integer, role text,"
            " channel text, content text, PRIMARY KEY (transcript, idx))"
        )
        with cursor.cursor.copy(
            "COPY bench_floor (transcript, idx, role, channel, content) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row(row)
    took = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_floor")
    return took


# --- the benchmark ---------------------------------------------------------------------------


def _child() -> None:
    import django

    django.setup()
    import httpx
    from django.core.management import call_command
    from django.db import connection

    from bench.bench_storage import _write_jsonl
    from editor import formats
    from editor.models import ImportTask

    call_command("migrate", verbosity=0)
    database = "SQLite" if connection.vendor == "sqlite" else "PostgreSQL"
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = folder / "bench.jsonl"
        _write_jsonl(source, formats)
        lines = source.read_text(encoding="utf-8").splitlines()
        rows = message_rows(lines)
        size = source.stat().st_size
        token = seed_curator("warm-up")
        pyspy_folder = os.environ.get("OCM_BENCH_IMPORT_PYSPY")
        with running_stack(folder) as stack:
            client = httpx.Client(
                base_url=stack.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
            )
            idle = memory_kb(stack.worker.pid)["VmRSS"]
            cpu_before = cpu_seconds(stack.worker.pid)
            time.sleep(IDLE_SECONDS)
            idle_cpu = (cpu_seconds(stack.worker.pid) - cpu_before) / IDLE_SECONDS
            # Started with the worker, in the background (``preparing.warm_up``).
            helper_idle = sum(
                memory_kb(helper)["VmRSS"] for helper in helper_pids(stack.worker.pid)
            )
            print(
                f"  idle task worker: {idle_cpu * 100:.1f} % of a core (its poll),"
                f" {idle / 1024:.0f} MB; its import helper {helper_idle / 1024:.0f} MB",
                flush=True,
            )
            for round_number in range(ROUNDS):
                slug = f"bench-{round_number}"
                seed_curator(slug)
                profiler = None
                if pyspy_folder and round_number == 0:
                    profiler = _start_pyspy(stack.worker.pid, Path(pyspy_folder), database)
                worker_cpu = cpu_seconds(stack.worker.pid)
                helpers = helper_pids(stack.worker.pid)
                helper_cpu = sum(cpu_seconds(helper) for helper in helpers)
                web_cpu = cpu_seconds(stack.web_worker_pid())
                started = time.perf_counter()
                task_id = post_import(client, slug, source)
                posted = time.perf_counter() - started
                task, last_get = wait_until_ended(client, task_id)
                waited = time.perf_counter() - started
                worker_cpu = cpu_seconds(stack.worker.pid) - worker_cpu
                helpers = helper_pids(stack.worker.pid)
                helper_cpu = sum(cpu_seconds(helper) for helper in helpers) - helper_cpu
                web_cpu = cpu_seconds(stack.web_worker_pid()) - web_cpu
                if profiler is not None:
                    profiler.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                    profiler.wait()
                if task["status"] != "succeeded":
                    raise SystemExit(f"import {task_id} {task['status']}: {task.get('error')}")
                row = ImportTask.objects.get(pk=task_id)
                pickup = (row.started_at - row.created_at).total_seconds()
                ran = (row.finished_at - row.started_at).total_seconds()
                floors = [
                    sqlite_floor(lines, rows, folder)
                    if database == "SQLite"
                    else postgres_floor(lines, rows)
                    for _ in range(FLOOR_RUNS)
                ]
                floor = statistics.median(floors)
                sqlite_floor_too = (
                    floor
                    if database == "SQLite"
                    else statistics.median(
                        sqlite_floor(lines, rows, folder) for _ in range(FLOOR_RUNS)
                    )
                )
                memory = memory_kb(stack.worker.pid)
                helper_peak = sum(memory_kb(helper)["VmHWM"] for helper in helpers)
                print(
                    f"  round {round_number + 1}: {task['report']['counts']['created']:,}"
                    f" transcripts ({size / 1e6:.1f} MB)  POST -> succeeded {waited:5.2f} s"
                    f"  [upload {posted:.2f} s, worker pick-up {pickup:.2f} s, worker run"
                    f" {ran:.2f} s, rest {waited - posted - pickup - ran:.2f} s of which the"
                    f" last GET {last_get:.2f} s]",
                    flush=True,
                )
                print(
                    f"           CPU: task worker {worker_cpu:.2f} s, its import helper"
                    f" {helper_cpu:.2f} s, web worker {web_cpu:.2f} s",
                    flush=True,
                )
                floor_label = (
                    "json.loads + executemany" if database == "SQLite" else "json.loads + COPY"
                )
                print(
                    f"           floor ({floor_label}, median of {FLOOR_RUNS}:"
                    f" {min(floors):.2f}-{max(floors):.2f} s) {floor:.2f} s"
                    f" -> {waited / floor:.1f}x;"
                    f" SQLite json.loads + executemany {sqlite_floor_too:.2f} s"
                    f" -> {waited / sqlite_floor_too:.1f}x;  worker memory idle"
                    f" {idle / 1024:.0f} MB, peak {memory['VmHWM'] / 1024:.0f} MB; its import"
                    f" helper's peak {helper_peak / 1024:.0f} MB",
                    flush=True,
                )
            pipeline_waits(stack.url, token, source)
            client.close()
    connection.close()


def pipeline_waits(url: str, token: str, source: Path) -> None:
    """The same upload as a pipeline waits for it: ``Client.push`` (``editor.client``), which
    polls as it does (``PollSchedule``: backing off, and around the expected end once the
    progress tells), against the rounds above, polled every ``POLL_SECONDS``."""
    from django.utils import timezone

    from editor.client import Client
    from editor.models import ImportTask

    slug = "bench-pipeline"
    seed_curator(slug)
    with Client(url, token) as pipeline:
        started = time.perf_counter()
        task = pipeline.push(slug, source, progress=False)
        waited = time.perf_counter() - started
        seen_at = timezone.now()
    finished_at = ImportTask.objects.get(pk=task.id).finished_at
    print(
        f"  as a pipeline waits (Client.push): {task.counts['created']:,} transcripts,"
        f" POST -> succeeded seen {waited:.2f} s, {(seen_at - finished_at).total_seconds():.2f} s"
        " after the worker's finished_at (the rounds above: their 'rest')",
        flush=True,
    )


def _start_pyspy(pid: int, folder: Path, database: str) -> subprocess.Popen | None:
    pyspy = shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if pyspy is None:
        print("  (py-spy is not installed in the venv: no profile)")
        return None
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [
            pyspy,
            "record",
            "--pid",
            str(pid),
            "--rate",
            "200",
            "--nonblocking",
            "--output",
            str(folder / f"{database}.svg"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child()
    else:
        run()
