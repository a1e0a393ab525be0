"""Imports as django-tasks tasks on the database queue: the worker, heartbeats, recovery."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from editor import background, filestore
from editor.background import current, recover_dead_tasks
from editor.importing.tasks import progress_of, start_import_task
from editor.models import ImportTask, TaskStatus, TaskWorker, Transcript

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
LINES = "".join(
    json.dumps({"id": f"t{n}", "messages": [{"role": "user", "content": f"hello {n}"}]}) + "\n"
    for n in range(3)
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def database_queue(settings):
    settings.TASKS = DATABASE_TASKS


@pytest.fixture(autouse=True)
def signal_handlers_restored():
    """The worker runs in this process and installs its own SIGTERM and SIGINT handlers: the
    test run's come back afterwards, so later tests (and processes they fork) do not keep
    them (a JSONL worker pool forked with them never ended)."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def queue_import(dataset, author, **options) -> ImportTask:
    upload = SimpleUploadedFile("batch.jsonl", LINES.encode(), content_type="application/jsonl")
    return start_import_task(
        dataset=dataset, author=author, upload=upload, name="batch.jsonl", **options
    )


def run_worker() -> None:
    call_command(
        "task_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval=0", verbosity=0
    )


def task_worker(**overrides):
    """A task worker of the default queue, built as ``manage.py task_worker`` builds it, for a
    test that runs its loop in this process (``overrides``: what the test is about)."""
    from editor.management.commands.task_worker import Worker

    options = {
        "queue_names": ["default"],
        "interval": 0,
        "batch": True,
        "backend_name": "default",
        "startup_delay": False,
        "max_tasks": None,
        "worker_id": "test",
        "excluded_queue_names": [],
    }
    return Worker(**{**options, **overrides})


def dead_worker() -> str:
    """The worker id of a process of this host that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return f"{socket.gethostname()}:{child.pid}"


def as_if_running_on(task: ImportTask, worker: str, beat_seconds_ago: float = 0) -> ImportTask:
    beat = timezone.now() - timedelta(seconds=beat_seconds_ago)
    ImportTask.objects.filter(pk=task.pk).update(
        status=TaskStatus.RUNNING, worker=worker, heartbeat_at=beat, started_at=beat, attempts=1
    )
    task.refresh_from_db()
    return task


def test_a_queued_import_waits_for_a_worker_and_the_worker_runs_it(dataset, annotator):
    task = queue_import(dataset, annotator)
    task.refresh_from_db()
    assert task.status == TaskStatus.QUEUED
    assert filestore.uploads().exists(task.upload_path)

    run_worker()

    task.refresh_from_db()
    assert task.status == TaskStatus.SUCCEEDED, task.error
    assert task.attempts == 1
    assert task.worker.startswith(socket.gethostname() + ":")
    assert progress_of(task)["percent"] == 100
    assert Transcript.objects.filter(dataset=dataset).count() == 3
    assert not filestore.uploads().exists(task.upload_path)  # the upload is removed once imported


def test_each_task_starts_with_an_empty_query_log(dataset, annotator, settings):
    """With DEBUG (``make run``) Django records every query; a request's start clears the
    record, and so does a task's, so that a worker does not keep the last import's."""
    from django.db import connection

    from editor.importing import tasks

    settings.DEBUG = True
    seen_at_start = []
    run = tasks.run_import_task

    def spied(task_pk):
        seen_at_start.append([q["sql"] for q in connection.queries_log])
        return run(task_pk)

    queue_import(dataset, annotator)
    connection.queries_log.append({"sql": "SELECT 'from before the task'", "time": "0.000"})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tasks, "run_import_task", spied)
        run_worker()

    assert len(seen_at_start) == 1
    assert "SELECT 'from before the task'" not in seen_at_start[0]


def test_the_worker_says_it_is_alive_while_it_runs(dataset, annotator):
    background.record_worker_seen()
    assert background.live_workers(within_seconds=30) == 1
    background.forget_worker()
    assert not TaskWorker.objects.exists()


def test_the_heartbeat_writes_progress_to_the_task_row(dataset, annotator):
    task = as_if_running_on(queue_import(dataset, annotator), background.worker_id())
    heartbeat = background.Heartbeat(ImportTask, task.pk)
    heartbeat.progress = {"items": 7, "counts": {}, "bytes_read": 50, "bytes_total": 200}
    heartbeat.beat()
    task.refresh_from_db()
    assert progress_of(task)["percent"] == 25
    assert progress_of(task)["items"] == 7


def test_a_task_whose_worker_died_is_queued_again_and_then_succeeds(dataset, annotator):
    from django_tasks_db.models import DBTaskResult

    gone = dead_worker()
    task = as_if_running_on(queue_import(dataset, annotator), gone)
    DBTaskResult.objects.update(status="RUNNING", worker_ids=[gone])

    assert recover_dead_tasks() == 1
    first_attempt = DBTaskResult.objects.order_by("enqueued_at").first()
    assert first_attempt.status == "FAILED"
    assert first_attempt.exception_class_path == "editor.background.WorkerDied"
    task.refresh_from_db()
    assert task.status == TaskStatus.QUEUED
    assert "stopped; queued again (attempt 2 of 2)" in task.error
    assert Transcript.objects.filter(dataset=dataset).count() == 0

    run_worker()
    task.refresh_from_db()
    assert task.status == TaskStatus.SUCCEEDED, task.error
    assert task.attempts == 2
    assert task.error == ""
    assert Transcript.objects.filter(dataset=dataset).count() == 3


def test_a_task_that_died_on_its_last_attempt_fails_and_its_upload_is_removed(
    dataset, annotator, settings
):
    settings.OCM_TASK_MAX_ATTEMPTS = 1
    task = as_if_running_on(queue_import(dataset, annotator), dead_worker())

    assert recover_dead_tasks() == 1
    task.refresh_from_db()
    assert task.status == TaskStatus.FAILED
    assert task.finished_at is not None
    assert "stopped after 1 attempt(s)" in task.error
    assert not filestore.uploads().exists(task.upload_path)


def test_a_partial_import_is_not_run_twice(dataset, annotator):
    task = as_if_running_on(queue_import(dataset, annotator, partial=True), dead_worker())
    recover_dead_tasks()
    task.refresh_from_db()
    assert task.status == TaskStatus.FAILED


def test_a_stale_heartbeat_from_another_host_means_dead_and_a_fresh_one_alive(
    dataset, annotator, settings
):
    settings.OCM_TASK_STALE_AFTER = 60
    fresh = as_if_running_on(queue_import(dataset, annotator), "other-host:1", 5)
    assert not background.is_dead(fresh)
    stale = as_if_running_on(queue_import(dataset, annotator), "other-host:1", 120)
    assert background.is_dead(stale)
    alive_here = as_if_running_on(queue_import(dataset, annotator), background.worker_id(), 5)
    assert not background.is_dead(alive_here)


def test_polling_a_task_whose_worker_died_recovers_it(client, dataset, annotator):
    task = as_if_running_on(queue_import(dataset, annotator), dead_worker())
    assert current(task).status == TaskStatus.QUEUED

    as_if_running_on(task, dead_worker())
    client.force_login(annotator)
    html = client.get(f"/imports/{task.pk}/").content.decode()
    assert 'data-status="queued"' in html
    assert "Waiting for a task worker" in html


def test_a_task_taken_from_its_worker_is_not_overwritten_by_it(dataset, annotator):
    task = as_if_running_on(queue_import(dataset, annotator), "other-host:1")
    assert not background.finish(ImportTask, task.pk, TaskStatus.SUCCEEDED)
    task.refresh_from_db()
    assert task.status == TaskStatus.RUNNING


def test_an_import_taken_from_its_worker_midway_rolls_back_instead_of_committing_twice(
    dataset, annotator, monkeypatch
):
    """A worker thought dead (its task queued again) that was only slow: its import must not
    commit beside the new attempt's. Its success is recorded in the import's transaction, and
    finding the task no longer its own rolls everything back."""
    import editor.importing.tasks as import_tasks

    task = queue_import(dataset, annotator)
    real = import_tasks._progress_dict

    def take_over():
        ImportTask.objects.filter(pk=task.pk).update(worker="other-host:1")
        connections.close_all()

    def taken_meanwhile(report):
        # By another worker: on a connection of its own, not in the import's transaction
        # (which, on PostgreSQL, is still open while progress is reported).
        other = threading.Thread(target=take_over)
        other.start()
        other.join()
        return real(report)

    monkeypatch.setattr(import_tasks, "_progress_dict", taken_meanwhile)
    assert import_tasks.run_import_task(task.pk) is None
    task.refresh_from_db()
    assert task.status == TaskStatus.RUNNING and task.worker == "other-host:1"
    assert Transcript.objects.filter(dataset=dataset).count() == 0
    assert filestore.uploads().exists(task.upload_path)  # the attempt that owns it still needs it


def test_an_idle_worker_polls_as_often_as_the_setting_says_unless_told_otherwise(settings):
    """The poll is how long a started import waits for a worker (half of it on average):
    the project's setting, not django-tasks-db's one second; ``--interval`` still wins."""
    from editor.management.commands.task_worker import Command

    settings.OCM_TASK_POLL_SECONDS = 0.3
    parser = Command().create_parser("manage.py", "task_worker")
    assert parser.parse_args([]).interval == 0.3
    assert parser.parse_args(["--interval", "2"]).interval == 2


def test_a_running_task_beats_soon_at_first_then_every_few_seconds(settings):
    """A task of a few seconds reports its progress before it ends (beats at 0.5, 1, 2, 4,
    6 … s with the default two seconds), so a waiting client can tell when it should end."""
    settings.OCM_TASK_HEARTBEAT_SECONDS = 2
    beats, now = [], 0.0
    while now < 7:
        now += background.Heartbeat._next_beat_in(now)
        beats.append(now)
    assert beats == [0.5, 1.0, 2.0, 4.0, 6.0, 8.0]
