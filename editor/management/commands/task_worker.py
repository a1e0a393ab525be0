"""``manage.py task_worker``: django-tasks-db's ``db_worker``, plus what keeps tasks honest.

Beside the worker loop, a thread of its own every few seconds says this worker is alive
(``/healthz`` counts live workers) and recovers the tasks whose worker died (queued again,
then failed: ``editor.background``). It does so once at start too, so restarting a crashed
worker picks its tasks up again. Takes every option of ``db_worker``; its worker id is
``host:pid``, which is how a dead worker on this host is told at once. An idle worker looks
for queued tasks every ``OCM_TASK_POLL_SECONDS`` (0.2 s; ``--interval`` overrides it), and at
once when a task is queued (``editor.db.task_wakeup``).

A transient database error (SQLite locked by a CLI import or a dataset delete, a PostgreSQL
connection dropped: ``background.TRANSIENT_ERRORS``) never ends the worker: its poll, its
watch and its heartbeats log it, close the broken connection and try again, the poll after a
growing pause.

A worker that runs until stopped starts the import helper process with itself
(``editor.importing.preparing``), so that the first large import does not wait for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import threading
import time

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DatabaseError, InterfaceError, close_old_connections, reset_queries, router
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction

from editor import background
from editor.db import task_wakeup
from editor.importing import preparing

logger = logging.getLogger(__name__)


class Worker(db_worker.Worker):
    """``db_worker``'s worker with a loop of its own, for two things its loop does not do:

    - a transient database error while it claims a task (taking the queue's lock, marking
      the task run) would end it: here it is logged and the claim tried again after a
      pause, growing while the errors go on;
    - between two polls it sleeps: here it waits on an ``Alarm`` that queuing a task rings
      (``editor.db.task_wakeup``), so a task starts at once, not at the next poll.
    """

    def run(self) -> None:
        logger.info("Starting worker worker_id=%s queues=%s", self.worker_id, self.queue_names)
        if self.startup_delay and self.interval:
            time.sleep(random.random())  # workers started together poll apart
        # A batch worker ends instead of waiting: nothing to listen for.
        alarm = (
            contextlib.nullcontext()
            if self.batch
            else task_wakeup.Alarm(router.db_for_write(DBTaskResult))
        )
        with alarm:
            failures = 0
            while self.running:
                try:
                    task_result = self.next_task()
                except background.TRANSIENT_ERRORS as error:
                    self._pause_after(error, failures)
                    failures += 1
                    continue
                failures = 0
                if task_result is not None:
                    self.run_task(task_result)
                    if self.max_tasks is not None and self._run_tasks >= self.max_tasks:
                        return
                elif self.batch:
                    return
                elif self.running:
                    alarm.wait(self.interval)

    def next_task(self) -> DBTaskResult | None:
        """The next ready task of this worker's queues, claimed for it; None if there is none."""
        close_old_connections()
        tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
        if not self.process_all_queues:
            tasks = tasks.filter(queue_name__in=self.queue_names)
        if self.excluded_queue_names:
            tasks = tasks.exclude(queue_name__in=self.excluded_queue_names)
        with exclusive_transaction(tasks.db):
            task_result = tasks.get_locked()
            if task_result is not None:
                task_result.claim(self.worker_id)  # so that no other worker runs it
        return task_result

    def _pause_after(self, error: Exception, failures: int) -> None:
        delay = background.RETRY_DELAYS[min(failures, len(background.RETRY_DELAYS) - 1)]
        logger.warning(
            "Task worker %s: the database failed (%s); polling again in %s s",
            self.worker_id,
            error,
            delay,
        )
        background.close_broken_connections()
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
