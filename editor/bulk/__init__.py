"""Bulk actions on a selection of a dataset's transcripts: the ones picked, or every one
matching the dataset page's filters.

Each action is one function, run in one transaction: either every selected transcript is
changed or none is (a failure midway rolls the whole action back). A transcript the action
does not apply to — a transition its status does not allow, one already deleted — is
skipped and named in the result, not an error. Content changes write one revision per
changed transcript, through the same save path as the editor.

A selection of at most ``INLINE_LIMIT`` transcripts is acted on within the request; a
larger one becomes a ``BulkTask`` run by a task worker, in the same one transaction. An
export of a selection is always prepared in the background (``editor.exporting.tasks``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.db import transaction
from django.http import QueryDict

from editor.bulk.actions import ACTIONS, BulkResult, bulk_transitions, check_params, perform, select
from editor.bulk.tasks import bulk_action
from editor.exporting.tasks import start_export_task
from editor.models import BulkTask, Dataset

__all__ = [
    "ACTIONS",
    "INLINE_LIMIT",
    "BulkResult",
    "bulk_transitions",
    "perform",
    "select",
    "start",
]

INLINE_LIMIT = 500


def start(
    dataset: Dataset,
    user,
    action: str,
    *,
    ids: Iterable[int] | None = None,
    filters: Mapping | QueryDict | None = None,
    params: dict | None = None,
) -> BulkResult:
    """Act on a selection: at once when it is small, as a background task when it is big."""
    params = dict(params or {})
    check_params(dataset, user, action, params)
    selected = select(dataset, user, ids=ids, filters=filters, deleted=action == "undelete")
    if action == "export":
        return _export(dataset, user, selected, params)
    if len(selected) <= INLINE_LIMIT:
        return perform(dataset, user, action, selected, params)
    task = BulkTask.objects.create(
        dataset=dataset, created_by=user, action=action, params=params, transcript_ids=selected
    )
    transaction.on_commit(lambda: bulk_action.enqueue(task.pk))
    return BulkResult(action, len(selected), task={"kind": "bulk", "id": task.pk})


def _export(dataset: Dataset, user, selected: list[int], params: dict) -> BulkResult:
    task = start_export_task(
        dataset,
        user,
        spec=params.get("spec") or None,
        format=params.get("format") or "jsonl",
        audience=params.get("audience") or None,
        with_annotations=bool(params.get("with_annotations")),
        ids=selected,
    )
    return BulkResult("export", len(selected), task={"kind": "export", "id": task.pk})
