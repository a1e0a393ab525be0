"""The dataset page's bulk actions: act on the ticked transcripts, or on every one the
table's filters match, and follow a big action running in the background."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from editor import bulk
from editor.errors import DomainError, NotAllowed
from editor.models import BulkTask, TaskStatus
from editor.views.datasets import table_context
from editor.visibility import visible_bulk_task, visible_dataset


def _parse_action(value: str) -> tuple[str, dict]:
    """The action select's value: ``transition:<name>``, ``queue:<id>`` or an action name."""
    kind, _, argument = value.partition(":")
    if kind == "transition":
        return "transition", {"transition": argument}
    if kind == "queue":
        return "add_to_queue", {"queue": argument if argument.isdigit() else None}
    return kind, {}


def _selection(request) -> dict | None:
    """Ticked ids, or (``all_matching``) the filters of the table the form was sent from: the
    form's address carries the table's query string. None when nothing (valid) is ticked."""
    if request.POST.get("all_matching"):
        return {"filters": request.GET}
    ids = request.POST.getlist("ids")
    if not ids or not all(pk.isdigit() for pk in ids):
        return None
    return {"ids": [int(pk) for pk in ids]}


@require_POST
def dataset_bulk(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.user_can_edit:
        raise PermissionDenied("Your role may not act on transcripts in bulk.")
    action, params = _parse_action(request.POST.get("action", ""))
    params["note"] = request.POST.get("note", "")
    selection = _selection(request)
    outcome: dict = {}
    status = 200
    if selection is None:
        outcome = {"bulk_error": "Tick some transcripts first, or select all that match."}
        status = 422
    else:
        try:
            result = bulk.start(dataset, request.user, action, params=params, **selection)
        except NotAllowed as refused:
            raise PermissionDenied(refused.message) from None
        except DomainError as refused:
            outcome = {"bulk_error": refused.message}
            status = refused.status
        else:
            if result.task and result.task["kind"] == "export":
                url = reverse("export-task", args=[result.task["id"]])
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
            outcome = {"bulk_result": result}
            if result.task:
                outcome["bulk_task"] = BulkTask.objects.get(pk=result.task["id"])
    if not request.htmx:
        text = outcome.get("bulk_error") or outcome["bulk_result"].summary()
        (messages.error if status != 200 else messages.success)(request, text)
        query = request.GET.urlencode()
        return redirect(reverse("dataset", args=[slug]) + (f"?{query}" if query else ""))
    context = {**table_context(request, dataset), **outcome}  # the table alone
    return render(request, "editor/dataset.html#transcript-table", context, status=status)


@require_GET
def bulk_task_detail(request, pk):
    """A bulk action running in the background, polled by the dataset page until it ends."""
    task = visible_bulk_task(request.user, pk)
    summary = ""
    if task.status == TaskStatus.SUCCEEDED:
        summary = bulk.BulkResult(**task.result).summary()
    context = {"bulk_task": task, "bulk_summary": summary}
    return render(request, "editor/dataset.html#bulk-task", context)
