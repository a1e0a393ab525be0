"""A task worker outlives a busy or vanished database, and ``make run`` restarts one that dies.

The worker runs as a process of its own on a copy of the test database in a file, as under
``make run``, while this test holds SQLite's write lock from another connection (what a CLI
import or a dataset delete does): its poll meets "database is locked" again and again. It
must stay alive, and run the queued import once the lock is released.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import InterfaceError, OperationalError, connection

import editor.importing.tasks as import_tasks
from editor import background, filestore
from editor.importing import limits
from editor.importing.tasks import progress_of, start_import_task
from editor.management.commands.task_worker import Worker
from editor.models import ImportTask, Revision, TaskStatus, Transcript
from tests.editor.test_task_worker import (
    DATABASE_TASKS,
    as_if_running_on,
    dead_worker,
    queue_import,
    task_worker,
)

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)

# The worker, with SQLite's wait for a lock cut from 20 s to 0.2 s so that the test sees
# many failed polls in a couple of seconds.
WORKER = textwrap.dedent(
    """
    import django
    from django.db import connections

    django.setup()
    connections.settings["default"]["OPTIONS"]["timeout"] = 0.2
    from django.core.management import call_command

    call_command(
        "task_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval=0.1",
        verbosity=1,
    )
    """
)


@pytest.fixture(autouse=True)
def database_queue(settings):
    settings.TASKS = DATABASE_TASKS


def database_file(tmp_path: Path) -> Path:
    """The test database as it stands, copied to a file (SQLite's backup API)."""
    path = tmp_path / "db.sqlite3"
    connection.ensure_connection()
    with closing(sqlite3.connect(path)) as copy:
        connection.connection.backup(copy)
    return path


def test_the_worker_survives_a_locked_database_and_then_runs_the_queued_import(
    dataset, annotator, tmp_path, settings
):
    if connection.vendor != "sqlite":
        # PostgreSQL has no database-wide write lock to hold; its transient error, a dropped
        # connection, is the test of the poll below.
        pytest.skip("SQLite's database-wide write lock: PostgreSQL has none")
    task = queue_import(dataset, annotator)
    path = database_file(tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the write lock, as a CLI import holds it
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{path}",
        "DJANGO_LOG_LEVEL": "INFO",
        "OCM_UPLOAD_DIR": str(settings.OCM_UPLOAD_DIR),  # the folder the upload was stored in
    }
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        time.sleep(4)  # Django starts, then polls a locked database for a while
        assert worker.poll() is None, worker.communicate()[0]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    output, _ = worker.communicate(timeout=60)

    assert worker.returncode == 0, output
    assert "database is locked" in output
    assert "polling again in" in output
    with closing(sqlite3.connect(path)) as db:
        status, error = db.execute(
            "SELECT status, error FROM editor_importtask WHERE id = ?", [task.pk]
        ).fetchone()
        transcripts = db.execute(
            "SELECT count(*) FROM editor_transcript WHERE dataset_id = ?", [dataset.pk]
        ).fetchone()[0]
    assert (status, error) == (TaskStatus.SUCCEEDED, "")
    assert transcripts == 3


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("database is locked"),
        OperationalError("server closed the connection unexpectedly"),
        InterfaceError("connection already closed"),
    ],
)
def test_a_transient_error_while_claiming_is_waited_out(dataset, annotator, monkeypatch, error):
    task = queue_import(dataset, annotator)
    monkeypatch.setattr(background, "RETRY_DELAYS", (0, 0))
    failures = iter([error, error])
    real_update = type(ImportTask.objects.all()).update

    def flaky_update(queryset, **fields):
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real_update(queryset, **fields)

    monkeypatch.setattr(type(ImportTask.objects.all()), "update", flaky_update)
    assert background.claim(ImportTask, task.pk)
    monkeypatch.undo()
    task.refresh_from_db()
    assert task.status == TaskStatus.RUNNING


def test_a_heartbeat_that_meets_a_dropped_connection_is_skipped_not_fatal(
    dataset, annotator, monkeypatch
):
    task = queue_import(dataset, annotator)
    closed = []
    monkeypatch.setattr(background, "close_broken_connections", lambda: closed.append(True))

    def dropped(*args, **kwargs):
        raise InterfaceError("connection already closed")

    monkeypatch.setattr(type(ImportTask.objects.all()), "update", dropped)
    background.Heartbeat(ImportTask, task.pk).beat()
    assert closed == [True]


# --- make run's supervisor ---------------------------------------------------------------------


def test_the_supervisor_restarts_a_worker_that_exits_and_says_so(tmp_path):
    """scripts/supervise.sh runs a command again whenever it exits, logging each restart;
    stopping the supervisor stops the command."""
    runs = tmp_path / "runs"
    command = f"echo run >> {runs}; exit 3"
    supervisor = subprocess.Popen(
        [str(ROOT / "scripts" / "supervise.sh"), "sh", "-c", command],
        env={**os.environ, "SUPERVISE_RESTART_DELAY": "0.1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (
        not runs.exists() or len(runs.read_text().splitlines()) < 3
    ):
        time.sleep(0.1)
    supervisor.send_signal(signal.SIGTERM)
    output, _ = supervisor.communicate(timeout=20)

    assert len(runs.read_text().splitlines()) >= 3
    assert "exited with status 3; restarting it" in output


# --- a partial import whose worker died tells the truth ------------------------------------------


def queue_lines(dataset, author, count: int, **options) -> ImportTask:
    lines = "".join(
        json.dumps({"id": f"t{n}", "messages": [{"role": "user", "content": f"hello {n}"}]}) + "\n"
        for n in range(count)
    )
    upload = SimpleUploadedFile("batch.jsonl", lines.encode(), content_type="application/jsonl")
    return start_import_task(
        dataset=dataset, author=author, upload=upload, name="batch.jsonl", **options
    )


def dies_after(batches: int, monkeypatch) -> None:
    """The worker dies (SystemExit, as when killed) once ``batches`` batches are committed."""
    real = import_tasks._progress_dict
    seen = []

    def progress(report):
        seen.append(report)
        if len(seen) == batches:
            raise SystemExit("killed")
        return real(report)

    monkeypatch.setattr(import_tasks, "_progress_dict", progress)


def test_a_partial_import_whose_worker_died_reports_what_it_kept(
    dataset, annotator, monkeypatch, settings
):
    """The defect: killed at 49 % of a partial import, the task said "nothing of the last one
    was kept" with no report while 6,000 transcripts were committed."""
    Transcript.objects.create(dataset=dataset, external_id="t1", title="older")  # updated later
    settings.OCM_TASK_MAX_ATTEMPTS = 1
    monkeypatch.setattr(limits, "BATCH_BYTES", 1)  # one item a batch
    task = queue_lines(dataset, annotator, 10, partial=True)
    # Each batch records itself twice (in its transaction, then as progress): the third
    # batch's commit is the sixth call.
    dies_after(6, monkeypatch)

    with pytest.raises(SystemExit):
        import_tasks.run_import_task(task.pk)
    monkeypatch.undo()
    kept = set(Transcript.objects.filter(dataset=dataset).values_list("external_id", flat=True))
    assert kept == {"t0", "t1", "t2"}

    as_if_running_on(task, dead_worker())
    assert background.recover_dead_tasks() == 1

    task.refresh_from_db()
    assert task.status == TaskStatus.FAILED
    assert "Kept: the 3 transcript(s) its committed batches wrote (2 created, 1 updated" in (
        task.error
    )
    assert "at 30 % of the upload" in task.error
    assert "nothing of the last one was kept" not in task.error
    assert task.report["counts"] == {"created": 2, "updated": 1, "skipped": 0, "failed": 0}
    assert [(i["external_id"], i["action"]) for i in task.report["items"]] == [
        ("t1", "updated"),
        ("t0", "created"),
        ("t2", "created"),
    ]
    assert progress_of(task)["percent"] == 30
    assert not filestore.uploads().exists(task.upload_path)


def test_a_partial_import_taken_from_its_worker_commits_no_batch_after_its_account(
    dataset, annotator, monkeypatch
):
    """A worker thought dead, only slow: once its task is taken, its next batch rolls back,
    so the account written by the recovery stays true."""
    monkeypatch.setattr(limits, "BATCH_BYTES", 1)
    task = queue_lines(dataset, annotator, 5, partial=True)
    real = import_tasks._progress_dict
    calls = []

    def taken_after_two_batches(report):
        calls.append(report)
        if len(calls) == 4:  # the second batch is committed and recorded as progress
            ImportTask.objects.filter(pk=task.pk).update(worker="other-host:1")
        return real(report)

    monkeypatch.setattr(import_tasks, "_progress_dict", taken_after_two_batches)

    assert import_tasks.run_import_task(task.pk) is None
    assert set(Transcript.objects.values_list("external_id", flat=True)) == {"t0", "t1"}
    task.refresh_from_db()
    assert task.report[import_tasks.KEPT_SO_FAR]["counts"]["created"] == 2


def test_a_finished_import_tags_its_revisions(dataset, annotator):
    task = queue_lines(dataset, annotator, 2)
    import_tasks.run_import_task(task.pk)
    notes = set(Revision.objects.values_list("note", flat=True))
    assert notes == {f"imported (import {task.pk})"}


def test_the_poll_outlives_a_dropped_postgresql_connection(monkeypatch, caplog):
    """db_worker's loop raised what its poll met unless SQLite said "locked": a dropped
    connection ended the worker. Here the poll is tried again, after a pause, logged."""
    errors = [
        InterfaceError("connection already closed"),
        OperationalError("server closed the connection unexpectedly"),
    ]
    polls = []

    def poll(worker):
        polls.append(True)
        if errors:
            raise errors.pop(0)
        return None

    monkeypatch.setattr(Worker, "next_task", poll)
    monkeypatch.setattr(background, "RETRY_DELAYS", (0, 0))
    closed = []
    monkeypatch.setattr(background, "close_broken_connections", lambda: closed.append(True))
    worker = task_worker(startup_delay=True)

    worker.run()

    assert len(polls) == 3  # two failures, then an empty queue ends the batch
    assert len(closed) == 2
    assert "server closed the connection" in caplog.text
