"""Labels in the browser: curators write the schemas (a page per dataset); annotators answer
their questions on the transcript page and in the queue view, one answer at a time, saved as
a draft as it is given; spans are tagged by selecting text. Thin views over ``editor.labels``
and ``editor.labels.annotations``."""

from __future__ import annotations

import json
from types import SimpleNamespace

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from editor import labels, queues
from editor.errors import DomainError, NotAllowed
from editor.labels import annotations, builder
from editor.labels.starters import STARTERS
from editor.models import Annotation, LabelSchema, Transcript
from editor.presentation.transcript_view import transcript_view
from editor.views.shared import int_param, transcript_for
from editor.views.transcripts import transcript_context
from editor.visibility import visible_dataset, visible_queue

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
    if question.kind == "pairwise":
        return _pairwise_value(request.POST, question)
    return value


def _pairwise_value(posted, question) -> dict:
    """A pairwise block's fields as its answer (docs/labels.md): ``order`` (the ids as
    shown), ``choice`` (an id or "tie"), ``reason``, ``rating-<id>-<criterion>``. What is not
    a number is passed on as typed, for the question's check to name."""
    order = [_whole(item) for item in posted.getlist("order")]
    value = {"order": order, "choice": _whole(posted.get("choice", ""))}
    if question.reason != "off":
        value["reason"] = posted.get("reason", "")
    ratings: dict = {}
    for side in order:
        for criterion in question.rubric:
            given = posted.get(f"rating-{side}-{criterion.key}", "")
            if given:
                ratings.setdefault(str(side), {})[criterion.key] = _whole(given)
    if ratings:
        value["ratings"] = ratings
    return value


def _whole(text: str) -> int | str:
    return int(text) if text.isdigit() and len(text) < 12 else text


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
SAVES = ("save", "save-json")
# The preview renders the queue's own question partial, which posts each answer to a
# transcript: its questions stand for no schema and no transcript (and the preview turns
# htmx off, so they post nothing).
PREVIEW_STAND_IN = SimpleNamespace(pk=0)


def _curated_dataset(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.can_curate(request.user):
        raise PermissionDenied("Only curators write label schemas.")
    return dataset


def _check(questions: list[dict]) -> list[dict]:
    """Every problem of ``questions``, each ``{question, index, field, message}``."""
    try:
        labels.parse_definition(questions)
    except DomainError as refused:
        return _problems_of(refused)
    return []


def _problems_of(refused: DomainError) -> list[dict]:
    if isinstance(refused.details, list):
        return refused.details
    return [{"question": None, "index": None, "field": "", "message": refused.message}]


def _builder_context(
    dataset,
    schema: LabelSchema | None,
    rows: list[dict],
    *,
    name: str = "",
    instructions: str = "",
    json_text: str | None = None,
    problems: list[dict] = (),
) -> dict:
    """What the builder shows: a card per question (its fields, its problems and its
    preview), the JSON of the whole, and the problems that are about no one question."""
    questions = [builder.question_from_row(row) for row in rows]
    by_row: dict[int, list[dict]] = {}
    general = []
    for problem in problems:
        index = problem.get("index")
        if index is None or not 0 <= index < len(rows):
            general.append(problem)
        else:
            by_row.setdefault(index, []).append(problem)
    items = []
    for place, (row, question) in enumerate(zip(rows, questions, strict=True)):
        shown = builder.previewable(question)
        row_problems = by_row.get(place, [])
        errors: dict[str, list[str]] = {}
        for problem in row_problems:
            errors.setdefault(builder.field_of(problem), []).append(problem["message"])
        items.append(
            {
                "n": place,
                "row": row,
                "kind_name": builder.KIND_NAMES.get(row["kind"], row["kind"]),
                "question": shown,
                # a span question previews as the queue's message labels show its tags
                "labels": {
                    "tags": [
                        {"schema": PREVIEW_STAND_IN, "question": shown, "tag": tag}
                        for tag in (shown.tags if shown is not None else [])
                    ]
                },
                "problems": row_problems,
                "errors": errors,
            }
        )
    return {
        "builder_schema": schema,
        "items": items,
        "last": len(items) - 1,
        "name": name,
        "instructions": instructions,
        "json": builder.as_json(questions) if json_text is None else json_text,
        "general_problems": general,
        "starters": STARTERS,
        "kinds": builder.KIND_NAMES,
        "reason_choices": builder.REASON_NAMES,
        "preview_schema": PREVIEW_STAND_IN,
        "preview_transcript": PREVIEW_STAND_IN,
    }


def _page_context(dataset, builder_context: dict, **extra) -> dict:
    schemas = LabelSchema.objects.filter(dataset=dataset).with_current_version().order_by("name")
    return {"dataset": dataset, "schemas": schemas, **builder_context, **extra}


def _schema_of(dataset, schema_id) -> LabelSchema | None:
    if schema_id is None:
        return None
    return get_object_or_404(
        LabelSchema.objects.filter(dataset=dataset).with_current_version(), pk=schema_id
    )


@require_GET
def label_schemas(request, slug):
    """The dataset's label schemas, and the builder: for ``?schema=<id>`` (a new version of
    it), else for a new schema."""
    dataset = _curated_dataset(request, slug)
    schema = _schema_of(dataset, int_param(request.GET.get("schema")))
    if schema is None:
        context = _builder_context(dataset, None, [])
    else:
        version = schema.current_version
        context = _builder_context(
            dataset,
            schema,
            builder.rows_from_json(version.questions),
            instructions=version.instructions,
        )
    return render(request, SCHEMAS_TEMPLATE, _page_context(dataset, context))


def _questions(request):
    try:
        return json.loads(request.POST.get("questions") or "[]")
    except json.JSONDecodeError as error:
        raise labels.InvalidLabelSchema(
            f"The questions are not JSON: {error.msg} (line {error.lineno}, column {error.colno})."
        ) from None


@require_POST
def label_schema_save(request, slug):
    """Everything the builder posts. ``action``: ``save`` (the default: the form's questions,
    or the JSON ``questions`` when no form rows come), ``save-json`` (the JSON tab's text),
    ``archive``; else a change of the form answered with the builder again (htmx): ``preview``
    (typing), ``json`` (the JSON tab into the form), ``starter:<name>``, ``add:<kind>``,
    ``remove:<n>``, ``up:<n>``, ``down:<n>``. A refused save keeps what the curator typed and
    marks each problem on its question and field."""
    dataset = _curated_dataset(request, slug)
    schema = _schema_of(dataset, int_param(request.POST.get("schema")))
    if schema is not None and request.POST.get("archive") is not None:
        return _archive(request, dataset, schema)
    action = request.POST.get("action") or "save"
    posted_rows = "q" in request.POST
    rows = builder.rows_from_post(request.POST)
    typed = {
        "name": request.POST.get("name", ""),
        "instructions": request.POST.get("instructions", ""),
    }
    if action in SAVES:
        from_json = action == "save-json" or not posted_rows
        try:
            questions = _questions(request) if from_json else _rows_questions(rows)
            saved, note = _save(request, dataset, schema, questions, **typed)
        except DomainError as refused:
            if from_json:
                rows = _rows_of_typed_json(request, rows)
            context = _builder_context(
                dataset,
                schema,
                rows,
                **typed,
                json_text=request.POST.get("questions") if from_json else None,
                problems=_problems_of(refused),
            )
            context = _page_context(dataset, context, refusal=refused)
            return render(request, SCHEMAS_TEMPLATE, context, status=refused.status)
        messages.success(request, note)
        return redirect(_schemas_url(dataset, saved))
    problems: list[dict] = []
    json_text = None
    if action == "json":
        try:
            rows = builder.rows_from_json(_questions(request))
        except DomainError as refused:
            problems, json_text = _problems_of(refused), request.POST.get("questions", "")
    elif action.startswith("starter:") and action[8:] in STARTERS:
        starter = STARTERS[action[8:]]
        rows = builder.rows_from_json(starter["questions"])
        typed["name"] = typed["name"] or starter["title"]
    elif action == "preview":
        problems = _check(_rows_questions(rows))
    else:
        rows = builder.moved(rows, action)
    context = _builder_context(
        dataset, schema, rows, **typed, json_text=json_text, problems=problems
    )
    if not request.htmx:
        return render(request, SCHEMAS_TEMPLATE, _page_context(dataset, context))
    partial = "#schema-preview-answer" if action == "preview" else "#schema-builder"
    return render(request, SCHEMAS_TEMPLATE + partial, _page_context(dataset, context))


def _rows_questions(rows: list[dict]) -> list[dict]:
    return [builder.question_from_row(row) for row in rows]


def _rows_of_typed_json(request, rows: list[dict]) -> list[dict]:
    """The form rows for JSON that was refused: its questions when it is JSON at all."""
    try:
        return builder.rows_from_json(json.loads(request.POST.get("questions") or "[]")) or rows
    except json.JSONDecodeError:
        return rows


def _save(request, dataset, schema, questions, *, name: str, instructions: str):
    """Create the schema, or give it a new version; the schema it is and what to say."""
    if schema is None:
        created = labels.create_label_schema(
            dataset, author=request.user, name=name, questions=questions, instructions=instructions
        )
        return created, "Schema created."
    _, changed = labels.new_schema_version(
        schema,
        author=request.user,
        questions=questions,
        instructions=instructions,
        expected_version=int_param(request.POST.get("expected_version")),
    )
    return schema, "New version saved." if changed else "Nothing changed."


def _archive(request, dataset, schema):
    archived = request.POST["archive"] == "1"
    try:
        labels.set_archived(schema, author=request.user, archived=archived)
    except DomainError as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, "Archived." if archived else "Brought back.")
    return redirect("label-schemas", slug=dataset.slug)


def _schemas_url(dataset, schema: LabelSchema) -> str:
    return f"{reverse('label-schemas', args=[dataset.slug])}?schema={schema.pk}"


@require_POST
def queue_schemas_save(request, pk):
    """Choose which schemas a queue asks (curators), from the dataset page."""
    queue = visible_queue(request.user, pk)
    try:
        chosen = queues.schemas_by_id(
            queue.dataset, [int(pk) for pk in request.POST.getlist("schemas") if pk.isdigit()]
        )
        queues.set_schemas(queue, chosen, author=request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, f"Queue “{queue.name}” now asks what you chose.")
    return redirect(reverse("dataset", args=[queue.dataset.slug]) + "#queues")
