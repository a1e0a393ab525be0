"""Imports started from the UI or the API: run in the background, with progress to poll.

The import itself is ``editor.importing.import_transcripts`` (one domain function for the
command, the UI and the API); this module only gives it a task row, a thread and a place for
its progress. Progress lives in the cache, not in the task row: an all-or-nothing import is
one transaction, and on SQLite no other connection may write while it is open.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from typing import IO

from django.conf import settings
from django.core.cache import cache
from django.db import (
    InterfaceError,
    OperationalError,
    close_old_connections,
    connections,
    transaction,
)
from django.utils import timezone

from .importing import ImportRejected, ImportReport, import_transcripts
from .models import Dataset, ImportTask, ImportTaskStatus
from .storage import NotAllowed, StorageError

logger = logging.getLogger(__name__)

PROGRESS_TTL = 24 * 3600
COPY_CHUNK = 1024 * 1024


def _progress_key(task_pk: int) -> str:
    return f"ocm:import-task:{task_pk}:progress"


def start_import_task(
    *,
    dataset: Dataset,
    author,
    upload: IO[bytes],
    name: str,
    spec: str | None = None,
    on_conflict: str = "update",
    partial: bool = False,
    background: bool | None = None,
) -> ImportTask:
    """Queue an import of ``upload`` (a binary file object named ``name``) and start it.

    The upload is copied to a temporary file first: the request's own temporary file is gone
    once the response is sent. ``background`` None follows ``settings.OCM_IMPORT_IN_BACKGROUND``.
    """
    if not dataset.can_edit(author):
        raise NotAllowed("You may not import into this dataset.")
    fd, path = tempfile.mkstemp(prefix="ocm-import-", suffix=os.path.splitext(name)[1])
    with os.fdopen(fd, "wb") as copy:
        shutil.copyfileobj(upload, copy, COPY_CHUNK)
    task = ImportTask.objects.create(
        dataset=dataset,
        created_by=author,
        source_name=name,
        spec=spec or "",
        on_conflict=on_conflict,
        partial=partial,
    )
    if background is None:
        background = settings.OCM_IMPORT_IN_BACKGROUND
    if background:
        # The thread must find the committed task row, so it starts after the commit.
        transaction.on_commit(
            lambda: threading.Thread(
                target=_run_in_thread, args=(task.pk, path), name=f"import-{task.pk}", daemon=True
            ).start()
        )
    else:
        transaction.on_commit(lambda: run_import_task(task.pk, path))
    return task


def _run_in_thread(task_pk: int, path: str) -> None:
    close_old_connections()
    try:
        run_import_task(task_pk, path)
    finally:
        connections.close_all()


def run_import_task(task_pk: int, path: str) -> ImportTask:
    """Run a queued task to the end; the file at ``path`` is removed afterwards."""
    task = ImportTask.objects.select_related("dataset", "created_by").get(pk=task_pk)
    ImportTask.objects.filter(pk=task_pk).update(status=ImportTaskStatus.RUNNING)
    key = _progress_key(task_pk)

    def record(report: ImportReport) -> None:
        cache.set(key, _progress_dict(report), PROGRESS_TTL)

    status, report, error = ImportTaskStatus.FAILED, {}, ""
    try:
        result = import_transcripts(
            path,
            dataset=task.dataset,
            author=task.created_by,
            spec=task.spec or None,
            on_conflict=task.on_conflict,
            partial=task.partial,
            name=task.source_name,
            progress=record,
        )
        status, report = ImportTaskStatus.SUCCEEDED, result.to_dict()
    except ImportRejected as rejected:
        report, error = rejected.report.to_dict(), rejected.message
    except StorageError as refused:
        error = refused.message
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
    finally:
        os.unlink(path)
        cache.delete(key)
    ImportTask.objects.filter(pk=task_pk).update(
        status=status, report=report, error=error, finished_at=timezone.now()
    )
    task.refresh_from_db()
    return task


def _progress_dict(report: ImportReport) -> dict:
    return {
        "items": len(report.items),
        "counts": report.counts,
        "bytes_read": report.bytes_read,
        "bytes_total": report.bytes_total,
    }


def progress_of(task: ImportTask) -> dict:
    """What the task has done so far: live while it runs, from its report once it ended.

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
        data = cache.get(_progress_key(task.pk)) or {
            "items": 0,
            "counts": {},
            "bytes_read": 0,
            "bytes_total": None,
        }
    total = data["bytes_total"]
    if task.status == ImportTaskStatus.SUCCEEDED:
        data["percent"] = 100
    else:
        data["percent"] = min(100, int(100 * data["bytes_read"] / total)) if total else None
    return data
