"""Exports prepared as a file by a task worker, for datasets too big to stream while you wait.

The export itself is ``editor.exporting.export_dataset`` (the same lines as the streamed
export); this module gives it a task row, writes its lines to a local file and, once complete,
stores it in the exports storage (``editor.filestore``: a folder, or a bucket; a half-written
file is never offered) and records how many transcripts it holds and what they lost.

``file_format="parquet"`` writes the same rows as Parquet instead (``editor.exporting.parquet``:
row groups of a thousand rows, constant memory).
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from editor import background, filestore, webhooks
from editor.errors import ExportNotReady, InvalidContent, NotAllowed
from editor.exporting import Format, export_dataset
from editor.exporting.parquet import write_parquet
from editor.models import Dataset, ExportTask, TaskStatus, Transcript
from editor.visibility import export_audience, require_pairs_reader

logger = logging.getLogger(__name__)

JSONL, PARQUET = "jsonl", "parquet"
FILE_FORMATS = (JSONL, PARQUET)


def check_export_allowed(
    dataset: Dataset,
    user,
    *,
    audience: str | None,
    with_annotations: bool,
    format: str = "",
    with_suggestions: bool = False,
):
    """Raise NotAllowed unless ``user`` may export ``dataset`` so (viewers: end-user only;
    preference pairs: the roles that read pairs; a judge's suggestions: the roles that see
    hidden parts, in whole transcripts: the judge read them)."""
    if format == Format.PREFERENCE:
        require_pairs_reader(dataset, user)
    export_audience(dataset, user, audience)
    if with_annotations and not dataset.can_review(user):
        raise NotAllowed("Only reviewers and curators export everyone's annotations.")
    if with_suggestions and (audience is not None or not dataset.sees_hidden(user)):
        raise NotAllowed(
            "A judge's suggestions are exported with whole transcripts, by the roles that "
            "see hidden parts."
        )


def check_may_see(task: ExportTask, user) -> None:
    """An export is seen only by those who could have made it (viewers: end-user ones)."""
    check_export_allowed(
        task.dataset,
        user,
        audience=task.options.get("audience"),
        with_annotations=task.options.get("with_annotations", False),
        format=task.options.get("format", ""),
        with_suggestions=task.options.get("with_suggestions", False),
    )


def start_export_task(
    dataset: Dataset,
    author,
    *,
    spec: str | None = None,
    format: str = "jsonl",
    statuses: list[str] | tuple[str, ...] = (),
    audience: str | None = None,
    with_annotations: bool = False,
    ids: list[int] | None = None,
    file_format: str = JSONL,
    preference_shape: str | None = None,
    sources: list[str] | None = None,
    convention: str | None = None,
    mask: str | None = None,
    over_context: str | None = None,
    with_suggestions: bool = False,
) -> ExportTask:
    """Queue an export of ``dataset`` (of its transcripts ``ids`` only, when given); bad
    options are refused now, not in the worker. ``file_format``: jsonl or parquet;
    ``preference_shape`` and ``sources``: those of a ``format="preference"`` export."""
    check_export_allowed(
        dataset,
        author,
        audience=audience,
        with_annotations=with_annotations,
        format=format,
        with_suggestions=with_suggestions,
    )
    if file_format not in FILE_FORMATS:
        raise InvalidContent(
            f"Unknown file format {file_format!r}; expected jsonl or parquet.",
            code="invalid-request",
        )
    options = {
        "spec": spec,
        "format": str(format),
        "statuses": list(statuses),
        "audience": audience,
        "with_annotations": with_annotations,
    }
    if ids is not None:
        options["ids"] = list(ids)
    if preference_shape is not None:
        options["preference_shape"] = preference_shape
    if sources is not None:
        options["sources"] = list(sources)
    if mask is not None or convention is not None:  # format=messages with a training mask
        options["mask"] = mask
        options["convention"] = convention
    if over_context is not None:
        options["over_context"] = over_context
    if with_suggestions:
        options["with_suggestions"] = True
    if file_format != JSONL:
        options["file_format"] = file_format
    _lines(dataset, options)  # validates the options (unknown spec, status…)
    task = ExportTask.objects.create(
        dataset=dataset,
        created_by=author,
        options=options,
        file_name=f"{dataset.slug}-{spec or format}.{file_format}",
    )
    transaction.on_commit(lambda: export_file.enqueue(task.pk))
    return task


def run_export_task(task_pk: int) -> ExportTask | None:
    """Write the export's file on this worker; None if it was not queued (any more)."""
    if not background.claim(ExportTask, task_pk):
        return None
    task = ExportTask.objects.select_related("dataset").get(pk=task_pk)
    file_format = task.options.get("file_format", JSONL)
    name = f"export-{uuid.uuid4().hex}.{file_format}"
    partial = filestore.staging_dir() / f"{name}.part"
    lines = _lines(task.dataset, task.options)
    total = lines.transcripts.count()
    file_losses: dict[str, int] = {}
    with background.Heartbeat(ExportTask, task_pk) as heartbeat:
        heartbeat.progress = {"transcripts": 0, "total": total}

        def counted(rows):
            for row in rows:
                yield row
                heartbeat.progress = {"transcripts": lines.count, "total": total}

        try:
            if file_format == PARQUET:
                file_losses = write_parquet(counted(_rows(lines)), partial).losses
            else:
                with open(partial, "w", encoding="utf-8", newline="") as out:
                    for line in counted(lines):
                        out.write(line)
            size_bytes = partial.stat().st_size
            stored = filestore.store_export(partial, name)
        except Exception:
            partial.unlink(missing_ok=True)
            logger.exception("Export %s failed", task_pk)
            background.finish(
                ExportTask, task_pk, TaskStatus.FAILED, error="The export failed; try again."
            )
            raise
    with transaction.atomic():  # export.ready is written with the outcome
        if _finish_succeeded(task_pk, stored, size_bytes, lines, file_losses, total):
            webhooks.emit(
                task.dataset,
                webhooks.events.EXPORT_READY,
                {"export_id": task_pk, "transcripts": lines.count, "options": task.options},
            )
        else:  # another attempt owns the task now (this worker was thought dead): its file
            filestore.remove_export(stored)
    task.refresh_from_db()
    return task


def _finish_succeeded(
    task_pk: int, stored: str, size_bytes: int, lines, file_losses: dict, total: int
) -> bool:
    return background.finish(
        ExportTask,
        task_pk,
        TaskStatus.SUCCEEDED,
        file_path=stored,
        size_bytes=size_bytes,
        transcript_count=lines.count,
        losses={
            "loss_count": lines.loss_count,
            "summary": lines.loss_summary,
            "losses": lines.losses,
            **_left_out(lines),
            **({"file": file_losses} if file_losses else {}),
        },
        progress={"transcripts": lines.count, "total": total},
    )


def _lines(dataset: Dataset, options: dict):
    """The export's lines (``editor.exporting.export_dataset``) for the stored options."""
    options = dict(options)
    options.pop("file_format", None)
    ids = options.pop("ids", None)
    selection = None if ids is None else Transcript.objects.filter(pk__in=ids)
    return export_dataset(dataset, transcripts=selection, **options)


def _rows(lines):
    """The export's rows as dicts: a preference export gives them; the others' lines are
    read back one at a time (their writer builds each line as JSON)."""
    rows = getattr(lines, "rows", None)
    if rows is not None:
        yield from rows()
        return
    for line in lines:
        yield json.loads(line)


def _left_out(lines) -> dict:
    """A preference export's summary of the pairs it left out (ties, excluded…), by why."""
    left_out = getattr(lines, "left_out", None)
    return {} if left_out is None else {"left_out": left_out, "pairs": lines.count}


def progress_of(task: ExportTask) -> dict:
    """``{transcripts, total, percent}``: live while it runs, final once done."""
    data = {"transcripts": 0, "total": None, **(task.progress or {})}
    if task.status == TaskStatus.SUCCEEDED:
        data["percent"] = 100
    elif data["total"]:
        data["percent"] = min(100, int(100 * data["transcripts"] / data["total"]))
    else:
        data["percent"] = None
    return data


def downloadable(task: ExportTask) -> str:
    """The finished file's storage name; NotReady while the export runs or if it failed,
    expired or was removed."""
    if task.status != TaskStatus.SUCCEEDED:
        raise ExportNotReady(f"The export is {task.status}: there is no file to download yet.")
    if file_expired(task):
        raise ExportNotReady(
            f"The export's file was removed {settings.OCM_EXPORT_KEEP_DAYS:g} days after it "
            "was prepared: start the export again."
        )
    if not filestore.export_exists(task.file_path):
        raise ExportNotReady("The export's file was removed: start the export again.")
    return task.file_path


def download_url(task: ExportTask) -> str | None:
    """Where to send the downloader of a finished export: a short-lived signed URL of the
    bucket, or None when the app sends the file itself (``open_download``)."""
    return filestore.signed_url(
        downloadable(task), filename=task.file_name, content_type=content_type_of(task)
    )


def open_download(task: ExportTask):
    """The finished export's file, open for reading (a FileResponse closes it)."""
    return filestore.open_export(downloadable(task))


def content_type_of(task: ExportTask) -> str:
    """The media type of the export's file: Parquet, or JSON lines."""
    if task.options.get("file_format") == PARQUET:
        return "application/vnd.apache.parquet"
    return "application/x-ndjson; charset=utf-8"


def remove_file(task: ExportTask) -> None:
    filestore.remove_export(task.file_path)


def file_expired(task: ExportTask) -> bool:
    """The export succeeded, and its file was removed since (``remove_expired_exports``)."""
    return task.status == TaskStatus.SUCCEEDED and not task.file_path


# Files removed per sweep: a worker's sweep stays short; the rest go at the next ones.
EXPIRED_PER_SWEEP = 100


def remove_expired_exports() -> int:
    """Remove the files of exports prepared more than ``OCM_EXPORT_KEEP_DAYS`` ago (0: kept
    until their dataset is deleted); how many. The task row stays, saying the file expired.
    Run by every task worker with its recoveries (``background.register_sweep``)."""
    days = settings.OCM_EXPORT_KEEP_DAYS
    if days <= 0:
        return 0
    expired = ExportTask.objects.filter(
        status=TaskStatus.SUCCEEDED,
        finished_at__lt=timezone.now() - timedelta(days=days),
    ).exclude(file_path="")
    removed = 0
    for export in expired.only("pk", "file_path")[:EXPIRED_PER_SWEEP]:
        filestore.remove_export(export.file_path)
        removed += ExportTask.objects.filter(pk=export.pk, file_path=export.file_path).update(
            file_path=""
        )
    return removed


@task()
def export_file(export_task_pk: int) -> str | None:
    """Write the file of an ``ExportTask``."""
    done = run_export_task(export_task_pk)
    return done.status if done else None


# An export only reads; its unfinished file is never renamed into place.
background.register(
    background.Recovery(
        model=ExportTask, requeue=lambda pk: export_file.enqueue(pk), give_up=remove_file
    )
)
background.register_sweep(remove_expired_exports)
