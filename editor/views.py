"""HTML views: thin. They read the request, call one domain function and render."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from .exporting import export_dataset
from .forms import ExportForm, ImportForm
from .import_tasks import progress_of, start_import_task
from .models import END_USER_AUDIENCE, Dataset, ImportTask, Transcript
from .revisions import diff_revisions, list_revisions, restore_revision
from .storage import ConflictError, NotAllowed, StorageError
from .visibility import FULL_CONTENT, export_audience, require_audience


def _transcript_rows():
    return Prefetch("transcripts", queryset=Transcript.objects.summaries().order_by("title", "pk"))


def _visible_dataset(request, slug: str) -> Dataset:
    datasets = Dataset.objects.for_user(request.user).with_roles(request.user)
    return get_object_or_404(datasets.prefetch_related(_transcript_rows()), slug=slug)


@require_GET
@vary_on_headers("HX-Request")
def dashboard(request):
    datasets = list(
        Dataset.objects.for_user(request.user)
        .with_roles(request.user)
        .prefetch_related(_transcript_rows())
    )
    return render(request, "editor/dashboard.html", {"datasets": datasets})


@require_GET
def dataset_detail(request, slug):
    dataset = _visible_dataset(request, slug)
    return render(
        request,
        "editor/dataset.html",
        {
            "dataset": dataset,
            "import_form": ImportForm(),
            "export_form": ExportForm(
                initial={"audience": _default_export_audience(dataset, request.user)}
            ),
            "import_tasks": dataset.import_tasks.select_related("created_by")[:5],
        },
    )


def _default_export_audience(dataset: Dataset, user) -> str:
    """Viewers may export only what the end user sees: offer that first."""
    return "" if FULL_CONTENT in dataset.audiences_for(user) else END_USER_AUDIENCE


@require_POST
def dataset_import(request, slug):
    dataset = _visible_dataset(request, slug)
    if not dataset.user_can_edit:
        raise PermissionDenied("You may not import into this dataset.")
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        context = {"dataset": dataset, "import_form": form, "export_form": ExportForm()}
        return render(request, "editor/dataset.html", context, status=400)
    upload = form.cleaned_data["file"]
    task = start_import_task(
        dataset=dataset,
        author=request.user,
        upload=upload,
        name=upload.name,
        spec=form.cleaned_data["spec"] or None,
        on_conflict=form.cleaned_data["on_conflict"],
        partial=form.cleaned_data["partial"],
    )
    return redirect("import-task", pk=task.pk)


@require_GET
def dataset_export(request, slug):
    dataset = _visible_dataset(request, slug)
    form = ExportForm(request.GET)
    if not form.is_valid():
        context = {"dataset": dataset, "import_form": ImportForm(), "export_form": form}
        return render(request, "editor/dataset.html", context, status=400)
    options = form.cleaned_data
    try:
        export_audience(dataset, request.user, options["audience"] or None)
    except NotAllowed as refused:
        context = {"dataset": dataset, "import_form": ImportForm(), "export_form": form}
        context["export_refusal"] = refused
        return render(request, "editor/dataset.html", context, status=403)
    lines = export_dataset(
        dataset,
        spec=options["spec"] or None,
        format=options["format"],
        statuses=options["status"],
        audience=options["audience"] or None,
    )
    name = f"{dataset.slug}-{options['spec'] or options['format']}.jsonl"
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_GET
@vary_on_headers("HX-Request")
def import_task_detail(request, pk):
    task = get_object_or_404(
        ImportTask.objects.select_related("dataset", "created_by").filter(
            dataset__in=Dataset.objects.for_user(request.user)
        ),
        pk=pk,
    )
    context = {"task": task, "progress": progress_of(task)}
    template = "editor/import_task.html"
    if request.htmx:
        template += "#import-progress"
    return render(request, template, context)


def _history_context(request, transcript: Transcript) -> dict:
    """Revisions newest first, and the diff between the two chosen (default: the last change)."""
    revisions = list(list_revisions(transcript))
    by_number = {r.number: r for r in revisions}
    newest = revisions[0].number
    to_number = _int_param(request.GET.get("to"), newest)
    from_number = _int_param(request.GET.get("from"), max(to_number - 1, 1))
    chosen = (
        {r.number: r for r in transcript.revisions.filter(number__in=(from_number, to_number))}
        if from_number in by_number and to_number in by_number
        else {}
    )
    old, new = chosen.get(from_number), chosen.get(to_number)
    return {
        "transcript": transcript,
        "revisions": revisions,
        "from_number": from_number,
        "to_number": to_number,
        "diff": diff_revisions(old, new) if old and new else None,
        "can_restore": transcript.dataset.can_edit(request.user),
    }


def _int_param(value: str | None, default: int) -> int:
    return int(value) if value and value.isdigit() else default


def _history_transcript(request, pk) -> Transcript:
    transcript = get_object_or_404(
        Transcript.objects.for_user(request.user).select_related("dataset"), pk=pk
    )
    # Old states show hidden content and source: the rendering a viewer may not have.
    require_audience(transcript.dataset, request.user, FULL_CONTENT)
    return transcript


@require_GET
def transcript_history(request, pk):
    try:
        transcript = _history_transcript(request, pk)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    return render(request, "editor/history.html", _history_context(request, transcript))


@require_http_methods(["GET", "POST"])
def revision_restore(request, pk, number):
    """GET asks for confirmation (what would change); POST restores."""
    try:
        transcript = _history_transcript(request, pk)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    revision = get_object_or_404(transcript.revisions, number=number)
    if request.method == "GET":
        current = transcript.revisions.filter(number=transcript.version).first()
        context = {
            "transcript": transcript,
            "revision": revision,
            "diff": diff_revisions(current, revision) if current else None,
            "can_restore": transcript.dataset.can_edit(request.user),
        }
        return render(request, "editor/restore_confirm.html", context)
    try:
        restored = restore_revision(
            revision,
            expected_version=_int_param(request.POST.get("expected_version"), 0),
            author=request.user,
        )
    except ConflictError as conflict:
        context = _history_context(request, transcript)
        context["conflict"] = conflict
        return render(request, "editor/history.html", context, status=conflict.status)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except StorageError as refused:  # e.g. the transcript was deleted meanwhile
        messages.error(request, refused.message)
        return redirect("transcript-history", pk=transcript.pk)
    messages.success(request, f"Revision {number} restored as version {restored.version}.")
    return redirect("transcript-history", pk=transcript.pk)
