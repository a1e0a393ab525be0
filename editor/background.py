"""Background tasks that outlive their worker: heartbeats, and recovery of the dead ones.

django-tasks runs the tasks (each defined in a ``tasks.py`` beside the code it runs:
``editor.importing.tasks``, ``editor.exporting.tasks``, ``editor.bulk.tasks``); what it does not do is notice that the worker
running one died (killed, out of memory, a machine restarted): its row would say "running"
forever. So each running task has a heartbeat, written by a thread of the worker with a
database connection of its own, and any process that looks at a task (a task worker every
few seconds, a web worker answering a poll) can tell a dead one:

- its worker process ran on this host and is gone (known at once), or
- its heartbeat is older than ``settings.OCM_TASK_STALE_AFTER`` seconds (any host).

A dead task is queued again while it has attempts left (``OCM_TASK_MAX_ATTEMPTS``), then
marked failed. Its transaction died with its connection, so nothing of it was written, unless
it commits as it goes (a partial import): then its ``Recovery`` says what it kept
(``account_for``) and it is not run again.

A task worker waits out the database's transient errors (``TRANSIENT_ERRORS``: SQLite locked,
a connection dropped) instead of dying of them: ``retrying``, and ``task_worker``'s poll.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connections,
    router,
    transaction,
)
from django.db.models import F
from django.utils import timezone
from django_tasks import task_backends
from django_tasks.backends.immediate import ImmediateBackend
from django_tasks.signals import task_enqueued
from django_tasks_db.backend import DatabaseBackend
from django_tasks_db.models import DBTaskResult

from editor.db import task_wakeup
from editor.models import TaskStatus, TaskWorker, TrackedTask

logger = logging.getLogger(__name__)

# What a database does for a while and then stops doing: SQLite locked by another writer past
# its timeout ("database is locked"), a PostgreSQL connection dropped or a server restarting
# ("server closed the connection": OperationalError or InterfaceError). A task worker waits
# these out; any other error is a bug and is raised.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)
# The pauses between attempts after a transient error (seconds): growing, then the last one.
RETRY_DELAYS = (0.5, 1, 2, 4, 8, 15, 30)
# A running task's first heartbeat, after which they double up to OCM_TASK_HEARTBEAT_SECONDS.
FIRST_BEAT_SECONDS = 0.5

Result = TypeVar("Result")


def close_broken_connections() -> None:
    """Close this thread's database connections after a failure: the next query opens a
    fresh one instead of failing again on a connection the server has dropped."""
    connections.close_all()


def retrying(action: Callable[[], Result], what: str, delays=RETRY_DELAYS) -> Result:
    """``action()``, tried again after each transient database error, with the pauses of
    ``delays`` (logged, the broken connection closed); the error after the last pause is
    raised."""
    for delay in (*delays, None):
        try:
            return action()
        except TRANSIENT_ERRORS as error:
            if delay is None:
                raise
            logger.warning("%s: the database failed (%s); trying again in %s s", what, error, delay)
            close_broken_connections()
            time.sleep(delay)
    raise AssertionError("unreachable")


class WorkerDied(Exception):
    """What the queue's own row of a task says when its worker died under it."""


def worker_id() -> str:
    """This process as a task worker: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def process_is_gone(worker: str) -> bool:
    """Whether ``worker`` (``host:pid``, as ``worker_id``) ran on this host and its process no
    longer exists."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@dataclass(frozen=True)
class Recovery:
    """How to bring back one kind of task: queue it again, or give up on it."""

    model: type[TrackedTask]
    requeue: Callable[[int], None]
    give_up: Callable[[TrackedTask], None]
    # Whether running it again can do harm (a partial import has committed some items).
    may_retry: Callable[[TrackedTask], bool] = lambda task: True
    # What a task given up on is left saying: given the task and how it ended ("The task
    # worker running it (…) stopped after 1 attempt(s)"), the fields to write (its error, a
    # report of what it kept), read in the transaction that marks it failed. None: nothing
    # of its last attempt was kept (its transaction died with its connection).
    account_for: Callable[[TrackedTask, str], dict] | None = None


def claim(model: type[TrackedTask], pk: int) -> bool:
    """Mark a queued task running on this worker; False if it is not queued (any more).

    A transient database error is waited out (``retrying``): a task that could not be claimed
    would stay queued with nobody left to run it.
    """

    def take() -> bool:
        now = timezone.now()
        return bool(
            model.objects.filter(pk=pk, status=TaskStatus.QUEUED).update(
                status=TaskStatus.RUNNING,
                started_at=now,
                heartbeat_at=now,
                worker=worker_id(),
                attempts=F("attempts") + 1,
                error="",
            )
        )

    return retrying(take, f"Claiming {model.__name__} {pk}")


def finish(model: type[TrackedTask], pk: int, status: str, **fields) -> bool:
    """Record the end of a task this worker runs; False if it was taken from it meanwhile."""
    return bool(
        model.objects.filter(pk=pk, status=TaskStatus.RUNNING, worker=worker_id()).update(
            status=status, finished_at=timezone.now(), **fields
        )
    )


class Heartbeat:
    """Writes a running task's heartbeat and progress from a thread of its own.

    Its own thread, hence its own database connection: the task's transaction never holds
    it back, and on PostgreSQL every web worker sees the progress at once. On SQLite a beat
    that meets the task's write lock is skipped; the next one tries again.
    """

    def __init__(self, model: type[TrackedTask], pk: int):
        self.model, self.pk = model, pk
        self.worker = worker_id()
        self.progress: dict = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{pk}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        started = time.monotonic()
        try:
            while not self._stop.wait(self._next_beat_in(time.monotonic() - started)):
                self.beat()
        finally:
            connections.close_all()

    @staticmethod
    def _next_beat_in(running_for: float) -> float:
        """The first beats come sooner (after 0.5 s, 1 s, 2 s…, doubling up to
        ``OCM_TASK_HEARTBEAT_SECONDS``): the progress of a task of a few seconds is known
        early enough for a waiting client to see when it should end."""
        return min(settings.OCM_TASK_HEARTBEAT_SECONDS, max(FIRST_BEAT_SECONDS, running_for))

    def beat(self) -> None:
        """One beat; a failed one is logged and the next tries again on a fresh connection."""
        try:
            self.model.objects.filter(
                pk=self.pk, status=TaskStatus.RUNNING, worker=self.worker
            ).update(heartbeat_at=timezone.now(), progress=self.progress)
        except (DatabaseError, InterfaceError) as error:
            logger.info("Heartbeat of %s %s skipped: %s", self.model.__name__, self.pk, error)
            close_broken_connections()


def is_dead(task: TrackedTask, now=None) -> bool:
    """Whether a running task's worker is gone (see the module's docstring)."""
    if task.status != TaskStatus.RUNNING:
        return False
    now = now or timezone.now()
    stale_before = now - timedelta(seconds=settings.OCM_TASK_STALE_AFTER)
    beat = task.heartbeat_at or task.started_at
    return process_is_gone(task.worker) or beat is None or beat < stale_before


def recover(task: TrackedTask, recovery: Recovery) -> bool:
    """Queue a dead task again or mark it failed; False if it is not dead or someone else did."""
    if not is_dead(task):
        return False
    retry = task.attempts < settings.OCM_TASK_MAX_ATTEMPTS and recovery.may_retry(task)
    was_running = recovery.model.objects.filter(
        pk=task.pk, status=TaskStatus.RUNNING, worker=task.worker
    )
    gone = f"The task worker running it ({task.worker or 'unknown'}) stopped"
    if retry:
        with transaction.atomic():
            taken = was_running.update(
                status=TaskStatus.QUEUED,
                worker="",
                error=f"{gone}; queued again (attempt {task.attempts + 1} of "
                f"{settings.OCM_TASK_MAX_ATTEMPTS}).",
            )
            if taken:
                transaction.on_commit(lambda: recovery.requeue(task.pk))
    else:
        ended = f"{gone} after {task.attempts} attempt(s)"
        with transaction.atomic():
            # Marked failed first: the row is then this transaction's until it commits, so a
            # worker only thought dead cannot commit more of it while it is accounted for.
            taken = was_running.update(
                status=TaskStatus.FAILED,
                finished_at=timezone.now(),
                error=f"{ended}; nothing of the last one was kept.",
            )
            if taken and recovery.account_for is not None:
                task.refresh_from_db()
                account = recovery.account_for(task, ended)
                if account:
                    recovery.model.objects.filter(pk=task.pk).update(**account)
        if taken:
            task.refresh_from_db()
            recovery.give_up(task)
    if taken:
        _close_queue_rows_of(task.worker)
        logger.warning(
            "%s %s: worker %s is gone; %s",
            recovery.model.__name__,
            task.pk,
            task.worker,
            "queued again" if retry else "failed",
        )
    return bool(taken)


def _close_queue_rows_of(worker: str) -> None:
    """django-tasks-db's rows of the dead worker's tasks say failed, not running forever."""
    for row in DBTaskResult.objects.running():
        if row.worker_ids and row.worker_ids[-1] == worker:
            row.set_failed(WorkerDied(f"task worker {worker} stopped while running it"))


def recover_all(recoveries: list[Recovery]) -> int:
    """Recover every dead task of every kind; how many were."""
    count = 0
    for recovery in recoveries:
        for task in recovery.model.objects.filter(status=TaskStatus.RUNNING):
            count += recover(task, recovery)
    return count


def record_worker_seen() -> None:
    """Say that this task worker is alive (what ``/healthz`` checks the queue by)."""
    TaskWorker.objects.update_or_create(worker_id=worker_id(), defaults={"seen_at": timezone.now()})


def live_workers(within_seconds: float) -> int:
    """How many task workers were seen in the last ``within_seconds``."""
    since = timezone.now() - timedelta(seconds=within_seconds)
    return TaskWorker.objects.filter(seen_at__gte=since).count()


# A worker writes that it is alive every OCM_TASK_HEARTBEAT_SECONDS; missing this many
# seconds beyond it means no worker is taking tasks.
WORKER_GRACE_SECONDS = 30


def runs_in_request() -> bool:
    """Tasks run inside the request that enqueues them (tests, or no worker configured)."""
    return isinstance(task_backends["default"], ImmediateBackend)


def workers_seen_lately() -> int:
    """Task workers seen within a heartbeat and its grace: 0 means queued tasks wait."""
    return live_workers(within_seconds=settings.OCM_TASK_HEARTBEAT_SECONDS + WORKER_GRACE_SECONDS)


def no_worker_seen() -> bool:
    """Queued tasks wait for nobody: no worker seen lately, and tasks do not run in-request.
    What the import and export pages say beside a task still queued."""
    return not runs_in_request() and workers_seen_lately() == 0


def forget_worker() -> None:
    TaskWorker.objects.filter(worker_id=worker_id()).delete()


# Each task module registers how its tasks are brought back (``register``) when imported;
# ``EditorConfig.ready`` imports them all, so every process knows every recovery.
RECOVERIES: list[Recovery] = []


def register(recovery: Recovery) -> None:
    RECOVERIES.append(recovery)


# Work kept in rows of its own rather than a task row (webhook deliveries due again after a
# back-off or a worker killed mid-send): each sweep queues what is overdue of it, every time
# the task worker looks after its tasks (``recover_dead_tasks``).
SWEEPS: list[Callable[[], int]] = []


def register_sweep(sweep: Callable[[], int]) -> None:
    SWEEPS.append(sweep)


def recover_dead_tasks() -> int:
    """Queue again (or fail) every task whose worker died, and run the sweeps; how many tasks
    were recovered (what the sweeps queue is not counted)."""
    recovered = recover_all(RECOVERIES)
    for sweep in SWEEPS:
        sweep()
    return recovered


def current(tracked):
    """A task someone is looking at, as it stands: recovered first if its worker died."""
    for recovery in RECOVERIES:
        if isinstance(tracked, recovery.model) and recover(tracked, recovery):
            tracked.refresh_from_db()
    return tracked


def _wake_workers(sender, **kwargs) -> None:
    """A task was queued in the database: once it is committed, the idle workers are woken
    to take it (``task_wakeup``), rather than finding it at their next poll."""
    using = router.db_for_write(DBTaskResult)
    transaction.on_commit(lambda: task_wakeup.announce(using), using=using)


def connect() -> None:
    task_enqueued.connect(_wake_workers, sender=DatabaseBackend, dispatch_uid="wake-task-workers")
