"""How long another user's save waits while a big import or a dataset delete writes (issue 34:
"imports commit in batches that keep any other save waiting under a second").

Per database (``bench.databases``), through a real web server and task worker
(``bench.bench_import.Stack``, gunicorn with ``WEB_THREADS`` threads): a client apart from
the writer saves one message through the API (``PATCH /api/v1/transcripts/{id}/messages/1``,
with the version of its transcript's last answer), pauses ``SAVE_EVERY`` seconds and saves
again, each time on the next of ``ROTATION`` small transcripts; each save is timed from
request to answer:

- *idle*: nothing else writes (the save's own time on this machine, for comparison);
- *import*: while the task worker imports 10,000 ten-message chats (``bench.bench_storage``'s
  JSONL) POSTed to the import API, until the task has succeeded: all or nothing (one
  transaction for the whole write), then partial (a transaction per batch);
- *delete*: while ``DELETE /api/v1/datasets/{slug}`` deletes a dataset of 11,000 ten-message
  transcripts (``storage.purge``: batches of 500, each its own transaction).

Printed per phase: the saves made, their p50, p95 and max, how many took over a second, and
any that failed.

    .venv/bin/python -m bench.bench_contention
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.databases import on_each_database

SAVE_EVERY = 0.05
ROTATION = 100  # transcripts saved in turn
WEB_THREADS = 8
IDLE_SECONDS = 5
DELETED_TRANSCRIPTS = 11_000


def run() -> None:
    on_each_database("bench.bench_contention")


class Saver:
    """A user saving one message after another: a save, ``SAVE_EVERY`` seconds' pause, the
    next save (each on the next of ``ROTATION`` transcripts), each timed from request to
    answer. A save held by a writer delays the next: the max says how long one waited, the
    count over a second how many did.

    (Measured first with saves started every 50 ms whatever the earlier ones were doing: on
    this loaded two-core machine the web worker could not keep up with 20 saves a second
    beside an import, and the queue of saves grew without bound — that measured the machine's
    capacity, not how long a writer holds the others.)"""

    def __init__(self, url: str, token: str, versions: dict[int, int]):
        import httpx

        self.client = httpx.Client(
            base_url=url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        self.versions = versions
        self.order = sorted(versions)
        self.times: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        count = 0
        while not self._stop.is_set():
            pk = self.order[count % len(self.order)]
            count += 1
            self._save(pk, count)
            self._stop.wait(SAVE_EVERY)

    def _save(self, pk: int, count: int) -> None:
        body = {"content": f"Edit number {count}.", "version": self.versions[pk]}
        started = time.perf_counter()
        response = self.client.patch(f"/api/v1/transcripts/{pk}/messages/1", json=body)
        took = time.perf_counter() - started
        if response.status_code == 200:
            self.versions[pk] = response.json()["version"]
            self.times.append(took)
        else:
            self.failures.append(f"{response.status_code} {response.text[:120]}")

    def __enter__(self) -> Saver:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        self.client.close()

    def report(self, label: str, seconds: float) -> None:
        times = sorted(self.times)
        if not times:
            print(f"  {label:34} no save answered; failures: {self.failures[:3]}", flush=True)
            return
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        over = sum(t > 1 for t in times)
        print(
            f"  {label:34} {len(times):4} saves in {seconds:5.1f} s   p50"
            f" {statistics.median(times) * 1000:6.0f} ms   p95 {p95 * 1000:6.0f} ms   max"
            f" {times[-1] * 1000:6.0f} ms   over 1 s {over}   failed {len(self.failures)}"
            + (f" ({self.failures[0]})" if self.failures else ""),
            flush=True,
        )


def _child() -> None:
    import django

    django.setup()
    import httpx
    from django.core.management import call_command
    from django.db import connection

    from bench.bench_editor import long_transcript
    from bench.bench_import import post_import, running_stack, seed_curator, wait_until_ended
    from bench.bench_storage import _write_jsonl
    from editor import formats
    from editor.models import Dataset, Membership, Role
    from editor.storage.content import TranscriptContent
    from editor.storage.create import NewTranscript, create_transcripts

    call_command("migrate", verbosity=0)
    token = seed_curator("edits")
    edits = Dataset.objects.get(slug="edits")
    user = edits.memberships.get().user
    content = TranscriptContent.from_text(long_transcript(formats, 10, 180), "openchatml-2.2")
    edited = create_transcripts(
        edits, [NewTranscript(content, title=f"e{n}") for n in range(ROTATION)], author=user
    )
    versions = {transcript.pk: transcript.version for transcript in edited}
    seed_curator("imported")
    seed_curator("imported-partly")
    doomed = Dataset.objects.create(name="Doomed", slug="doomed")
    Membership.objects.create(user=user, dataset=doomed, role=Role.CURATOR)
    for start in range(0, DELETED_TRANSCRIPTS, 1000):
        create_transcripts(
            doomed,
            [NewTranscript(content, title=f"t{n}") for n in range(start, start + 1000)],
            author=user,
        )

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = folder / "bench.jsonl"
        _write_jsonl(source, formats)
        with running_stack(folder, threads=WEB_THREADS) as stack:
            client = httpx.Client(
                base_url=stack.url, headers={"Authorization": f"Bearer {token}"}, timeout=300
            )

            with Saver(stack.url, token, versions) as saver:
                time.sleep(IDLE_SECONDS)
            saver.report("idle (nothing else writes)", IDLE_SECONDS)

            for partial, slug in ((False, "imported"), (True, "imported-partly")):
                with Saver(stack.url, token, versions) as saver:
                    started = time.perf_counter()
                    task_id = post_import(client, slug, source, partial=partial)
                    task, _ = wait_until_ended(client, task_id)
                    took = time.perf_counter() - started
                if task["status"] != "succeeded":
                    raise SystemExit(f"the import {task['status']}: {task.get('error')}")
                how = "partial" if partial else "all-or-nothing"
                saver.report(f"during a 10,000 import ({how})", took)

            with Saver(stack.url, token, versions) as saver:
                time.sleep(0.5)  # the saver is going before the delete starts
                started = time.perf_counter()
                response = client.delete("/api/v1/datasets/doomed")
                took = time.perf_counter() - started
            if response.status_code != 204:
                raise SystemExit(f"the delete answered {response.status_code}: {response.text}")
            saver.report(f"during a {DELETED_TRANSCRIPTS:,}-transcript delete", took + 0.5)
            client.close()
    connection.close()


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child()
    else:
        run()
