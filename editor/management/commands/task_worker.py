"""``manage.py task_worker``: django-tasks-db's ``db_worker``, plus what keeps tasks honest.

Beside the worker loop, a thread of its own every few seconds says this worker is alive
(``/healthz`` counts live workers) and recovers the tasks whose worker died (queued again,
then failed: ``editor.background``). It does so once at start too, so restarting a crashed
worker picks its tasks up again. Takes every option of ``db_worker``; its worker id is
``host:pid``, which is how a dead worker on this host is told at once.
"""

from __future__ import annotations

import logging
import os
import threading

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV
from django_tasks_db.management.commands import db_worker

from editor import background

logger = logging.getLogger(__name__)


class Command(db_worker.Command):
    help = (
        "Run a task worker: django-tasks-db's db_worker, plus worker heartbeats and the "
        "recovery of tasks whose worker died."
    )

    def handle(self, *args, **options):
        runs_tasks = not options["reload"] or os.environ.get(DJANGO_AUTORELOAD_ENV) == "true"
        if not runs_tasks:  # the autoreloader's parent process: its child runs the tasks
            return super().handle(*args, **options)
        options["worker_id"] = background.worker_id()
        _look_after_tasks()
        stop = threading.Event()
        watch = threading.Thread(target=_keep_looking, args=(stop,), name="task-watch")
        watch.daemon = True
        watch.start()
        try:
            super().handle(*args, **options)
        finally:
            stop.set()
            watch.join()
            background.forget_worker()


def _look_after_tasks() -> None:
    try:
        background.record_worker_seen()
        recovered = background.recover_dead_tasks()
        if recovered:
            logger.warning("Recovered %d task(s) whose worker had died", recovered)
    except DatabaseError as error:
        # SQLite while an import holds the write lock, or a database restarting: next time.
        logger.info("Task watch skipped: %s", error)


def _keep_looking(stop: threading.Event) -> None:
    try:
        while not stop.wait(settings.OCM_TASK_HEARTBEAT_SECONDS):
            _look_after_tasks()
    finally:
        connections.close_all()
