"""Dataset versions in the browser (``editor.versions``): the list with a create form (a
name, and "from the current filter": the dataset page's query string), a version's page,
its export, and two versions compared (added, removed, changed, each changed transcript one
click from its per-message diff on the history page)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import QueryDict, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_GET, require_POST

from editor import versions
from editor.errors import DomainError, NotAllowed
from editor.models import Transcript
from editor.views.curating import found_or_404
from editor.visibility import export_audience, visible_dataset

SHOWN = 500  # transcripts listed per kind of change on the compare page


def _version(dataset, name):
    return found_or_404(versions.version_of, dataset, name)


def _filters(query: str) -> dict:
    """The dataset page's query string as a version's filters (lists where repeated)."""
    parsed = QueryDict(query)
    return {
        key: parsed.getlist(key)
        if len(parsed.getlist(key)) > 1 or key in ("status", "has")
        else parsed.get(key)
        for key in parsed
        if key not in ("page", "sort")
    }


def filters_shown(filters: dict) -> str:
    """A version's filters as a curator reads them: ``status: draft, in_review; q: refund``."""
    return "; ".join(
        f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}"
        for key, value in filters.items()
    )


def _listed(dataset) -> list:
    listed = list(versions.versions_of(dataset))
    for version in listed:
        version.filters_text = filters_shown(version.filters or {})
    return listed


@require_GET
def dataset_versions(request, slug):
    dataset = visible_dataset(request.user, slug)
    return render(
        request,
        "editor/versions.html",
        {
            "dataset": dataset,
            "versions": _listed(dataset),
            "can_create": dataset.can_curate(request.user),
            "filter_query": request.GET.get("filter", ""),
        },
    )


@require_POST
def version_create(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.can_curate(request.user):
        raise PermissionDenied("Only curators create versions of the dataset.")
    filter_query = request.POST.get("filter", "")
    try:
        version = versions.create_version(
            dataset,
            request.POST.get("name", "").strip(),
            filters=_filters(filter_query) if request.POST.get("use_filter") else None,
            author=request.user,
            description=request.POST.get("description", ""),
        )
    except DomainError as refused:
        return render(
            request,
            "editor/versions.html",
            {
                "dataset": dataset,
                "versions": _listed(dataset),
                "can_create": True,
                "filter_query": filter_query,
                "error": refused,
                "name": request.POST.get("name", ""),
            },
            status=refused.status,
        )
    messages.success(
        request,
        f"Version {version.name} created: {version.transcript_count} "
        f"transcript{pluralize(version.transcript_count)}.",
    )
    return redirect("dataset-version", dataset.slug, version.name)


@require_GET
def version_detail(request, slug, name):
    dataset = visible_dataset(request.user, slug)
    version = _version(dataset, name)
    others = [v for v in versions.versions_of(dataset) if v.pk != version.pk]
    version.filters_text = filters_shown(version.filters or {})
    return render(
        request,
        "editor/version.html",
        {"dataset": dataset, "version": version, "others": others},
    )


@require_GET
def version_export(request, slug, name):
    dataset = visible_dataset(request.user, slug)
    try:
        export_audience(dataset, request.user, None)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    version = _version(dataset, name)
    try:
        lines = versions.export_version(
            version,
            spec=request.GET.get("spec") or None,
            format=request.GET.get("format") or "jsonl",
        )
    except DomainError as refused:
        version.filters_text = filters_shown(version.filters or {})
        return render(
            request,
            "editor/version.html",
            {"dataset": dataset, "version": version, "error": refused},
            status=refused.status,
        )
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{dataset.slug}-{version.name}.jsonl"'
    return response


@require_GET
def version_compare(request, slug, name):
    dataset = visible_dataset(request.user, slug)
    old = _version(dataset, name)
    other = request.GET.get("to", "")
    if not other:
        return redirect("dataset-version", dataset.slug, old.name)
    new = _version(dataset, other)
    diff = versions.diff_versions(old, new)
    shown = set(diff.added[:SHOWN]) | set(diff.removed[:SHOWN])
    shown |= {change.id for change in diff.changed[:SHOWN]}
    titles = {
        pk: str(transcript)
        for pk, transcript in Transcript.all_objects.in_bulk(list(shown)).items()
    }
    return render(
        request,
        "editor/version_compare.html",
        {
            "dataset": dataset,
            "diff": diff,
            "added": [(pk, titles.get(pk, pk)) for pk in diff.added[:SHOWN]],
            "removed": [(pk, titles.get(pk, pk)) for pk in diff.removed[:SHOWN]],
            "changed": [(c, titles.get(c.id, c.id)) for c in diff.changed[:SHOWN]],
            "shown": SHOWN,
        },
    )
