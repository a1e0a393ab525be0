"""Preference pairs in the browser (``editor.pairs``, docs/preference.md): a transcript's
pairs side by side (rejected beside chosen, with what changed), a dataset's pairs page by page,
and Exclude / Include buttons (htmx: the pair's card or row comes back).

Pairs hold whole messages, hidden channels included: the roles that see the annotator's
rendering read them (viewers: 403); a curator or the pair's author excludes one."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_GET, require_POST

from editor import pairs
from editor.errors import DomainError, NotAllowed
from editor.models import PairSource
from editor.views.shared import int_param, transcript_for
from editor.visibility import require_pairs_reader, visible_dataset, visible_pair

TEMPLATE = "editor/pairs.html"
PAGE_SIZE = 50
EXCLUDED_CHOICES = {"": None, "yes": True, "no": False}


def _shown(pair, may_exclude) -> dict:
    return {"pair": pair, "change": pairs.difference(pair), "can_exclude": may_exclude(pair)}


@require_GET
def transcript_pairs(request, pk):
    transcript = transcript_for(request, pk)
    try:
        require_pairs_reader(transcript.dataset, request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    may_exclude = pairs.excluder(transcript.dataset, request.user)
    page = Paginator(pairs.pairs_of_transcript(transcript), PAGE_SIZE).get_page(
        int_param(request.GET.get("page"), 1)
    )
    return render(
        request,
        TEMPLATE,
        {
            "transcript": transcript,
            "dataset": transcript.dataset,
            "page": page,
            "shown": [_shown(pair, may_exclude) for pair in page.object_list],
            "back": request.get_full_path(),
        },
    )


@require_GET
def dataset_pairs(request, slug):
    dataset = visible_dataset(request.user, slug)
    try:
        require_pairs_reader(dataset, request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    source = request.GET.get("source") or None
    excluded = request.GET.get("excluded", "")
    error = ""
    try:
        wanted = pairs.PairFilter(source=source, excluded=EXCLUDED_CHOICES.get(excluded))
    except DomainError as refused:  # a typed URL with an unknown source: say so, list all
        error, source, wanted = refused.message, None, pairs.PairFilter()
    listed = pairs.pairs_of_dataset(dataset, wanted).defer("prompt")
    may_exclude = pairs.excluder(dataset, request.user)
    page = Paginator(listed, PAGE_SIZE).get_page(int_param(request.GET.get("page"), 1))
    excluded = excluded if excluded in EXCLUDED_CHOICES else ""
    context = {
        "dataset": dataset,
        "page": page,
        "rows": [_shown(pair, may_exclude) for pair in page.object_list],
        "source": source or "",
        "excluded": excluded,
        "sources": PairSource.choices,
        # the pages' links keep the filters
        "page_query": urlencode({"source": source or "", "excluded": excluded}) + "&",
        "filter_error": error,
        "back": request.get_full_path(),
    }
    return render(request, "editor/dataset_pairs.html", context)


def _toggle(request, pk, change):
    try:
        pair = visible_pair(request.user, pk)
        change(pair, request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = ""
    if request.headers.get("HX-Request"):
        partial = "row" if request.POST.get("shown_as") == "row" else "pair"
        context = {
            **_shown(pair, pairs.excluder(pair.transcript.dataset, request.user)),
            "back": back,
        }
        return render(request, f"editor/pairs.html#{partial}", context)
    if back:
        return redirect(back)
    return redirect("transcript-pairs", pk=pair.transcript_id)


@require_POST
def pair_exclude(request, pk):
    return _toggle(request, pk, pairs.exclude_pair)


@require_POST
def pair_include(request, pk):
    return _toggle(request, pk, pairs.include_pair)
