"""The transcript page: its renderings (tabs), its messages a page at a time, and the
context every view that shows a transcript builds on (the editor, labels, the queue)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.shortcuts import render
from django.urls import Resolver404, resolve
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from editor import alternatives, formats, queues, tokens, workflow
from editor.assist import suggestions
from editor.errors import NotAllowed
from editor.labels import annotations
from editor.models import (
    ALL_AUDIENCES,
    END_USER_AUDIENCE,
    ReviewQueue,
    Revision,
    Transcript,
    UserPreference,
)
from editor.presentation.display import source_segments
from editor.presentation.training import CONVENTION_LABELS, TRAINING
from editor.presentation.transcript_view import (
    end_choices,
    form_fields,
    message_labels,
    ordered_diagnostics,
    transcript_view,
)
from editor.views.shared import int_param, transcript_for
from editor.visibility import FULL_CONTENT, require_audience

TEMPLATE = "editor/transcript.html"
AUDIENCE_LABELS = {
    "end_user": "End user",
    "annotator": "Annotator",
    "debug": "Source",
    "training": "Training",
}
ANNOTATOR_AUDIENCE = "annotator"


RECENT_REVISIONS = 10


def transcript_context(
    request, transcript: Transcript, audience: str, *, message_questions: list | None = None
) -> dict:
    """What every view showing ``transcript`` needs; ``message_questions``: the questions
    about messages asked there (by default those of the queue the request comes from, if
    any, else every active one)."""
    allowed = transcript.dataset.audiences_for(request.user)
    if message_questions is None:
        message_questions = _questions_of_the_workspace(request, transcript)
    return {
        "transcript": transcript,
        "audience": audience,
        "audiences": [(a, AUDIENCE_LABELS[a], a in allowed) for a in ALL_AUDIENCES],
        "can_edit": transcript.dataset.can_edit(request.user),
        "message_count": transcript.message_count,
        # Tokens per message and in all, against the dataset's context length (editor.tokens).
        "token_budget": tokens.budget(transcript),
        "transitions": workflow.allowed_transitions(transcript, request.user),
        # The model's suggestions on them too (one query, only when messages are asked about).
        "labels_by_message": message_labels(
            transcript,
            request.user,
            message_questions,
            decorate=lambda found: suggestions.with_message_suggestions(
                transcript, request.user, found
            ),
        )
        if audience != END_USER_AUDIENCE and transcript.dataset.can_edit(request.user)
        else {},
        "spec_ids": formats.spec_ids(),
        "can_see_all": FULL_CONTENT in allowed,
        "diagnostics": ordered_diagnostics(transcript.diagnostics)
        if FULL_CONTENT in allowed
        else [],
        # lazy: read only by the responses that show the History panel
        "revisions": Revision.objects.for_transcript(transcript)[:RECENT_REVISIONS],
        "page_panels": not _asked_from_a_workspace(request),
        # The alternatives of turns, by the turn's last message (shown under it); lazy: read
        # once, by the first message card that asks, and only by those who may edit. Not in
        # a queue's workspace: a pairwise item there shows them blind, in an order of its own.
        "turn_alternatives": SimpleLazyObject(
            lambda: (
                alternatives.turn_panels(transcript, request.user)
                if transcript.dataset.can_edit(request.user)
                and audience != END_USER_AUDIENCE
                and not _asked_from_a_workspace(request)
                else alternatives.TurnPanels(offered=False)
            )
        ),
    }


# Pages that show a transcript's messages without its status buttons and History panel.
WORKSPACES = frozenset({"queue"})


def _asking_page(path: str | None):
    """The URL pattern match of the page at ``path``, or None."""
    if not path:
        return None
    try:
        return resolve(urlsplit(path).path)
    except Resolver404:
        return None


def _questions_of_the_workspace(request, transcript: Transcript) -> list | None:
    """The questions about messages that the queue showing ``transcript`` asks, when a queue
    page asks (itself, or an htmx request from it); None elsewhere: every active one."""
    match = _asking_page(request.htmx.current_url_abs_path if request.htmx else request.path)
    if match is None or match.url_name != "queue":
        return None
    queue = ReviewQueue.objects.filter(pk=match.kwargs["pk"], dataset=transcript.dataset_id).first()
    return queues.queue_questions(queue, "message") if queue is not None else None


def _asked_from_a_workspace(request) -> bool:
    """Whether the page asking (htmx names it in ``HX-Current-URL``) is a workspace: its
    answers then leave out the transcript page's panels, which would find no place there
    (htmx reports each as an error)."""
    match = _asking_page(request.htmx.current_url_abs_path if request.htmx else None)
    return match is not None and match.url_name in WORKSPACES


@require_GET
@vary_on_headers("HX-Request")
def transcript_detail(request, pk):
    """The page; with HX-Request the messages section (a tab switch) or one more page of
    messages (``?page=N``, loaded as the list scrolls)."""
    transcript = transcript_for(request, pk)
    audience = request.GET.get("audience") or starting_audience(request.user, transcript)
    context = transcript_context(request, transcript, audience)
    status = 200
    convention = request.GET.get("convention") or None
    if audience not in ALL_AUDIENCES:
        context["refusal"] = (None, f"Unknown audience {audience!r}; choose one of the tabs.")
        status = 400
    elif audience == TRAINING and convention not in (None, *CONVENTION_LABELS):
        context["refusal"] = (None, f"Unknown convention {convention!r}; choose one in the list.")
        status = 400
    else:
        try:
            require_audience(transcript.dataset, request.user, audience)
        except NotAllowed as refused:
            context["refusal"] = (refused.code, refused.message)
            status = refused.status
    if status == 200:
        view = transcript_view(transcript, audience, convention)
        if view.convention:
            context.update(training_context(view))
        page = int_param(request.GET.get("page"))
        if request.htmx and page is not None:
            before = request.GET.get("before") == "1"
            return render(
                request,
                TEMPLATE + "#message-pages",
                _page_context(context, view, page, before=before),
            )
        editing_index = int_param(request.GET.get("edit"))
        focus = _goto(request, transcript)
        upto = (
            focus if focus is not None else int_param(request.GET.get("upto"), editing_index or 0)
        )
        context["focus_index"] = focus
        if "audience" in request.GET:
            UserPreference.remember_audience(request.user, audience)
        if context["can_edit"] and not request.htmx:
            context["transcript_questions"] = suggestions.with_suggestions(
                transcript,
                request.user,
                annotations.with_my_answers(
                    transcript, request.user, annotations.transcript_questions(transcript.dataset)
                ),
            )
        context.update(message_list_context(view, view.page_holding(upto) if upto else 0))
        if editing_index is not None and context["can_edit"]:
            context.update(editing_context(request, transcript, editing_index))
    template = TEMPLATE + ("#transcript-messages" if request.htmx else "")
    return render(request, template, context, status=status)


def training_context(view) -> dict:
    """The training rendering's selector and its trained tokens (when counted)."""
    return {
        "convention": view.convention,
        "conventions": list(CONVENTION_LABELS.items()),
        "trained_tokens": view.trained_tokens,
    }


def starting_audience(user, transcript: Transcript) -> str:
    """The rendering the page opens in when the address names none: the one ``user`` last
    picked, if their role still shows it; else the annotator rendering for people who may
    edit (labels and error badges show there), the end user's for everyone else."""
    allowed = transcript.dataset.audiences_for(user)
    preference = UserPreference.of(user)
    if preference is not None and preference.audience in allowed:
        return preference.audience
    if transcript.dataset.can_edit(user) and ANNOTATOR_AUDIENCE in allowed:
        return ANNOTATOR_AUDIENCE
    return END_USER_AUDIENCE


def message_list_context(view, focus_page: int) -> dict:
    """The messages section as a window: page ``focus_page``, with a loader for the pages on
    either side (the pages beside it come as the list scrolls), so that no answer renders a
    long transcript whole wherever the user is in it."""
    context = {"view": view, **_window(view, focus_page, focus_page)}
    if view.source is not None:
        context["segments"] = source_segments(view)
        # A very long source is shown in part (transcript_view._view, _debug_source): say so.
        context["source_is_part"] = len(view.source) < len(view.transcript.source_text or "")
    return context


def _window(view, first: int, last: int, *, before: bool = True, after: bool = True) -> dict:
    """Pages ``first`` to ``last`` (each ``(number, turns)``) and the loaders beside them."""
    pages = [(n, view.page(n)) for n in range(first, last + 1)]
    context = {"pages": [(n, turns) for n, turns in pages if turns]}
    if before and first > 0:
        context["previous_page"] = first - 1
    if after and last + 1 < view.page_count:
        context["next_page"] = last + 1
    return context


def _page_context(context: dict, view, page: int, *, before: bool) -> dict:
    """One more page as the list scrolls: above the window (``before``) with the loader of the
    page before it, or below it with the loader of the page after."""
    page = min(max(page, 0), view.page_count - 1)
    return {**context, "view": view, **_window(view, page, page, before=before, after=not before)}


def editing_context(request, transcript, index) -> dict:
    """The edit form's context for message ``index``, shown in the page in its card's place."""
    message = transcript.stored_message(index) if index >= 0 else None
    if message is None:
        return {}
    return {
        "editing_index": index,
        "message_index": index,
        "message": message,
        "fields": form_fields(transcript.spec, message),
        "end_choices": end_choices(transcript.spec),
    }


def _goto(request, transcript: Transcript) -> int | None:
    """The message ``?goto=N`` asks for, within the transcript (the go-to box, ``G``)."""
    wanted = int_param(request.GET.get("goto"))
    if wanted is None or not transcript.message_count:
        return None
    return min(max(wanted, 0), transcript.message_count - 1)
