"""An idle task worker is woken when a task is queued (``editor.db.task_wakeup``): on
PostgreSQL by NOTIFY, on SQLite through a Unix socket; a ring it could not hear leaves it
polling, never stopped."""

from __future__ import annotations

import socket
import threading

import pytest
from django.db import connection, connections

from editor.db import task_wakeup
from editor.models import ImportTask, TaskStatus
from tests.editor.test_task_worker import DATABASE_TASKS, queue_import, task_worker

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def database_queue(settings):
    settings.TASKS = DATABASE_TASKS


@pytest.fixture
def alarm():
    with task_wakeup.Alarm("default") as alarm:
        assert alarm.wait(0) is False  # listening from here on
        yield alarm


def test_an_announced_task_wakes_the_waiting_worker(alarm):
    task_wakeup.announce("default")
    assert alarm.wait(30) is True


def test_rings_heard_while_busy_wake_it_once(alarm):
    for _ in range(3):
        task_wakeup.announce("default")
    assert alarm.wait(30) is True
    assert alarm.wait(0) is False


def test_queuing_a_task_rings_once_it_is_committed(alarm, dataset, annotator):
    queue_import(dataset, annotator)
    assert alarm.wait(30) is True


def test_a_worker_waiting_a_minute_between_polls_takes_a_queued_import_at_once(
    dataset, annotator, monkeypatch
):
    """Without the ring the worker would look again in 60 s; the test gives it 30."""
    idle = threading.Event()
    wait = task_wakeup.Alarm.wait

    def waiting(alarm, timeout):
        idle.set()
        return wait(alarm, timeout)

    monkeypatch.setattr(task_wakeup.Alarm, "wait", waiting)
    worker = task_worker(interval=60, batch=False, max_tasks=1, worker_id="test:wakeup")

    def run() -> None:
        try:
            worker.run()
        finally:
            connections.close_all()  # this thread's own

    running = threading.Thread(target=run)
    running.start()
    try:
        assert idle.wait(30), "the worker never went idle"
        task = queue_import(dataset, annotator)
        running.join(30)
        assert not running.is_alive(), "the queued import waited for the next poll"
    finally:
        worker.running = False
        task_wakeup.announce("default")
        running.join(90)
    assert ImportTask.objects.get(pk=task.pk).status == TaskStatus.SUCCEEDED


def test_a_worker_killed_before_removing_its_socket_does_not_stop_the_ring(alarm):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's workers wait on sockets; PostgreSQL's on LISTEN")
    folder = task_wakeup.socket_folder(connection.settings_dict["NAME"])
    stale = folder / "999999999-0.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as dead:
        dead.bind(str(stale))  # closed without unlinking, as when its process is killed

    task_wakeup.announce("default")

    assert not stale.exists()
    assert alarm.wait(30) is True


def test_an_alarm_that_cannot_listen_sleeps_instead(monkeypatch, tmp_path):
    if connection.vendor == "sqlite":
        not_a_folder = tmp_path / "file"
        not_a_folder.write_text("")
        monkeypatch.setattr(task_wakeup.tempfile, "gettempdir", lambda: str(not_a_folder))
    else:
        monkeypatch.setattr(task_wakeup, "CHANNEL", "not a channel name")
    with task_wakeup.Alarm("default") as alarm:
        assert alarm.wait(0.01) is False
        task_wakeup.announce("default")
        assert alarm.wait(0.01) is False


def test_a_dropped_listening_connection_is_opened_again(alarm, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's LISTEN connection; SQLite's workers wait on sockets")
    alarm._listener.connection.close()  # as when the server restarts
    assert alarm.wait(0.01) is False
    task_wakeup.announce("default")
    assert alarm.wait(0.01) is False  # not listening for a while: polling only
    monkeypatch.setattr(alarm, "_next_try", 0.0)  # that while has passed
    assert alarm.wait(0) is False  # listening again
    task_wakeup.announce("default")
    assert alarm.wait(30) is True


def test_a_socket_path_too_long_leaves_the_worker_polling_and_nothing_behind(monkeypatch, tmp_path):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's workers wait on sockets; PostgreSQL's on LISTEN")
    deep = tmp_path / ("d" * 100)  # past the 107 bytes a socket's path may take
    deep.mkdir()
    monkeypatch.setattr(task_wakeup.tempfile, "gettempdir", lambda: str(deep))
    with task_wakeup.Alarm("default") as alarm:
        assert alarm.wait(0.01) is False
    assert list(deep.iterdir()) == []
