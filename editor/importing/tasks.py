"""Imports started from the UI or the API: queued as a task, with progress to poll.

The import itself is ``editor.importing.import_transcripts`` (one domain function for the
command, the UI and the API); this module gives it a task row, a place for its upload and
its progress, and runs it on a task worker (``import_upload``). Progress is
written to the task row by the worker's heartbeat thread (``editor.background``), so any web
worker can answer a poll.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from pathlib import Path
from typing import IO

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django_tasks import task

from editor import background
from editor.errors import DomainError, NotAllowed
from editor.importing import ImportRejected, ImportReport, import_transcripts
from editor.models import Dataset, ImportTask, TaskStatus

logger = logging.getLogger(__name__)

COPY_CHUNK = 1024 * 1024


def start_import_task(
    *,
    dataset: Dataset,
    author,
    upload: IO[bytes],
    name: str,
    spec: str | None = None,
    on_conflict: str = "update",
    partial: bool = False,
) -> ImportTask:
    """Queue an import of ``upload`` (a binary file object named ``name``).

    The upload is copied to ``settings.OCM_UPLOAD_DIR`` first: the request's own temporary
    file is gone once the response is sent, and the task may run on another machine.
    """
    if not dataset.can_edit(author):
        raise NotAllowed("You may not import into this dataset.")
    upload_dir = Path(settings.OCM_UPLOAD_DIR)
    upload_dir.mkdir(parents=True, exist_ok=True)
    suffix = os.path.splitext(name)[1][:16]
    path = upload_dir / f"import-{uuid.uuid4().hex}{suffix}"
    with open(path, "wb") as copy:
        shutil.copyfileobj(upload, copy, COPY_CHUNK)
    task = ImportTask.objects.create(
        dataset=dataset,
        created_by=author,
        source_name=name,
        spec=spec or "",
        on_conflict=on_conflict,
        partial=partial,
        upload_path=str(path),
    )
    # The worker must find the committed task row, so it is queued after the commit.
    transaction.on_commit(lambda: import_upload.enqueue(task.pk))
    return task


def run_import_task(task_pk: int) -> ImportTask | None:
    """Run a queued import to its end on this worker; None if it was not queued (any more).

    The upload is removed once the task has ended, whatever the outcome; a worker that dies
    midway leaves it for the next attempt (its ``background.Recovery``, below).
    """
    if not background.claim(ImportTask, task_pk):
        return None
    task = ImportTask.objects.select_related("dataset", "created_by").get(pk=task_pk)
    status, report, error = TaskStatus.FAILED, {}, ""
    with background.Heartbeat(ImportTask, task_pk) as heartbeat:

        def record(progress: ImportReport) -> None:
            heartbeat.progress = _progress_dict(progress)

        def succeed_with_the_data(done: ImportReport) -> None:
            # In the import's own transaction: the task says "succeeded" exactly when its
            # transcripts are committed, and a task taken from this worker (it was thought
            # dead) rolls its import back instead of committing it twice.
            if not background.finish(
                ImportTask, task_pk, TaskStatus.SUCCEEDED, report=done.to_dict(), error=""
            ):
                raise TaskTakenAway(task_pk)

        try:
            result = import_transcripts(
                task.upload_path,
                dataset=task.dataset,
                author=task.created_by,
                spec=task.spec or None,
                on_conflict=task.on_conflict,
                partial=task.partial,
                name=task.source_name,
                progress=record,
                before_commit=None if task.partial else succeed_with_the_data,
            )
            status, report = TaskStatus.SUCCEEDED, result.to_dict()
        except TaskTakenAway:
            logger.warning(
                "Import %s was taken from this worker; its work was rolled back", task_pk
            )
            return None
        except ImportRejected as rejected:
            report, error = rejected.report.to_dict(), rejected.message
        except DomainError as refused:
            error = refused.message
        except FileNotFoundError:
            error = "The uploaded file is gone (removed from the upload folder): upload it again."
        except (OperationalError, InterfaceError):
            # The database failed midway: an all-or-nothing import is one transaction, rolled
            # back. Logged, and the task says so instead of staying "running" forever.
            logger.exception("Import %s: the database failed", task_pk)
            error = (
                "The database failed midway: the items read before it may be kept; start the "
                "import again with on_conflict=skip."
                if task.partial
                else "The database failed midway: nothing was imported. Start the import again."
            )
    if not (status == TaskStatus.SUCCEEDED and not task.partial):  # recorded at the commit
        background.finish(ImportTask, task_pk, status, report=report, error=error)
    remove_upload(task)
    task.refresh_from_db()
    return task


class TaskTakenAway(Exception):
    """The task row is no longer this worker's: another attempt owns it now."""


def remove_upload(task: ImportTask) -> None:
    if task.upload_path:
        Path(task.upload_path).unlink(missing_ok=True)


def _progress_dict(report: ImportReport) -> dict:
    return {
        "items": len(report.items),
        "counts": report.counts,
        "bytes_read": report.bytes_read,
        "bytes_total": report.bytes_total,
    }


def progress_of(task: ImportTask) -> dict:
    """What the task has done so far: from its heartbeat while it runs, its report once ended.

    ``percent`` is None when the size of the input is unknown.
    """
    if task.is_finished:
        data = {
            "items": len(task.report.get("items", [])),
            "counts": task.report.get("counts", {}),
            "bytes_read": task.report.get("bytes_read", 0),
            "bytes_total": task.report.get("bytes_total"),
        }
    else:
        data = {"items": 0, "counts": {}, "bytes_read": 0, "bytes_total": None}
        data.update(task.progress or {})
    total = data["bytes_total"]
    if task.status == TaskStatus.SUCCEEDED:
        data["percent"] = 100
    else:
        data["percent"] = min(100, int(100 * data["bytes_read"] / total)) if total else None
    return data


@task()
def import_upload(import_task_pk: int) -> str | None:
    """Import the upload of an ``ImportTask``; its status is what the task ended with."""
    done = run_import_task(import_task_pk)
    return done.status if done else None


background.register(
    background.Recovery(
        model=ImportTask,
        requeue=lambda pk: import_upload.enqueue(pk),
        give_up=remove_upload,
        # A partial import commits its items as it goes: running it again would import
        # them twice (or update them again). An all-or-nothing one left nothing behind.
        may_retry=lambda import_task: not import_task.partial,
    )
)
