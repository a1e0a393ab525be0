"""A turn's alternatives on the transcript page: the panel under the turn, adding one (text
for a single assistant message, or JSON messages), promoting one (a revision: the page is
loaded again) and deleting one. Thin views over ``editor.alternatives``; editors only (the
alternatives hold whole messages: viewers get 403)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from editor import alternatives
from editor.errors import AlternativeNotFound, DomainError, NotATurn
from editor.models import Transcript
from editor.views.shared import editable_transcript, int_param

PANEL = "editor/alternatives.html#turn-alternatives"


def _panel(request, transcript: Transcript, index: int, **extra) -> HttpResponse:
    """The turn's panel (open), or the transcript page when the request is not htmx's."""
    if not request.htmx:
        if extra.get("alt_error"):
            flash.error(request, extra["alt_error"])
        return redirect(f"{reverse('transcript', args=[transcript.pk])}#message-{index}")
    context = {
        "transcript": transcript,
        "alt_turn": alternatives.turn_panel(transcript, index, request.user),
        "can_edit": True,
        "open": True,
        **extra,
    }
    return render(request, PANEL, context)


def _turn_of(transcript: Transcript, index) -> tuple[int, str | None]:
    """The first index of the turn holding message ``index``, and the channel of its last
    message (where a plain-text alternative goes)."""
    index = int_param(index)
    messages = transcript.stored_messages()
    if index is None:
        raise NotATurn("Say which message's turn.")
    start = alternatives.turn_start_of(messages, index)
    return start, messages[alternatives.turn_end(messages, start) - 1].channel


@require_GET
def alternatives_panel(request, pk, index):
    """The alternatives of the turn holding message ``index`` (the message menu asks for it)."""
    transcript = editable_transcript(request, pk)
    try:
        start, _ = _turn_of(transcript, index)
    except DomainError as refused:
        return _refusal(refused)
    return _panel(request, transcript, start)


@require_POST
def alternative_add(request, pk):
    transcript = editable_transcript(request, pk)
    typed = request.POST.get("messages", "")
    try:
        start, channel = _turn_of(transcript, request.POST.get("message_index"))
    except DomainError as refused:
        return _refusal(refused)
    try:
        alternatives.add_alternative(
            transcript,
            start,
            alternatives.parse_messages(typed, channel=channel),
            source="hand",
            author=request.user,
        )
    except DomainError as refused:
        return _panel(request, transcript, start, alt_error=refused.message, alt_typed=typed)
    return _panel(request, transcript, start)


@require_POST
def alternative_promote(request, pk, alt):
    transcript = editable_transcript(request, pk)
    alternative = _alternative(transcript, alt)
    try:
        alternatives.promote(
            transcript,
            alternative,
            expected_version=int_param(request.POST.get("version"), -1),
            author=request.user,
        )
    except DomainError as refused:
        transcript.refresh_from_db()
        return _panel(request, transcript, alternative.message_index, alt_error=refused.message)
    # The page again, at the turn (a new URL: a hash alone would not load the page anew).
    page = f"{reverse('transcript', args=[transcript.pk])}?goto={alternative.message_index}"
    if request.htmx:  # the messages changed: the whole page again
        response = HttpResponse(status=204)
        response["HX-Redirect"] = page
        return response
    flash.info(request, f"Promoted alternative {alternative.pk}.")
    return redirect(page)


@require_POST
def alternative_delete(request, pk, alt):
    transcript = editable_transcript(request, pk)
    alternative = _alternative(transcript, alt)
    if not alternatives.can_delete(alternative, request.user):
        raise PermissionDenied("Only a curator or the one who added it may delete it.")
    error = ""
    try:
        alternatives.delete_alternative(alternative, user=request.user)
    except DomainError as refused:
        error = refused.message
    return _panel(request, transcript, alternative.message_index, alt_error=error)


def _alternative(transcript: Transcript, alt):
    try:
        return alternatives.alternative_of(transcript, alt)
    except AlternativeNotFound as missing:
        raise Http404(missing.message) from None


def _refusal(refused: DomainError) -> HttpResponse:
    return HttpResponse(format_html('<p class="form-error" role="alert">{}</p>', refused.message))
