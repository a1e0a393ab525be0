"""`make load`: a bounded load test of the production-like stack, then checks that nothing was lost.

It starts what `make serve` starts (gunicorn with WEB_CONCURRENCY workers, one task worker,
PostgreSQL, Redis) on a free loopback port, over a scratch PostgreSQL database it creates
and drops, and runs two phases with a lean asyncio HTTP client (``bench.lean_http``):

1. **annotators**: ``--users`` (50) simulated annotators for ``--seconds`` (60), each in a
   loop with a think time between actions: open a transcript, live-validate a draft of one
   message, save it (with the version it read; a 409 is a conflict another annotator won,
   counted, then read again), and every few rounds claim a queue item, open it and submit it.
2. **reads**: ``--readers`` (8) clients with no think time fetching
   ``GET /api/v1/transcripts/{id}`` of a 50-message transcript for ``--read-seconds`` (20):
   the targets of issue 11 (p50 <= 10 ms, p95 <= 30 ms; a one-message save p95 <= 100 ms).

It reports requests/s and p50/p95/p99 per kind of request, and afterwards checks from the
database: no 5xx, one revision per successful save (no lost edit), and each edited message
holding what the save with the highest version wrote (no stale overwrite). The exit code is
1 when a check fails or a target is missed, saying which.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bench import lean_http

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SCRATCH_DB = "ocm_load"
MESSAGES_PER_TRANSCRIPT = 50
TARGETS = {  # kind: (percentile, milliseconds)
    "read-only GET transcript": [(50, 10.0), (95, 30.0)],
    "save message": [(95, 100.0)],
}


# --- the stack ------------------------------------------------------------------------------


def _server_url() -> str:
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    if not url.startswith("postgres"):
        sys.exit("make load needs PostgreSQL: set DATABASE_URL to a postgres:// URL")
    return url.rsplit("/", 1)[0]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack:
    def __init__(self, folder: Path, web_workers: int):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = _server_url()
        self.env = {
            **os.environ,
            "DATABASE_URL": f"{self.server}/{SCRATCH_DB}",
            "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
            "DJANGO_DEBUG": "false",
            "DJANGO_HTTPS_ONLY": "false",
            "DJANGO_SECRET_KEY": "load-test-" + "k" * 50,
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_STATIC_ROOT": str(folder / "static"),
            "DJANGO_LOG_LEVEL": "ERROR",
            "DJANGO_CONN_MAX_AGE": os.environ.get("DJANGO_CONN_MAX_AGE", "60"),
            "OCM_TASKS": "database",
            "OCM_UPLOAD_DIR": str(folder / "uploads"),
        }
        self.web_workers = web_workers
        self.processes: list[subprocess.Popen] = []

    def manage(self, *args: str) -> str:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def python(self, *args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "bench.load", *args],
            cwd=ROOT,
            env={**self.env, "DJANGO_SETTINGS_MODULE": "ocm_site.settings"},
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def recreate_database(self) -> None:
        import psycopg

        with psycopg.connect(f"{self.server}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {SCRATCH_DB} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {SCRATCH_DB}")

    def drop_database(self) -> None:
        import psycopg

        with psycopg.connect(f"{self.server}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {SCRATCH_DB} WITH (FORCE)")

    def start(self) -> None:
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.processes.append(
            subprocess.Popen(
                [
                    str(BIN / "gunicorn"),
                    "ocm_site.wsgi",
                    f"--workers={self.web_workers}",
                    f"--worker-class={os.environ.get('GUNICORN_WORKER_CLASS', 'gthread')}",
                    f"--threads={os.environ.get('GUNICORN_THREADS', '4')}",
                    f"--bind=127.0.0.1:{self.port}",
                    "--reuse-port",  # as scripts/serve.sh: connections spread over the workers
                ],
                cwd=ROOT,
                env=self.env,
                **quiet,
            )
        )
        self.processes.append(
            subprocess.Popen(
                [sys.executable, "manage.py", "task_worker", "--no-reload"],
                cwd=ROOT,
                env=self.env,
                **quiet,
            )
        )

    def wait_healthy(self, timeout: float = 60) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        raise SystemExit("the stack did not become healthy in time")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


# --- fixture data and the checks afterwards (run inside Django, in a child process) ----------


def _django():
    import django

    django.setup()


def seed(users: int, editing: int, queued: int) -> dict:
    """A dataset, ``users`` annotators with tokens, transcripts to edit and a queue."""
    _django()
    from django.contrib.auth import get_user_model

    from editor import formats, queues
    from editor.models import ApiToken, Dataset, Membership, Role
    from editor.storage.create import create_transcript

    User = get_user_model()
    curator = User.objects.create_user("load-curator")
    dataset = Dataset.objects.create(name="Load", slug="load")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    tokens = []
    for n in range(users):
        user = User.objects.create_user(f"annotator-{n}")
        Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)
        tokens.append(ApiToken.issue(user)[1])

    def transcript(title: str):
        messages = [formats.Message(role="system", content="You are a helpful assistant.")]
        for turn in range((MESSAGES_PER_TRANSCRIPT - 1) // 2):
            messages.append(formats.Message(role="user", content=f"Question {turn} of {title}?"))
            messages.append(
                formats.Message(
                    role="assistant",
                    channel="final",
                    content=f"Answer {turn}: " + "lorem ipsum dolor sit amet " * 8,
                )
            )
        messages.append(formats.Message(role="user", content="Thanks."))
        text = formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=messages))
        return create_transcript(
            dataset, author=curator, text=text, spec="openchatml-2.2", title=title
        )

    edited = [transcript(f"edit-{n}").pk for n in range(editing)]
    in_queue = [transcript(f"queue-{n}") for n in range(queued)]
    queue = queues.create_queue(dataset, in_queue, name="Load queue", author=curator)
    return {"tokens": tokens, "edited": edited, "queue": queue.pk}


def verify(saves_file: str, edited: list[int]) -> dict:
    """No lost edit, no stale overwrite: what the database holds against what was saved."""
    _django()
    from editor.models import Revision, Transcript

    saves = json.loads(Path(saves_file).read_text())
    by_transcript = defaultdict(list)
    for save in saves:
        by_transcript[save["transcript"]].append(save)
    problems = []
    for pk in edited:
        transcript = Transcript.objects.get(pk=pk)
        made = by_transcript.get(pk, [])
        revisions = Revision.objects.filter(transcript=transcript).count()
        if revisions != 1 + len(made):  # the first revision, then one per successful save
            problems.append(f"transcript {pk}: {revisions} revisions for {len(made)} saves")
        versions = sorted(save["version"] for save in made)
        if len(set(versions)) != len(versions):
            problems.append(f"transcript {pk}: two saves answered with the same version")
        messages = transcript.stored_messages()
        last_per_index = {}
        for save in sorted(made, key=lambda s: s["version"]):
            last_per_index[save["index"]] = save["content"]
        for index, content in last_per_index.items():
            if messages[index].content != content:
                problems.append(f"transcript {pk} message {index}: a stale save overwrote it")
    return {"saves": len(saves), "problems": problems}


# --- the load -------------------------------------------------------------------------------


@dataclass
class Results:
    latencies: dict = field(default_factory=lambda: defaultdict(list))
    statuses: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    saves: list = field(default_factory=list)
    conflicts: int = 0

    def record(self, kind: str, started: float, status: int) -> None:
        self.latencies[kind].append((time.perf_counter() - started) * 1000)
        self.statuses[kind][status] += 1

    def server_errors(self) -> int:
        return sum(n for by in self.statuses.values() for s, n in by.items() if s >= 500)


async def _call(client, results: Results, kind: str, method: str, url: str, **kwargs):
    started = time.perf_counter()
    response = await client.request(method, url, **kwargs)
    results.record(kind, started, response.status_code)
    return response


async def annotator(base, token, edited, queue, seconds, results: Results, seed_: int):
    rng = random.Random(seed_)
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + seconds
    rounds = 0
    async with lean_http.Client(base, headers) as client:
        while time.monotonic() < deadline:
            rounds += 1
            pk = rng.choice(edited)
            got = await _call(client, results, "open transcript", "GET", f"/transcripts/{pk}")
            if got.status_code != 200:
                continue
            version = got.json()["version"]
            index = rng.randrange(1, MESSAGES_PER_TRANSCRIPT)
            content = f"edited by {seed_} in round {rounds} at {time.time():.6f}"
            await asyncio.sleep(rng.uniform(0.2, 0.6))  # typing
            await _call(
                client,
                results,
                "live-validate draft",
                "POST",
                f"/transcripts/{pk}/drafts/validate",
                json={"index": index, "fields": {"content": content}},
            )
            await asyncio.sleep(rng.uniform(0.2, 0.6))
            saved = await _call(
                client,
                results,
                "save message",
                "PATCH",
                f"/transcripts/{pk}/messages/{index}",
                json={"version": version, "content": content},
            )
            if saved.status_code == 200:
                results.saves.append(
                    {
                        "transcript": pk,
                        "index": index,
                        "version": saved.json()["version"],
                        "content": content,
                    }
                )
            elif saved.status_code == 409:
                results.conflicts += 1
            if rounds % 3 == 0:
                claimed = await _call(client, results, "claim", "POST", f"/queues/{queue}/claim")
                if claimed.status_code == 200:
                    assignment = claimed.json()
                    await _call(
                        client,
                        results,
                        "open transcript",
                        "GET",
                        f"/transcripts/{assignment['transcript']}",
                    )
                    await asyncio.sleep(rng.uniform(0.2, 0.6))
                    await _call(
                        client,
                        results,
                        "submit",
                        "POST",
                        f"/assignments/{assignment['id']}/submit",
                    )
            await asyncio.sleep(rng.uniform(0.3, 0.9))  # reading the next one


async def reader(base, token, pk, seconds, results: Results):
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + seconds
    async with lean_http.Client(base, headers) as client:
        while time.monotonic() < deadline:
            await _call(client, results, "read-only GET transcript", "GET", f"/transcripts/{pk}")


def _percentile(values: list[float], p: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


def report(results: Results, seconds: float) -> list[str]:
    lines = [
        f"{'request':28} {'count':>7} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}"
        "  statuses"
    ]
    for kind, values in results.latencies.items():
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(results.statuses[kind].items()))
        lines.append(
            f"{kind:28} {len(values):7d} {len(values) / seconds:7.1f} "
            f"{_percentile(values, 50):8.1f} {_percentile(values, 95):8.1f} "
            f"{_percentile(values, 99):8.1f}  {statuses}"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--read-seconds", type=float, default=20)
    parser.add_argument(
        "--web-workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", 2))
    )
    parser.add_argument("--seed", nargs=3, type=int, metavar=("USERS", "EDITED", "QUEUED"))
    parser.add_argument("--verify", nargs=2, metavar=("SAVES_FILE", "EDITED_JSON"))
    args = parser.parse_args()
    if args.seed:
        print(json.dumps(seed(*args.seed)))
        return 0
    if args.verify:
        print(json.dumps(verify(args.verify[0], json.loads(args.verify[1]))))
        return 0

    with tempfile.TemporaryDirectory() as folder:
        stack = Stack(Path(folder), args.web_workers)
        stack.recreate_database()
        try:
            stack.manage("migrate", "--noinput", "--verbosity=0")
            stack.manage("collectstatic", "--noinput", "--verbosity=0")
            fixture = json.loads(stack.python("--seed", str(args.users), "40", "400"))
            stack.start()
            stack.wait_healthy()
            return _run(stack, fixture, args, Path(folder))
        finally:
            stack.stop()
            stack.drop_database()


def _run(stack: Stack, fixture: dict, args, folder: Path) -> int:
    base = f"{stack.url}/api/v1"
    edited, tokens = fixture["edited"], fixture["tokens"]
    print(
        f"Phase 1: {args.users} annotators for {args.seconds:.0f} s against {stack.url} "
        f"({args.web_workers} gunicorn workers, PostgreSQL, Redis)",
        flush=True,
    )
    mixed = Results()

    async def phase_one():
        await asyncio.gather(
            *(
                annotator(base, tokens[n], edited, fixture["queue"], args.seconds, mixed, n)
                for n in range(args.users)
            )
        )

    asyncio.run(phase_one())
    for line in report(mixed, args.seconds):
        print("  " + line)
    print(f"  conflicts (409, another annotator saved first): {mixed.conflicts}")

    print(f"Phase 2: {args.readers} clients reading one 50-message transcript, no think time")
    reads = Results()

    async def phase_two():
        await asyncio.gather(
            *(
                reader(base, tokens[n % len(tokens)], edited[0], args.read_seconds, reads)
                for n in range(args.readers)
            )
        )

    asyncio.run(phase_two())
    for line in report(reads, args.read_seconds):
        print("  " + line)

    saves_file = folder / "saves.json"
    saves_file.write_text(json.dumps(mixed.saves))
    checked = json.loads(stack.python("--verify", str(saves_file), json.dumps(edited)))
    failures = list(checked["problems"])
    errors = mixed.server_errors() + reads.server_errors()
    if errors:
        failures.append(f"{errors} responses were 5xx")
    all_latencies = {**mixed.latencies, **reads.latencies}
    for kind, targets in TARGETS.items():
        for p, limit in targets:
            got = _percentile(all_latencies[kind], p)
            if got > limit:
                failures.append(f"{kind}: p{p} {got:.1f} ms > {limit:.0f} ms")
    print(
        f"Checks: {checked['saves']} successful saves, each one revision; "
        f"{errors} server errors; load average {os.getloadavg()[0]:.2f}"
    )
    for failure in failures:
        print(f"FAILED: {failure}")
    if not failures:
        print("All checks passed and every target met.")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
