"""Suggestions as people meet them: the model's answers about a transcript (shown pre-selected
and marked as the model's), and accepting one, which makes it the person's own answer.

A suggestion is never a person's answer: it lives in its own table, so agreement, progress
and exports (which read ``Annotation``) never count it. Accepting one writes an
``Annotation`` by the person who accepts (a draft, as any answer they give) and records who
accepted it (``Suggestion.accepted_by``); the answer is then theirs.

Who reads them: the roles that see the annotator's rendering (``Dataset.sees_hidden``): a
judge read the whole transcript, hidden parts included, and its answer may tell of them.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from editor.errors import NotAllowed, SuggestionNotFound
from editor.labels import definition_of
from editor.labels.annotations import active_questions, answer
from editor.models import Annotation, LabelSchema, Suggestion, Transcript


def require_reader(dataset, user) -> None:
    if not dataset.sees_hidden(user):
        raise NotAllowed("Your role sees what the end user sees only: not the model's answers.")


def suggestions_of(transcript: Transcript, user) -> list[Suggestion]:
    """The newest suggestion per question of the active schemas' current versions: about the
    whole transcript, and per message for the questions about each message."""
    require_reader(transcript.dataset, user)
    current = {
        (schema.current_version_id, question.key, question.applies_to == "message")
        for target in ("transcript", "message")
        for schema, question in active_questions(transcript.dataset, target)
    }
    newest: dict[tuple, Suggestion] = {}
    for suggestion in Suggestion.objects.filter(transcript=transcript).order_by(
        "-created_at", "-pk"
    ):
        about = (
            suggestion.schema_version_id,
            suggestion.question,
            suggestion.message_index is not None,
        )
        key = (*about, suggestion.message_index)
        if about in current and key not in newest:
            newest[key] = suggestion
    return list(newest.values())


def accept(suggestion: Suggestion, *, user) -> Annotation:
    """Make ``suggestion`` ``user``'s answer (a new draft, or their draft changed to it) and
    record that they accepted it. Refused as any answer of theirs would be (their role, an
    archived schema, a value the current version no longer takes)."""
    schema = LabelSchema.objects.select_related("current_version", "dataset").get(
        pk=suggestion.schema_version.schema_id
    )
    if definition_of(schema.current_version).question(suggestion.question) is None:
        raise SuggestionNotFound("The schema has no such question any more.")
    with transaction.atomic():
        annotation = answer(
            suggestion.transcript,
            annotator=user,
            schema=schema,
            question=suggestion.question,
            value=suggestion.value,
            message_index=suggestion.message_index,
        )
        Suggestion.objects.filter(pk=suggestion.pk).update(
            accepted_by=user, accepted_at=timezone.now()
        )
    suggestion.refresh_from_db()
    return annotation


def with_suggestions(transcript: Transcript, user, questions: list[dict]) -> list[dict]:
    """``questions`` (``annotations.with_my_answers``'s) each with the model's ``suggestion``
    (None without one, or for a role that does not read them). A question ``user`` has not
    answered shows the suggestion's value pre-selected (``suggested``): it is not their answer
    until they accept it or answer themselves. One query: the questions are those given."""
    if not questions or not transcript.dataset.sees_hidden(user):
        return questions
    wanted = {(q["schema"].current_version_id, q["question"].key) for q in questions}
    found: dict[tuple[int, str], Suggestion] = {}
    for suggestion in Suggestion.objects.filter(
        transcript=transcript,
        message_index__isnull=True,
        schema_version__in={version for version, _ in wanted},
    ).order_by("-created_at", "-pk"):
        found.setdefault((suggestion.schema_version_id, suggestion.question), suggestion)
    for q in questions:
        suggestion = found.get((q["schema"].current_version_id, q["question"].key))
        q["suggestion"] = suggestion
        if suggestion is not None and q["value"] is None:
            q["value"], q["suggested"] = suggestion.value, True
    return questions


def export_rows(transcript: Transcript) -> list[dict]:
    """The newest suggestion per question about ``transcript`` (and per message, for a
    question about each message: ``"message": index``), as an export's ``suggestions``
    (``with_suggestions``): each marked ``"source": "model"``, apart from the people's
    ``annotations``."""
    newest: dict[tuple, Suggestion] = {}
    for suggestion in (
        Suggestion.objects.filter(transcript=transcript)
        .select_related("schema_version__schema", "accepted_by")
        .order_by("-created_at", "-pk")
    ):
        key = (suggestion.schema_version_id, suggestion.question, suggestion.message_index)
        newest.setdefault(key, suggestion)
    rows = []
    for s in sorted(
        newest.values(),
        key=lambda s: (
            s.schema_version_id,
            s.question,
            -1 if s.message_index is None else s.message_index,
        ),
    ):
        row = {
            "source": "model",
            "model": s.model,
            "schema": s.schema_version.schema.name,
            "schema_version": s.schema_version.number,
            "question": s.question,
            "value": s.value,
            "rationale": s.rationale,
            "run": s.run_id,
            "accepted_by": s.accepted_by.get_username() if s.accepted_by else None,
        }
        if s.message_index is not None:
            row["message"] = s.message_index
        rows.append(row)
    return rows


def with_message_suggestions(transcript: Transcript, user, labels_by_message: dict) -> dict:
    """``labels_by_message`` (``presentation.transcript_view.message_labels``'s) with the
    model's newest suggestion on each message's questions (``suggestion``), pre-selected
    (``suggested``) where ``user`` has not answered; nothing for a role that does not read
    them. One query, none without questions about messages."""
    if not labels_by_message or not transcript.dataset.sees_hidden(user):
        return labels_by_message
    wanted = {
        (q["schema"].current_version_id, q["question"].key)
        for labels in labels_by_message.values()
        for q in labels.questions
    }
    if not wanted:
        return labels_by_message
    found: dict[tuple[int, int, str], Suggestion] = {}
    for suggestion in Suggestion.objects.filter(
        transcript=transcript,
        message_index__in=list(labels_by_message),
        schema_version__in={version for version, _ in wanted},
    ).order_by("-created_at", "-pk"):
        key = (suggestion.message_index, suggestion.schema_version_id, suggestion.question)
        found.setdefault(key, suggestion)
    for index, labels in labels_by_message.items():
        for q in labels.questions:
            suggestion = found.get((index, q["schema"].current_version_id, q["question"].key))
            q["suggestion"] = suggestion
            if suggestion is not None and q["value"] is None:
                q["value"], q["suggested"] = suggestion.value, True
    return labels_by_message
