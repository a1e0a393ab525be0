"""Answering label questions in the browser (the transcript page and the queue view): one
answer at a time, saved as a draft as it is given; spans tagged by selecting text. Thin views
over ``editor.annotations``."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST

from . import annotations, labels
from .errors import NotAllowed, StorageError
from .message_views import transcript_context
from .models import Annotation, LabelSchema, Transcript
from .transcript_page import transcript_view

TEMPLATE = "editor/transcript.html"
WORKING_AUDIENCE = "annotator"


def _transcript(request, pk: int) -> Transcript:
    transcript = get_object_or_404(
        Transcript.objects.for_user(request.user).select_related("dataset"), pk=pk
    )
    if not transcript.dataset.can_edit(request.user):
        raise PermissionDenied("Your role in this dataset does not annotate.")
    return transcript


def _question(request, transcript: Transcript):
    schema_id = _int(request.POST.get("schema"))
    if schema_id is None:
        raise Http404("No such label schema.")
    schema = get_object_or_404(
        LabelSchema.objects.filter(dataset=transcript.dataset_id).with_current_version(),
        pk=schema_id,
    )
    question = labels.definition_of(schema.current_version).question(
        request.POST.get("question", "")
    )
    if question is None:
        raise Http404("No such question.")
    return schema, question


def _int(value) -> int | None:
    return int(value) if value not in (None, "") and str(value).isdigit() else None


def _posted_value(request, question):
    """The form's answer as the question's kind has it (a list, a number, text)."""
    if question.kind == "multi_choice":
        return request.POST.getlist("value")
    value = request.POST.get("value", "")
    if question.kind == "rating":
        return int(value) if value.isdigit() else value
    return value


@require_POST
def transcript_answer(request, pk):
    """Save one answer (about the transcript, or ``message_index``); answers with the
    question's status, out of band."""
    transcript = _transcript(request, pk)
    schema, question = _question(request, transcript)
    message_index = _int(request.POST.get("message_index"))
    context = {"schema": schema, "question": question, "oob": True, "index": message_index}
    try:
        annotations.answer(
            transcript,
            annotator=request.user,
            schema=schema,
            question=question.key,
            value=_posted_value(request, question),
            message_index=message_index,
        )
    except StorageError as refused:
        context["error"] = refused.message
    response = render(request, "editor/labels.html#answer-status", context)
    response["HX-Reswap"] = "none"
    return response


def _card(request, transcript: Transcript, index: int, *, error: str = ""):
    """Message ``index``'s card again, with its questions and spans."""
    transcript.refresh_from_db()
    context = transcript_context(request, transcript, WORKING_AUDIENCE)
    context.update(card=transcript_view(transcript, WORKING_AUDIENCE).card(index), span_error=error)
    return render(request, TEMPLATE + "#message", context)


@require_POST
def transcript_span(request, pk):
    """Tag the characters ``start:end`` of message ``message_index`` (its logical text)."""
    transcript = _transcript(request, pk)
    schema, question = _question(request, transcript)
    index = _int(request.POST.get("message_index"))
    if index is None:
        raise Http404("No such message.")
    error = ""
    try:
        annotations.create_annotation(
            transcript,
            annotator=request.user,
            schema=schema,
            question=question.key,
            value=request.POST.get("value", ""),
            message_index=index,
            start=_int(request.POST.get("start")),
            end=_int(request.POST.get("end")),
        )
    except StorageError as refused:
        error = refused.message
    return _card(request, transcript, index, error=error)


@require_POST
def annotation_delete(request, pk):
    """Remove one's own draft answer (a span tag, say) and show its message again."""
    annotation = get_object_or_404(
        Annotation.objects.select_related("transcript__dataset").filter(
            transcript__in=Transcript.objects.for_user(request.user)
        ),
        pk=pk,
    )
    error = ""
    try:
        annotations.delete_annotation(annotation, user=request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except StorageError as refused:
        error = refused.message
    return _card(request, annotation.transcript, annotation.message_index or 0, error=error)
