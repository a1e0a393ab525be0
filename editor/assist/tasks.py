"""Judge runs started from the UI or the API, run on a task worker: starting one over the
dataset list's filters, cancelling, resuming, the django-tasks task and its recovery.

Running a run again is always safe — it asks only the targets without a suggestion from it
(``editor.assist.runs``), and a suggestion is written whole or not at all — so a dead
worker's run is queued again (``may_retry``), up to ``OCM_TASK_MAX_ATTEMPTS``; given up on, it
keeps the suggestions it wrote, and a curator resumes it.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from django.db import transaction
from django.utils import timezone
from django_tasks import task

from editor import background
from editor.assist import runs
from editor.assist.runs import run_judge_run
from editor.errors import InvalidContent, JudgeRunNotResumable, NotAllowed
from editor.listing import TranscriptList
from editor.listing.filters import TranscriptFilterForm
from editor.models import Dataset, Judge, JudgeRun, TaskStatus, Transcript

# --- starting, cancelling, resuming ------------------------------------------------------------


def selection(dataset: Dataset, user, filters: dict | str | None) -> list[int]:
    """The ids the dataset list shows ``user`` with ``filters`` (its query parameters, as a
    dict or a query string); every live transcript without filters."""
    if isinstance(filters, str):
        filters = {k: v if len(v) > 1 else v[0] for k, v in parse_qs(filters).items()}
    filters = {k: v for k, v in (filters or {}).items() if k not in ("page", "sort")}
    if not filters:
        return list(
            Transcript.objects.filter(dataset=dataset).order_by("pk").values_list("pk", flat=True)
        )
    form = TranscriptFilterForm(filters, dataset=dataset)
    if not form.is_valid():
        raise InvalidContent(
            f"Invalid filter: {form.errors.as_text()}",
            code="invalid-filter",
            details=form.errors.get_json_data(),
        )
    return sorted(TranscriptList.of(dataset, user, form.to_filter()).ids())


def start_run(judge: Judge, *, user, filters: dict | str | None = None) -> JudgeRun:
    """Queue a run of ``judge`` over the transcripts ``filters`` select (curators)."""
    dataset = judge.schema.dataset
    if not dataset.can_curate(user):
        raise NotAllowed("Only a curator of the dataset starts judge runs.")
    if isinstance(filters, str):
        filters = {k: v if len(v) > 1 else v[0] for k, v in parse_qs(filters).items()}
    ids = selection(dataset, user, filters)
    if not ids:
        raise InvalidContent("The filters select no transcript.", code="empty-selection")
    if len(ids) > runs.MAX_TARGETS:
        raise InvalidContent(
            f"At most {runs.MAX_TARGETS} transcripts a run; narrow the filters.",
            code="too-many-ids",
        )
    run = JudgeRun.objects.create(
        dataset=dataset,
        judge=judge,
        schema_version=judge.schema.current_version,
        created_by=user,
        filters=filters or {},
        transcript_ids=ids,
        progress={"done": 0, "total": len(ids), "failed": 0},
    )
    _enqueue_after_commit(run.pk)
    return run


def cancel_run(run: JudgeRun, *, user) -> JudgeRun:
    """Ask a queued or running run to stop (curators); seen between items."""
    if not run.dataset.can_curate(user):
        raise NotAllowed("Only a curator of the dataset cancels judge runs.")
    now = timezone.now()
    JudgeRun.objects.filter(pk=run.pk, cancel_requested_at__isnull=True).update(
        cancel_requested_at=now
    )
    # A queued run nobody has claimed yet ends here; a running one ends at its next item.
    JudgeRun.objects.filter(pk=run.pk, status=TaskStatus.QUEUED).update(
        status=TaskStatus.FAILED, finished_at=now, error=f"{runs.CANCELLED} before it started."
    )
    run.refresh_from_db()
    return run


def resume_run(run: JudgeRun, *, user) -> JudgeRun:
    """Queue an ended run again: only its targets without a suggestion are asked."""
    if not run.dataset.can_curate(user):
        raise NotAllowed("Only a curator of the dataset resumes judge runs.")
    if not run.is_finished:
        raise JudgeRunNotResumable("The run has not ended: cancel it first, or let it finish.")
    if not runs.remaining(run):
        raise JudgeRunNotResumable("Every transcript of the run has its suggestion.")
    resumed = JudgeRun.objects.filter(
        pk=run.pk, status__in=(TaskStatus.SUCCEEDED, TaskStatus.FAILED)
    ).update(
        status=TaskStatus.QUEUED,
        cancel_requested_at=None,
        error="",
        finished_at=None,
        worker="",
        attempts=0,
    )
    if not resumed:
        raise JudgeRunNotResumable("The run was resumed already.")
    _enqueue_after_commit(run.pk)
    run.refresh_from_db()
    return run


def _enqueue_after_commit(pk: int) -> None:
    # The worker must find the committed row, so it is queued after the commit.
    transaction.on_commit(lambda: judge_run_task.enqueue(pk))


@task()
def judge_run_task(run_pk: int) -> str | None:
    """Run a queued ``JudgeRun``; its status is what the run ended with."""
    done = run_judge_run(run_pk)
    return done.status if done else None


def _kept(run: JudgeRun, ended: str) -> dict:
    kept = run.suggestions.count()
    return {
        "error": f"{ended}. The {kept} suggestion(s) it wrote are kept: resume the run to ask "
        "the rest."
    }


background.register(
    background.Recovery(
        model=JudgeRun,
        requeue=lambda pk: judge_run_task.enqueue(pk),
        give_up=lambda run: None,  # nothing to clean: no file, no lock
        account_for=_kept,
    )
)
