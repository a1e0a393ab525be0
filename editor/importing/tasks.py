"""Imports started from the UI or the API: queued as a task, with progress to poll.

The import itself is ``editor.importing.import_transcripts`` (one domain function for the
command, the UI and the API); this module gives it a task row, a place for its upload and
its progress, and runs it on a task worker (``import_upload``). Progress is
written to the task row by the worker's heartbeat thread (``editor.background``), so any web
worker can answer a poll.
"""

from __future__ import annotations

import logging
from typing import IO

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone
from django_tasks import task

from editor import background, filestore, webhooks
from editor.errors import DomainError, InvalidContent, NotAllowed
from editor.importing import Action, ImportItem, ImportRejected, ImportReport, import_transcripts
from editor.importing.batches import revision_notes
from editor.importing.preference import SHAPES
from editor.models import Dataset, ImportTask, Revision, RevisionKind, TaskStatus

logger = logging.getLogger(__name__)

# Where a running partial import keeps, in its task's report, what its last committed batch
# had done (written in that batch's transaction).
KEPT_SO_FAR = "kept_so_far"


def start_import_task(
    *,
    dataset: Dataset,
    author,
    upload: IO[bytes],
    name: str,
    spec: str | None = None,
    on_conflict: str = "update",
    partial: bool = False,
    shape: str | None = None,
) -> ImportTask:
    """Queue an import of ``upload`` (a binary file object named ``name``).

    ``shape`` is how its rows are read (``editor.importing.preference.SHAPES``; None lets the
    importer recognise preference rows by their keys), refused at once when unknown.

    The upload is copied to the uploads storage first (``editor.filestore``: a folder, or a
    bucket): the request's own temporary file is gone once the response is sent, and the task
    may run on another machine.
    """
    if not dataset.can_edit(author):
        raise NotAllowed("You may not import into this dataset.")
    if shape and shape not in SHAPES:
        raise InvalidContent(
            f"Unknown import shape {shape!r}; expected one of: {', '.join(SHAPES)}.",
            code="invalid-request",
        )
    stored = filestore.save_upload(upload, name)
    task = ImportTask.objects.create(
        dataset=dataset,
        created_by=author,
        source_name=name,
        spec=spec or "",
        on_conflict=on_conflict,
        partial=partial,
        shape=shape or "",
        upload_path=stored,
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
            _emit_finished(task, TaskStatus.SUCCEEDED, done.to_dict(), "")

        def keep_account(done: ImportReport) -> None:
            # In each batch's transaction of a partial import: what the task has committed is
            # recorded with the batch, and a task taken from this worker (thought dead) rolls
            # the batch back instead of committing behind its recovery's account.
            mine = ImportTask.objects.filter(
                pk=task_pk, status=TaskStatus.RUNNING, worker=background.worker_id()
            )
            if not mine.update(report={KEPT_SO_FAR: _progress_dict(done)}):
                raise TaskTakenAway(task_pk)

        try:
            with filestore.open_upload(task.upload_path) as upload:
                result = import_transcripts(
                    upload,
                    dataset=task.dataset,
                    author=task.created_by,
                    spec=task.spec or None,
                    on_conflict=task.on_conflict,
                    partial=task.partial,
                    name=task.source_name,
                    progress=record,
                    before_commit=keep_account if task.partial else succeed_with_the_data,
                    tag=tag_of(task_pk),
                    shape=task.shape or None,
                )
            status, report = TaskStatus.SUCCEEDED, result.to_dict()
        except TaskTakenAway:
            logger.warning(
                "Import %s was taken from this worker; what it had not committed was rolled back",
                task_pk,
            )
            return None
        except ImportRejected as rejected:
            report, error = rejected.report.to_dict(), rejected.message
        except DomainError as refused:
            error = refused.message
        except FileNotFoundError:
            error = "The uploaded file is gone (removed from the upload storage): upload it again."
        except (OperationalError, InterfaceError):
            # The database failed midway: an all-or-nothing import is one transaction, rolled
            # back. Logged, and the task says so instead of staying "running" forever.
            logger.exception("Import %s: the database failed", task_pk)
            if task.partial:
                report, error = _account_after_failure(task_pk)
            else:
                error = "The database failed midway: nothing was imported. Start the import again."
    if not (status == TaskStatus.SUCCEEDED and not task.partial):  # recorded at the commit
        with transaction.atomic():  # the webhook deliveries are written with the outcome
            if background.finish(ImportTask, task_pk, status, report=report, error=error):
                _emit_finished(task, status, report, error)
    remove_upload(task)
    task.refresh_from_db()
    return task


def _emit_finished(task: ImportTask, status: str, report: dict, error: str) -> None:
    """``import.finished``: the outcome and the counts (the items are in the task's report)."""
    webhooks.emit(
        task.dataset,
        webhooks.events.IMPORT_FINISHED,
        {
            "import_id": task.pk,
            "status": status,
            "counts": report.get("counts", {}),
            "committed": report.get("committed", False),
            "error": error,
        },
    )


def tag_of(task_pk: int) -> str:
    """What names the import in the notes of the revisions it writes."""
    return f"import {task_pk}"


def what_was_kept(task: ImportTask, ended: str) -> dict:
    """The fields of an import given up on (``background.Recovery.account_for``): an
    all-or-nothing one kept nothing (the default says so); a partial one kept the batches it
    committed, told here truly: the transcripts they wrote, found by the revisions tagged with
    this import, and the counts its last committed batch recorded (``KEPT_SO_FAR``)."""
    if not task.partial:
        return {}
    report = kept_report(task)
    counts = report["counts"]
    kept = counts["created"] + counts["updated"]
    total = report["bytes_total"]
    where = f" at {100 * report['bytes_read'] // total} % of the upload" if total else ""
    return {
        "report": report,
        "error": (
            f"{ended}{where}. Kept: the {kept} transcript(s) its committed batches wrote "
            f"({counts['created']} created, {counts['updated']} updated; listed below); of the "
            f"items read before them, {counts['skipped']} were skipped and {counts['failed']} "
            "failed. The rest of the upload was not imported: import it again with existing "
            "ids skipped (on_conflict=skip) to add it; items without an id would be imported "
            "twice."
        ),
    }


def kept_report(task: ImportTask) -> dict:
    """The report of what a partial import committed, read from the database alone."""
    notes = revision_notes(tag_of(task.pk))
    action_of = {note: action for action, note in notes.items()}
    written = (
        Revision.objects.filter(
            transcript__dataset_id=task.dataset_id,
            kind=RevisionKind.IMPORT,
            note__in=list(notes.values()),
        )
        .order_by("transcript_id")
        .values_list("transcript_id", "transcript__external_id", "note")
    )
    items = [
        ImportItem(
            external_id or f"transcript {pk}",
            external_id=external_id,
            action=action_of[note],
            message="kept: committed before the import stopped",
            transcript_id=pk,
        ).to_dict()
        for pk, external_id, note in written
    ]
    so_far = task.report.get(KEPT_SO_FAR, {})
    counts = {action.value: so_far.get("counts", {}).get(action.value, 0) for action in Action}
    for action in (Action.CREATED, Action.UPDATED):
        counts[action.value] = sum(item["action"] == action for item in items)
    return {
        "partial": True,
        "committed": True,
        "interrupted": True,
        "counts": counts,
        "bytes_read": so_far.get("bytes_read", 0),
        "bytes_total": so_far.get("bytes_total"),
        "items": items,
    }


def _account_after_failure(task_pk: int) -> tuple[dict, str]:
    """A partial import's report and error when the database failed under it: what its
    committed batches kept, read again once the database answers (or, if it still does not,
    the little that can be said)."""
    ended = "The database failed midway"
    background.close_broken_connections()
    try:
        return background.retrying(
            lambda: _account_of(task_pk, ended), f"Accounting for import {task_pk}", (1, 2, 4)
        )
    except background.TRANSIENT_ERRORS:
        return {}, (
            f"{ended}: the batches committed before it are kept (their revisions say "
            f"'{tag_of(task_pk)}'); start the import again with on_conflict=skip."
        )


def _account_of(task_pk: int, ended: str) -> tuple[dict, str]:
    account = what_was_kept(ImportTask.objects.get(pk=task_pk), ended)
    return account["report"], account["error"]


class TaskTakenAway(Exception):
    """The task row is no longer this worker's: another attempt owns it now."""


def remove_upload(task: ImportTask) -> None:
    filestore.remove_upload(task.upload_path)


def _progress_dict(report: ImportReport) -> dict:
    return {
        "items": len(report.items),
        "counts": report.counts,
        "bytes_read": report.bytes_read,
        "bytes_total": report.bytes_total,
    }


def progress_of(task: ImportTask, now=None) -> dict:
    """What the task has done so far: from its heartbeat while it runs, its report once ended.

    ``percent`` is 0 until the task reports progress, then None when the size of the input
    is unknown. ``seconds_left`` is the time the rest of the reading should take at the pace
    of the last report (None when it cannot be told): a waiting client looks again then
    rather than on a back-off (``editor.client.polling``).
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
    elif total:
        data["percent"] = min(100, int(100 * data["bytes_read"] / total))
    else:
        data["percent"] = None if task.progress or task.is_finished else 0
    data["seconds_left"] = _seconds_left(task, data, now or timezone.now())
    return data


def _seconds_left(task: ImportTask, data: dict, now) -> float | None:
    """The reading's remaining time at the pace of its last report (made at ``heartbeat_at``,
    ``started_at`` and the progress being the server's own: no client clock is involved)."""
    if task.status != TaskStatus.RUNNING or not task.started_at or not task.heartbeat_at:
        return None
    total, read = data["bytes_total"], data["bytes_read"]
    reading = (task.heartbeat_at - task.started_at).total_seconds()
    if not total or not read or reading <= 0:
        return None
    left = reading * (total - read) / read - (now - task.heartbeat_at).total_seconds()
    return round(max(0.0, left), 2)


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
        account_for=what_was_kept,
    )
)
