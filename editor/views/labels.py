"""Labels in the browser: curators write the schemas (a page per dataset); annotators answer
their questions on the transcript page and in the queue view, one answer at a time, saved as
a draft as it is given; spans are tagged by selecting text. Thin views over ``editor.labels``
and ``editor.labels.annotations``."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from editor import labels
from editor.errors import DomainError, NotAllowed
from editor.labels import annotations
from editor.models import Annotation, LabelSchema, Transcript
from editor.presentation.transcript_view import transcript_view
from editor.views.shared import int_param, transcript_for
from editor.views.transcripts import transcript_context
from editor.visibility import visible_dataset

TEMPLATE = "editor/transcript.html"
WORKING_AUDIENCE = "annotator"


def _transcript(request, pk: int) -> Transcript:
    transcript = transcript_for(request, pk)
    if not transcript.dataset.can_edit(request.user):
        raise PermissionDenied("Your role in this dataset does not annotate.")
    return transcript


def _question(request, transcript: Transcript):
    schema_id = int_param(request.POST.get("schema"))
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
    message_index = int_param(request.POST.get("message_index"))
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
    except DomainError as refused:
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
    index = int_param(request.POST.get("message_index"))
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
            start=int_param(request.POST.get("start")),
            end=int_param(request.POST.get("end")),
        )
    except DomainError as refused:
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
    except DomainError as refused:
        error = refused.message
    return _card(request, annotation.transcript, annotation.message_index or 0, error=error)


# --- label schemas (curators) -----------------------------------------------------------------

SCHEMAS_TEMPLATE = "editor/label_schemas.html"
QUESTIONS_EXAMPLE = [
    {
        "key": "helpful",
        "kind": "choice",
        "prompt": "Was the answer helpful?",
        "required": True,
        "options": [
            {"value": "yes", "label": "Yes", "key": "1"},
            {"value": "no", "label": "No", "key": "2"},
        ],
    },
    {
        "key": "hallucination",
        "kind": "span",
        "prompt": "Tag hallucinations in final answers",
        "roles": ["assistant"],
        "channels": ["final"],
        "tags": [{"value": "hallucination", "label": "Hallucination", "key": "h"}],
    },
]


def _curated_dataset(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.can_curate(request.user):
        raise PermissionDenied("Only curators write label schemas.")
    return dataset


def _schemas_context(dataset, **extra) -> dict:
    schemas = list(
        LabelSchema.objects.filter(dataset=dataset).with_current_version().order_by("name")
    )
    return {
        "dataset": dataset,
        "schemas": [
            (schema, json.dumps(schema.current_version.questions, indent=2, ensure_ascii=False))
            for schema in schemas
        ],
        "example": json.dumps(QUESTIONS_EXAMPLE, indent=2),
        **extra,
    }


@require_GET
def label_schemas(request, slug):
    """The dataset's label schemas: create one, give one a new version, archive one."""
    dataset = _curated_dataset(request, slug)
    return render(request, SCHEMAS_TEMPLATE, _schemas_context(dataset))


def _questions(request):
    try:
        return json.loads(request.POST.get("questions") or "[]")
    except json.JSONDecodeError as error:
        raise labels.InvalidLabelSchema(
            f"The questions are not JSON: {error.msg} (line {error.lineno}, column {error.colno})."
        ) from None


@require_POST
def label_schema_save(request, slug):
    """Create a schema (no ``schema``) or write a new version of one; an error keeps what the
    curator typed and names the question it is about."""
    dataset = _curated_dataset(request, slug)
    schema_id = int_param(request.POST.get("schema"))
    try:
        questions = _questions(request)
        if schema_id is None:
            labels.create_label_schema(
                dataset,
                author=request.user,
                name=request.POST.get("name", ""),
                questions=questions,
                instructions=request.POST.get("instructions", ""),
            )
            note = "Schema created."
        else:
            schema = get_object_or_404(LabelSchema.objects.filter(dataset=dataset), pk=schema_id)
            if request.POST.get("archive") is not None:
                labels.set_archived(
                    schema, author=request.user, archived=request.POST["archive"] == "1"
                )
                note = "Archived." if request.POST["archive"] == "1" else "Brought back."
            else:
                _, created = labels.new_schema_version(
                    schema,
                    author=request.user,
                    questions=questions,
                    instructions=request.POST.get("instructions", ""),
                    expected_version=int_param(request.POST.get("expected_version")),
                )
                note = "New version saved." if created else "Nothing changed."
    except DomainError as refused:
        context = _schemas_context(
            dataset,
            refusal=refused,
            typed=request.POST.get("questions", ""),
            typed_for=schema_id,
            typed_name=request.POST.get("name", ""),
        )
        return render(request, SCHEMAS_TEMPLATE, context, status=refused.status)
    messages.success(request, note)
    return redirect("label-schemas", slug=dataset.slug)
