"""Annotations: an annotator's answers to a schema's questions, and how they follow edits.

Every write checks the value against its question (``labels.Question.check_value``) and its
target against the transcript as stored now: a message the question applies to, a span
inside that message's logical text (``formats.logical_text``). Writes lock
the transcript row first, so an edit saved at the same moment cannot move the messages
between the check and the write.

``follow_edit`` is called by the one write path (``storage._write``) with the messages before
and after a save: message and span annotations follow their message to its new index; a span
whose own message changed is re-anchored on its text when that text is still there exactly
once, else flagged (offsets kept); an annotation of a deleted message is orphaned, never
deleted (docs/labels.md).
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from editor import formats
from editor.errors import (
    AnnotationExists,
    AnnotationLocked,
    LabelSchemaArchived,
    MissingAnswers,
    NotAllowed,
    TranscriptDeleted,
)
from editor.labels import InvalidAnswer, Question, definition_of
from editor.models import (
    Alternative,
    AnchorState,
    Annotation,
    AnnotationQuerySet,
    AnnotationState,
    LabelSchema,
    Transcript,
)


def annotations_of(transcript: Transcript, user) -> AnnotationQuerySet:
    """The annotations of ``transcript`` that ``user`` may read: everyone's for reviewers and
    curators, their own for annotators; viewers read schemas only (``NotAllowed``)."""
    if not transcript.dataset.can_edit(user):
        raise NotAllowed("Your role in this dataset does not read annotations.")
    return (
        Annotation.objects.filter(transcript=transcript)
        .readable_by(user, transcript.dataset)
        .select_related("schema_version", "annotator")
        .order_by("pk")
    )


def create_annotation(
    transcript: Transcript,
    *,
    annotator,
    schema: LabelSchema,
    question: str,
    value: Any,
    message_index: int | None = None,
    start: int | None = None,
    end: int | None = None,
) -> Annotation:
    """A draft answer of ``annotator`` to ``question`` of the schema's current version, about
    the transcript (no ``message_index``), a message, or a span ``start:end`` of one.

    One answer per annotator, question version and transcript or message: a second is an
    ``AnnotationExists`` (409) naming the first; spans may be many.
    """
    _require_annotator(transcript, annotator)
    if schema.dataset_id != transcript.dataset_id:
        raise InvalidAnswer("The schema belongs to another dataset.")
    if schema.is_archived:
        raise LabelSchemaArchived("The schema is archived: it takes no new answers.")
    version = schema.current_version
    asked = definition_of(version).question(question)
    if asked is None:
        raise InvalidAnswer(
            f"Version {version.number} of the schema has no question {question!r}.",
            details={"question": question},
        )
    asked.check_value(value)
    with transaction.atomic():
        anchor = _check_target(_locked(transcript), asked, message_index, start, end)
        _check_candidates(transcript, asked, message_index, value)
        if asked.kind != "span":
            existing = (
                Annotation.objects.filter(
                    transcript=transcript,
                    schema_version=version,
                    question=question,
                    annotator=annotator,
                    message_index=message_index,
                )
                .exclude(anchor_state=AnchorState.ORPHANED)
                .first()
            )
            if existing is not None:
                raise AnnotationExists(
                    f"You answered {question!r} about this already (annotation {existing.pk}): "
                    "update that one.",
                    details={"id": existing.pk},
                )
        return Annotation.objects.create(
            transcript=transcript,
            schema_version=version,
            question=question,
            annotator=annotator,
            value=value,
            message_index=message_index,
            **anchor,
        )


def update_annotation(
    annotation: Annotation,
    *,
    user,
    value: Any,
    start: int | None = None,
    end: int | None = None,
) -> Annotation:
    """Change one's own answer (checked against the version it was given under). A span may
    be given new offsets, which anchors it again (a flagged one included). A submitted answer
    that changes is a draft again, to be submitted anew."""
    _require_own(annotation, user)
    asked = definition_of(annotation.schema_version).question(annotation.question)
    asked.check_value(value)
    with transaction.atomic():
        transcript = _locked(annotation.transcript)
        # Read again under the lock: a save may have just moved, flagged or orphaned it.
        current = Annotation.objects.select_for_update().get(pk=annotation.pk)
        if current.anchor_state == AnchorState.ORPHANED:
            raise AnnotationLocked("The message this answer was about was deleted.")
        anchor = {}
        if start is not None or end is not None:
            if asked.kind != "span":
                raise InvalidAnswer("Only a span answer has offsets.")
            anchor = _check_target(transcript, asked, current.message_index, start, end)
        _check_candidates(transcript, asked, current.message_index, value)
        before = (current.value, current.start, current.end, current.anchor_state)
        current.value = value
        for name, new in anchor.items():
            setattr(current, name, new)
        if (current.value, current.start, current.end, current.anchor_state) == before:
            return current
        if current.state == AnnotationState.SUBMITTED:
            current.state = AnnotationState.DRAFT
            current.submitted_at = None
        current.save()
    return current


def submit_annotation(annotation: Annotation, *, user) -> Annotation:
    """Mark one's own answer submitted (submitting a submitted one changes nothing)."""
    _require_own(annotation, user)
    if annotation.state != AnnotationState.SUBMITTED:
        annotation.state = AnnotationState.SUBMITTED
        annotation.submitted_at = timezone.now()
        annotation.save(update_fields=["state", "submitted_at", "updated_at"])
    return annotation


def delete_annotation(annotation: Annotation, *, user) -> None:
    """Delete one's own draft; a submitted answer is kept (what was given is never lost)."""
    _require_own(annotation, user)
    if annotation.state != AnnotationState.DRAFT:
        raise AnnotationLocked("A submitted answer cannot be deleted.")
    annotation.delete()


def _require_annotator(transcript: Transcript, user) -> None:
    if not transcript.dataset.can_edit(user):
        raise NotAllowed("Your role in this dataset does not annotate.")
    if transcript.is_deleted:
        raise TranscriptDeleted("The transcript was deleted; a curator can undelete it.")


def _require_own(annotation: Annotation, user) -> None:
    _require_annotator(annotation.transcript, user)
    if annotation.annotator_id != user.pk:
        raise NotAllowed("Only its annotator may change an annotation.")
    if annotation.schema_version.schema.is_archived:
        raise LabelSchemaArchived("The schema is archived: its answers are read-only.")


def _locked(transcript: Transcript) -> Transcript:
    """The transcript row, locked until the transaction ends: a save (which holds this lock
    from its compare-and-swap on) cannot move the messages under the check."""
    return Transcript.all_objects.select_for_update().get(pk=transcript.pk)


def _check_candidates(
    transcript: Transcript, question: Question, message_index: int | None, value: Any
) -> None:
    """A pairwise answer compares alternatives of the turn it is about: every id of its
    ``order`` must be one of that turn's (``editor.alternatives`` adds them, at the turn's
    first message; one added later may be missing from an older answer's order)."""
    if question.kind != "pairwise":
        return
    ids = set(
        Alternative.objects.filter(transcript=transcript, message_index=message_index).values_list(
            "pk", flat=True
        )
    )
    if len(ids) < 2:
        raise question.refuse(
            f"the turn at message {message_index} has {len(ids)} alternative(s): "
            "a pairwise answer compares two or more"
        )
    strangers = [item for item in value["order"] if item not in ids]
    if strangers:
        raise question.refuse(
            f"alternative {strangers[0]} is not one of the turn's at message {message_index}"
        )


def _check_target(
    transcript: Transcript,
    question: Question,
    message_index: int | None,
    start: int | None,
    end: int | None,
) -> dict:
    """The anchor fields (``start``, ``end``, ``text``) of an answer to ``question`` about
    ``message_index`` (and ``start:end`` for a span), or ``InvalidAnswer`` saying why not."""
    key = question.key
    if question.applies_to == "transcript":
        if message_index is not None or start is not None or end is not None:
            raise question.refuse("it is about the whole transcript, not a message")
        return {}
    if message_index is None:
        raise question.refuse("it is about a message: give message_index")
    count = transcript.message_count
    # One row read, whatever the transcript's length (an answer about message 40,000 of
    # 50,000 read every message before).
    message = transcript.stored_message(message_index) if 0 <= message_index < count else None
    if message is None:
        raise question.refuse(f"there is no message {message_index} (the transcript has {count})")
    if not question.applies_to_message(message):
        raise question.refuse(
            f"it does not apply to message {message_index} "
            f"(role {message.role!r}, channel {message.channel!r})"
        )
    if question.kind != "span":
        if start is not None or end is not None:
            raise question.refuse("only a span answer has offsets")
        return {}
    text = formats.logical_text(transcript.spec, message.content)
    if start is None or end is None or not 0 <= start < end <= len(text):
        raise InvalidAnswer(
            f"Question {key!r}: a span needs start < end within the message's "
            f"{len(text)} characters (logical text).",
            details={"question": key, "length": len(text)},
        )
    return {"start": start, "end": end, "text": text[start:end], "anchor_state": AnchorState.OK}


# --- following edits ------------------------------------------------------------------------


def follow_edit(
    transcript_id: int,
    old_messages: Sequence[formats.Message],
    new_messages: Sequence[formats.Message],
    spec: str,
) -> None:
    """Move the message and span annotations of a transcript from ``old_messages`` to
    ``new_messages`` (``spec``: the new messages' spec, for their logical text).

    Called inside the save's transaction; one query when nothing is annotated.
    """
    anchored = list(
        Annotation.objects.filter(transcript_id=transcript_id)
        .anchored()
        .select_related("schema_version")
    )
    if not anchored:
        return
    where = align(old_messages, new_messages)
    definitions = {}
    changed = []
    now = timezone.now()
    for annotation in anchored:
        before = (annotation.message_index, annotation.start, annotation.end)
        state_before = annotation.anchor_state
        old_index = annotation.message_index
        new_index = where.get(old_index)
        if new_index is None:
            annotation.anchor_state = AnchorState.ORPHANED
        else:
            annotation.message_index = new_index
            new_message = new_messages[new_index]
            if new_message != old_messages[old_index]:
                version = annotation.schema_version
                if version.pk not in definitions:
                    definitions[version.pk] = definition_of(version)
                question = definitions[version.pk].question(annotation.question)
                _reanchor(annotation, question, new_message, spec)
        if (annotation.message_index, annotation.start, annotation.end) != before or (
            annotation.anchor_state != state_before
        ):
            annotation.updated_at = now
            changed.append(annotation)
    Annotation.objects.bulk_update(
        changed, ["message_index", "start", "end", "anchor_state", "updated_at"]
    )


def _reanchor(
    annotation: Annotation, question: Question | None, message: formats.Message, spec: str
) -> None:
    """After its own message changed: a span moves onto its text when that text is there
    exactly once (else it is flagged, offsets kept); any answer whose question no longer
    applies to the message (its role or channel changed) is flagged."""
    if question is None or not question.applies_to_message(message):
        annotation.anchor_state = AnchorState.FLAGGED
        return
    if annotation.start is None:
        return
    text = formats.logical_text(spec, message.content)
    first = text.find(annotation.text)
    if first < 0 or text.find(annotation.text, first + 1) >= 0:
        annotation.anchor_state = AnchorState.FLAGGED
        return
    annotation.start, annotation.end = first, first + len(annotation.text)
    annotation.anchor_state = AnchorState.OK


def align(old: Sequence[formats.Message], new: Sequence[formats.Message]) -> dict[int, int]:
    """Where each old message is among ``new`` (an old index missing: the message was
    deleted).

    Matched in order by fingerprint, as ``storage._reuse_unchanged`` matches them: equal runs
    map one to one, so insertions and deletions shift nothing. A changed run of the same length
    on both sides is messages edited in place. What is left is paired when an old and a new
    message are equal (a move), or, inside one changed run, in order when they share a role
    and most of their content (an edit next to an insertion).
    """
    where: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(
        None, [m.fingerprint() for m in old], [m.fingerprint() for m in new], autojunk=False
    )
    runs = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
            where.update(zip(range(a0, a1), range(b0, b1), strict=True))
        else:
            runs.append((range(a0, a1), range(b0, b1)))
    taken = set(where.values())
    inserted = defaultdict(list)
    for _, new_range in runs:
        for j in new_range:
            inserted[new[j].fingerprint()].append(j)
    for old_range, _ in runs:
        for i in old_range:
            candidates = inserted.get(old[i].fingerprint())
            if candidates:
                where[i] = candidates.pop(0)
                taken.add(where[i])
    for old_range, new_range in runs:
        low = new_range.start
        for i in old_range:
            if i in where:
                continue
            for j in range(low, new_range.stop):
                if j not in taken and _similar(old[i], new[j]):
                    where[i] = j
                    taken.add(j)
                    low = j + 1
                    break
    return where


def _similar(a: formats.Message, b: formats.Message) -> bool:
    if a.role != b.role:
        return False
    matcher = difflib.SequenceMatcher(None, a.content or "", b.content or "", autojunk=False)
    return matcher.quick_ratio() >= 0.6 and matcher.ratio() >= 0.6


# --- answering a transcript's questions (the queue view) ------------------------------------


def active_questions(dataset, target: str = "transcript") -> list[tuple[LabelSchema, Question]]:
    """The questions about ``target`` ("transcript" or "message") in ``dataset``'s active
    schemas (current versions), in schema and question order."""
    out = []
    for schema in LabelSchema.objects.filter(dataset=dataset).active().with_current_version():
        for question in definition_of(schema.current_version).questions:
            if question.applies_to == target:
                out.append((schema, question))
    return out


def transcript_questions(dataset) -> list[tuple[LabelSchema, Question]]:
    return active_questions(dataset, "transcript")


def my_answers(transcript: Transcript, user) -> dict[tuple[int | None, int, str], Annotation]:
    """``user``'s answers about ``transcript`` and its messages (spans apart), by
    (message index or None, schema version id, question)."""
    return {
        (a.message_index, a.schema_version_id, a.question): a
        for a in Annotation.objects.filter(
            transcript=transcript, annotator=user, start__isnull=True
        ).exclude(anchor_state=AnchorState.ORPHANED)
    }


def my_transcript_answers(transcript: Transcript, user) -> dict[tuple[int, str], Annotation]:
    """``user``'s answers about the whole of ``transcript``, by (schema version id, question)."""
    return {
        (version, question): annotation
        for (index, version, question), annotation in my_answers(transcript, user).items()
        if index is None
    }


def with_my_answers(transcript: Transcript, user, questions) -> list[dict]:
    """``questions`` about the whole transcript ((schema, question) pairs), each with
    ``user``'s answer, as the question partial (``editor/labels.html#question``) takes them."""
    mine = my_transcript_answers(transcript, user)
    return [
        {
            "schema": schema,
            "question": question,
            "value": getattr(mine.get((schema.current_version_id, question.key)), "value", None),
        }
        for schema, question in questions
    ]


def answer(
    transcript: Transcript,
    *,
    annotator,
    schema: LabelSchema,
    question: str,
    value: Any,
    message_index: int | None = None,
) -> Annotation:
    """Set ``annotator``'s answer to a question about the transcript or one of its messages:
    the first answer creates it, the next ones update it (a draft either way)."""
    existing = my_answers(transcript, annotator).get(
        (message_index, schema.current_version_id, question)
    )
    if existing is None:
        return create_annotation(
            transcript,
            annotator=annotator,
            schema=schema,
            question=question,
            value=value,
            message_index=message_index,
        )
    return update_annotation(existing, user=annotator, value=value)


def submit_answers(transcript: Transcript, *, user, questions=None) -> list[Annotation]:
    """Submit ``user``'s draft answers about ``transcript``, if every required question about
    the whole transcript is answered, and every required pairwise question about each turn
    with two or more alternatives (``MissingAnswers`` names those that are not). Required
    questions about each message are not enforced here yet. ``questions``: the (schema,
    question) pairs asked (a queue's, ``queues.queue_questions``, about the transcript and
    about turns); by default every active schema's."""
    mine = list(
        Annotation.objects.filter(transcript=transcript, annotator=user).exclude(
            anchor_state=AnchorState.ORPHANED
        )
    )
    answered = {(a.schema_version_id, a.question) for a in mine if a.target == "transcript"}
    if questions is None:
        questions = transcript_questions(transcript.dataset) + active_questions(
            transcript.dataset, "turn"
        )
    missing = [
        question.prompt
        for schema, question in questions
        if question.applies_to == "transcript"
        and question.required
        and (schema.current_version_id, question.key) not in answered
    ]
    missing += _missing_comparisons(transcript, mine, questions)
    if missing:
        raise MissingAnswers(
            f"Answer the required question{'s' if len(missing) > 1 else ''} first: "
            + "; ".join(missing),
            details={"missing": missing},
        )
    drafts = [a for a in mine if a.state == AnnotationState.DRAFT]
    if drafts:
        now = timezone.now()
        Annotation.objects.filter(pk__in=[a.pk for a in drafts]).update(
            state=AnnotationState.SUBMITTED, submitted_at=now, updated_at=now
        )
        for annotation in drafts:
            annotation.state = AnnotationState.SUBMITTED
            annotation.submitted_at = annotation.updated_at = now
    return drafts


def _missing_comparisons(transcript: Transcript, mine: list[Annotation], questions) -> list[str]:
    """The required pairwise questions not answered about a turn that has two or more
    alternatives (one query, only when such a question is asked)."""
    required = [(s, q) for s, q in questions if q.kind == "pairwise" and q.required]
    if not required:
        return []
    turns = (
        Alternative.objects.filter(transcript=transcript)
        .values("message_index")
        .annotate(n=Count("pk"))
        .filter(n__gte=2)
        .values_list("message_index", flat=True)
    )
    given = {(a.message_index, a.schema_version_id, a.question) for a in mine}
    return [
        f"{question.prompt} (message #{index})"
        for index in sorted(turns)
        for schema, question in required
        if (index, schema.current_version_id, question.key) not in given
    ]


def answers_of(transcript: Transcript, user) -> list[dict]:
    """``user``'s answers about ``transcript``, readable by a reviewer: the question's prompt,
    where (the transcript, a message, a span's text) and the value."""
    out = []
    for annotation in (
        Annotation.objects.filter(transcript=transcript, annotator=user)
        .select_related("schema_version")
        .order_by("message_index", "start", "pk")
    ):
        question = definition_of(annotation.schema_version).question(annotation.question)
        out.append(
            {
                "prompt": question.prompt if question else annotation.question,
                "message_index": annotation.message_index,
                "text": annotation.text if annotation.start is not None else None,
                "value": annotation.value,
                "state": annotation.state,
                "anchor_state": annotation.anchor_state,
            }
        )
    return out
