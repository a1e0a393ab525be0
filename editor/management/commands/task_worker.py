"""``manage.py task_worker``: django-tasks-db's ``db_worker``, plus what keeps tasks honest.

Beside the worker loop, a thread of its own every few seconds says this worker is alive
(``/healthz`` counts live workers) and recovers the tasks whose worker died (queued again,
then failed: ``editor.background``). It does so once at start too, so restarting a crashed
worker picks its tasks up again. Takes every option of ``db_worker``; its worker id is
``host:pid``, which is how a dead worker on this host is told at once. An idle worker looks
for queued tasks every ``OCM_TASK_POLL_SECONDS`` (0.2 s; ``--interval`` overrides it).

A transient database error (SQLite locked by a CLI import or a dataset delete, a PostgreSQL
connection dropped: ``background.TRANSIENT_ERRORS``) never ends the worker: its poll, its
watch and its heartbeats log it, close the broken connection and try again, the poll after a
growing pause.

A worker that runs until stopped starts the import helper process with itself
(``editor.importing.preparing``), so that the first large import does not wait for it.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DatabaseError, InterfaceError, reset_queries
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker

from editor import background
from editor.importing import preparing

logger = logging.getLogger(__name__)


class Worker(db_worker.Worker):
    """``db_worker``'s loop, which a transient database error in its poll (taking the queue's
    lock, marking a task run) would end: here it is logged and the loop starts again after a
    pause, growing while the errors go on."""

    def run(self) -> None:
        failures = 0
        while True:
            started = time.monotonic()
            try:
                return super().run()
            except background.TRANSIENT_ERRORS as error:
                if time.monotonic() - started > background.RETRY_DELAYS[-1]:
                    failures = 0  # it had worked for a while: a new outage
                delay = background.RETRY_DELAYS[min(failures, len(background.RETRY_DELAYS) - 1)]
                failures += 1
                logger.warning(
                    "Task worker %s: the database failed (%s); polling again in %s s",
                    self.worker_id,
                    error,
                    delay,
                )
                background.close_broken_connections()
                self.startup_delay = False
                time.sleep(delay)

    def run_task(self, db_task_result) -> None:
        """Each task starts with an empty query log: with ``DEBUG`` (``make run``) Django records
        every query, and only a request's start clears the record, which no task has."""
        reset_queries()
        super().run_task(db_task_result)


class Command(db_worker.Command):
    help = (
        "Run a task worker: django-tasks-db's db_worker, plus worker heartbeats, the recovery "
        "of tasks whose worker died, and a poll that outlives transient database errors."
    )

    def add_arguments(self, parser):
        super().add_arguments(parser)
        # db_worker polls every second: the wait before an import starts. The project's
        # setting (OCM_TASK_POLL_SECONDS) is the default; --interval still overrides it.
        parser.set_defaults(interval=settings.OCM_TASK_POLL_SECONDS)

    def handle(self, *args, **options):
        runs_tasks = not options["reload"] or os.environ.get(DJANGO_AUTORELOAD_ENV) == "true"
        if not runs_tasks:  # the autoreloader's parent process: its child runs the tasks
            return super().handle(*args, **options)
        _look_after_tasks()
        if not options["batch"]:  # a worker that runs until stopped: large imports to come
            preparing.warm_up()
        stop = threading.Event()
        watch = threading.Thread(target=_keep_looking, args=(stop,), name="task-watch")
        watch.daemon = True
        watch.start()
        try:
            self._run_worker(**options)
        finally:
            stop.set()
            watch.join()
            _forget_worker()
            preparing.stop()

    def _run_worker(
        self,
        *,
        verbosity: int,
        queue_name: str,
        interval: float,
        batch: bool,
        backend_name: str,
        startup_delay: bool,
        reload: bool,
        max_tasks: int | None,
        exclude_queues: str,
        **_,
    ) -> None:
        """What ``db_worker`` does, with this module's ``Worker`` and id."""
        self.configure_logging(verbosity)
        queue_names = queue_name.split(",")
        excluded = exclude_queues.split(",") if exclude_queues else []
        if excluded and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = Worker(
            queue_names=queue_names,
            interval=interval,
            batch=batch,
            backend_name=backend_name,
            startup_delay=startup_delay,
            max_tasks=max_tasks,
            worker_id=background.worker_id(),
            excluded_queue_names=excluded,
        )
        worker.configure_signals()
        if reload and not batch:
            run_with_reloader(worker.run)
        else:
            worker.run()


def _look_after_tasks() -> None:
    try:
        background.record_worker_seen()
        recovered = background.recover_dead_tasks()
        if recovered:
            logger.warning("Recovered %d task(s) whose worker had died", recovered)
    except (DatabaseError, InterfaceError) as error:
        # SQLite while an import holds the write lock, or a database restarting: next time.
        logger.info("Task watch skipped: %s", error)
        background.close_broken_connections()


def _keep_looking(stop: threading.Event) -> None:
    try:
        while not stop.wait(settings.OCM_TASK_HEARTBEAT_SECONDS):
            _look_after_tasks()
    finally:
        background.close_broken_connections()


def _forget_worker() -> None:
    try:
        background.forget_worker()
    except background.TRANSIENT_ERRORS as error:  # it is forgotten once its row goes stale
        logger.info("Could not remove this worker's row: %s", error)
