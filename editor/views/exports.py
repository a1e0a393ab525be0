"""Pages of exports prepared in the background: start one, follow it, download its file."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from editor import background
from editor.errors import ExportNotReady, FileStoreUnavailable, InvalidContent, NotAllowed
from editor.exporting.tasks import (
    check_may_see,
    content_type_of,
    download_url,
    file_expired,
    open_download,
    progress_of,
    start_export_task,
)
from editor.models import ExportTask, TaskStatus
from editor.views.forms import ExportForm
from editor.visibility import visible_dataset, visible_export_task


def _visible_export(request, pk: int) -> ExportTask:
    task = visible_export_task(request.user, pk)
    try:
        check_may_see(task, request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    return task


@require_POST
def export_task_start(request, slug):
    dataset = visible_dataset(request.user, slug)
    form = ExportForm(request.POST)
    if not form.is_valid():
        return HttpResponse(
            f"The export options are not valid: {form.errors.as_text()}", status=400
        )
    options = form.cleaned_data
    try:
        task = start_export_task(
            dataset,
            request.user,
            spec=options["spec"] or None,
            format=options["format"],
            statuses=options["status"],
            audience=options["audience"] or None,
            file_format=options["file_format"] or "jsonl",
            preference_shape=options["preference_shape"] or None,
            sources=options["sources"] or None,
            convention=options["convention"] or None,
            mask=options["mask"] or None,
            over_context=options["over_context"] or None,
            with_suggestions=options["with_suggestions"],
        )
    except (NotAllowed, InvalidContent) as refused:
        return HttpResponse(refused.message, status=refused.status)
    if request.htmx:
        return HttpResponseClientRedirect(reverse("export-task", args=[task.pk]))
    return redirect("export-task", pk=task.pk)


@require_GET
@vary_on_headers("HX-Request")
def export_task_detail(request, pk):
    task = _visible_export(request, pk)
    context = {
        "task": task,
        "progress": progress_of(task),
        "no_worker": task.status == TaskStatus.QUEUED and background.no_worker_seen(),
        "expired": file_expired(task),
        "keep_days": f"{settings.OCM_EXPORT_KEEP_DAYS:g}",
    }
    template = "editor/export_task.html"
    if request.htmx:
        template += "#export-progress"
    return render(request, template, context)


@require_GET
def export_task_download(request, pk):
    task = _visible_export(request, pk)
    try:
        url = download_url(task)  # in a bucket: a short-lived signed URL
        if url:
            return HttpResponseRedirect(url)
        file = open_download(task)
    except (ExportNotReady, FileStoreUnavailable) as refused:
        return HttpResponse(refused.message, status=refused.status, content_type="text/plain")
    return FileResponse(
        file,
        as_attachment=True,
        filename=task.file_name,
        content_type=content_type_of(task),
    )
