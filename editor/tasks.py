"""The background tasks (django-tasks), and how each is brought back when its worker dies.

Each task is a thin wrapper around a domain function that claims its task row, runs, and
records the outcome; ``RECOVERIES`` tells ``editor.background`` what to do with a task
whose worker is gone. ``manage.py task_worker`` runs them (docs/deploy.md).
"""

from __future__ import annotations

from django_tasks import task

from editor import background
from editor.bulk import run_bulk_task
from editor.exporting.tasks import remove_file, run_export_task
from editor.importing.tasks import remove_upload, run_import_task
from editor.models import BulkTask, ExportTask, ImportTask


@task()
def import_upload(import_task_pk: int) -> str | None:
    """Import the upload of an ``ImportTask``; its status is what the task ended with."""
    done = run_import_task(import_task_pk)
    return done.status if done else None


@task()
def export_file(export_task_pk: int) -> str | None:
    """Write the file of an ``ExportTask``."""
    done = run_export_task(export_task_pk)
    return done.status if done else None


@task()
def bulk_action(bulk_task_pk: int) -> str | None:
    """Run the bulk action of a ``BulkTask`` (one transaction, as a small one in a request)."""
    done = run_bulk_task(bulk_task_pk)
    return done.status if done else None


RECOVERIES = [
    background.Recovery(
        model=ImportTask,
        requeue=lambda pk: import_upload.enqueue(pk),
        give_up=remove_upload,
        # A partial import commits its items as it goes: running it again would import
        # them twice (or update them again). An all-or-nothing one left nothing behind.
        may_retry=lambda import_task: not import_task.partial,
    ),
    # An export only reads; its unfinished file is never renamed into place.
    background.Recovery(
        model=ExportTask, requeue=lambda pk: export_file.enqueue(pk), give_up=remove_file
    ),
    # A bulk action is one transaction: a dead attempt left nothing.
    background.Recovery(
        model=BulkTask, requeue=lambda pk: bulk_action.enqueue(pk), give_up=lambda task: None
    ),
]


def recover_dead_tasks() -> int:
    """Queue again (or fail) every task whose worker died; how many there were."""
    return background.recover_all(RECOVERIES)


def current(tracked):
    """A task someone is looking at, as it stands: recovered first if its worker died."""
    for recovery in RECOVERIES:
        if isinstance(tracked, recovery.model) and background.recover(tracked, recovery):
            tracked.refresh_from_db()
    return tracked
