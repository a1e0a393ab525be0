"""Annotations (editor/labels/annotations.py): targets and values checked, one's own answers only,
answers keep their schema version, and message/span anchors follow every edit through the one
save path."""

from __future__ import annotations

import pytest
from django.db.models import RestrictedError

from editor import editing, labels
from editor.errors import NotAllowed
from editor.labels import InvalidAnswer, annotations
from editor.labels.annotations import align
from editor.models import (
    AnchorState,
    Annotation,
    AnnotationState,
    LabelSchemaVersion,
    Transcript,
)
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.editor.test_labels import QUESTIONS

pytestmark = pytest.mark.django_db

FINAL = "The Eiffel Tower is 330 m tall and was built in 1889."


def chat(*finals: str) -> list[dict]:
    messages = [{"role": "system", "content": "Be brief.", "end": "end"}]
    for number, final in enumerate(finals):
        messages.append({"role": "user", "content": f"Question {number}?", "end": "end"})
        messages.append({"role": "assistant", "channel": "final", "content": final, "end": "end"})
    return messages


@pytest.fixture
def schema(dataset, curator):
    return labels.create_label_schema(dataset, author=curator, name="Q", questions=QUESTIONS)


@pytest.fixture
def transcript(dataset, annotator):
    return create_transcript(
        dataset,
        author=annotator,
        canonical={"spec": "openchatml-2.2", "messages": chat(FINAL, "Paris is in France.")},
    )


def fresh(annotation: Annotation) -> Annotation:
    return Annotation.objects.get(pk=annotation.pk)


def save_messages(transcript: Transcript, messages: list[dict], author) -> None:
    current = Transcript.objects.get(pk=transcript.pk)
    save_transcript(current, expected_version=current.version, author=author, messages=messages)


def tag(transcript, annotator, schema, text: str, index: int = 2) -> Annotation:
    content = transcript.canonical().messages[index].content
    start = content.index(text)
    return annotations.create_annotation(
        transcript,
        annotator=annotator,
        schema=schema,
        question="claims",
        value="hallucination",
        message_index=index,
        start=start,
        end=start + len(text),
    )


# --- creating and checking -------------------------------------------------------------------


def test_answers_about_the_transcript_a_message_and_a_span(transcript, annotator, schema):
    whole = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="topic", value="bug"
    )
    rating = annotations.create_annotation(
        transcript,
        annotator=annotator,
        schema=schema,
        question="helpful",
        value=4,
        message_index=2,
    )
    span = tag(transcript, annotator, schema, "330 m")
    assert [a.target for a in (whole, rating, span)] == ["transcript", "message", "span"]
    assert (span.start, span.end, span.text) == (
        FINAL.index("330 m"),
        FINAL.index(" tall"),
        "330 m",
    )
    assert all(a.state == AnnotationState.DRAFT for a in (whole, rating, span))
    assert whole.schema_version == schema.current_version


def test_spans_are_offsets_in_the_logical_text(dataset, annotator, schema):
    escaped = create_transcript(
        dataset,
        author=annotator,
        text="<|start|>assistant<|channel|>final<|message|>Write <<|end|> here.<|end|>",
        spec="openchatml-2.2",
    )
    logical = "Write <|end|> here."
    span = annotations.create_annotation(
        escaped,
        annotator=annotator,
        schema=schema,
        question="claims",
        value="hallucination",
        message_index=0,
        start=logical.index("here"),
        end=len(logical) - 1,
    )
    assert span.text == "here"


def test_an_answer_about_a_message_reads_that_message_alone(
    transcript, annotator, schema, monkeypatch
):
    start = transcript.canonical().messages[2].content.index("330 m")

    def every_message(self):
        raise AssertionError("an answer read every message of its transcript")

    monkeypatch.setattr(Transcript, "stored_messages", every_message)
    monkeypatch.setattr(Transcript, "canonical", every_message)

    span = annotations.create_annotation(
        transcript,
        annotator=annotator,
        schema=schema,
        question="claims",
        value="hallucination",
        message_index=2,
        start=start,
        end=start + len("330 m"),
    )
    past_the_end = transcript.message_count
    with pytest.raises(InvalidAnswer, match=f"there is no message {past_the_end}"):
        annotations.create_annotation(
            transcript,
            annotator=annotator,
            schema=schema,
            question="helpful",
            value=3,
            message_index=past_the_end,
        )

    assert span.text == "330 m"


@pytest.mark.parametrize(
    ("question", "value", "target", "says"),
    [
        ("topic", "refund", {}, "must be one of: 'billing', 'bug'"),
        ("topic", "bug", {"message_index": 0}, "about the whole transcript"),
        ("helpful", 3, {}, "give message_index"),
        ("helpful", 3, {"message_index": 9}, "there is no message 9"),
        ("helpful", 3, {"message_index": 1}, "does not apply to message 1 (role 'user'"),
        ("helpful", 3, {"message_index": 2, "start": 0, "end": 3}, "only a span answer"),
        ("claims", "hallucination", {"message_index": 2}, "start < end"),
        ("claims", "hallucination", {"message_index": 2, "start": 5, "end": 5}, "start < end"),
        ("claims", "hallucination", {"message_index": 2, "start": 0, "end": 999}, "start < end"),
        ("claims", "opinion", {"message_index": 2, "start": 0, "end": 3}, "must be one of"),
        ("nope", 1, {}, "has no question 'nope'"),
    ],
)
def test_bad_targets_and_values_are_refused(
    transcript, annotator, schema, question, value, target, says
):
    with pytest.raises(InvalidAnswer) as raised:
        annotations.create_annotation(
            transcript, annotator=annotator, schema=schema, question=question, value=value, **target
        )
    assert says in raised.value.message, raised.value.message
    assert raised.value.status == 422
    assert not Annotation.objects.exists()


def test_one_answer_per_question_and_target_but_many_spans(transcript, annotator, schema):
    first = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="topic", value="bug"
    )
    with pytest.raises(annotations.AnnotationExists) as raised:
        annotations.create_annotation(
            transcript, annotator=annotator, schema=schema, question="topic", value="billing"
        )
    assert raised.value.details == {"id": first.pk}
    tag(transcript, annotator, schema, "330 m")
    tag(transcript, annotator, schema, "1889")
    assert Annotation.objects.filter(question="claims").count() == 2


def test_viewers_do_not_annotate_and_nobody_changes_anothers(
    transcript, annotator, viewer, reviewer, schema
):
    with pytest.raises(NotAllowed):
        annotations.create_annotation(
            transcript, annotator=viewer, schema=schema, question="topic", value="bug"
        )
    mine = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="topic", value="bug"
    )
    for act in (
        lambda: annotations.update_annotation(mine, user=reviewer, value="billing"),
        lambda: annotations.submit_annotation(mine, user=reviewer),
        lambda: annotations.delete_annotation(mine, user=reviewer),
    ):
        with pytest.raises(NotAllowed):
            act()
    assert fresh(mine).value == "bug"


def test_submit_then_only_drafts_are_deleted(transcript, annotator, schema):
    answer = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="topic", value="bug"
    )
    annotations.submit_annotation(answer, user=annotator)
    assert fresh(answer).state == AnnotationState.SUBMITTED
    assert fresh(answer).submitted_at is not None
    with pytest.raises(annotations.AnnotationLocked):
        annotations.delete_annotation(fresh(answer), user=annotator)
    changed = annotations.update_annotation(fresh(answer), user=annotator, value="billing")
    assert changed.state == AnnotationState.DRAFT  # a changed answer is submitted anew
    annotations.delete_annotation(changed, user=annotator)
    assert not Annotation.objects.exists()


def test_archived_schemas_take_no_answers_and_keep_theirs_as_they_are(
    transcript, annotator, curator, schema
):
    given = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="topic", value="bug"
    )
    labels.set_archived(schema, author=curator, archived=True)
    with pytest.raises(annotations.LabelSchemaArchived):
        annotations.create_annotation(
            transcript, annotator=annotator, schema=schema, question="comment", value="Hi."
        )
    for act in (
        lambda: annotations.update_annotation(fresh(given), user=annotator, value="billing"),
        lambda: annotations.submit_annotation(fresh(given), user=annotator),
        lambda: annotations.delete_annotation(fresh(given), user=annotator),
    ):
        with pytest.raises(annotations.LabelSchemaArchived):
            act()
    assert (fresh(given).value, fresh(given).state) == ("bug", AnnotationState.DRAFT)


# --- versions -----------------------------------------------------------------------------------


def test_answers_keep_the_version_they_were_given_under(transcript, annotator, curator, schema):
    old = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="topic", value="bug"
    )
    changed = [dict(q) for q in QUESTIONS]
    changed[0] = {
        **changed[0],
        "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}],
    }
    labels.new_schema_version(schema, author=curator, questions=changed[:1])
    assert fresh(old).schema_version.number == 1
    # The old answer is still checked against its own version...
    annotations.update_annotation(fresh(old), user=annotator, value="billing")
    with pytest.raises(InvalidAnswer):
        annotations.update_annotation(fresh(old), user=annotator, value="a")
    # ...and a new one is given under the current version, which no longer has "helpful".
    new = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="topic", value="a"
    )
    assert new.schema_version.number == 2
    with pytest.raises(InvalidAnswer, match="Version 2 of the schema has no question 'helpful'"):
        annotations.create_annotation(
            transcript,
            annotator=annotator,
            schema=schema,
            question="helpful",
            value=3,
            message_index=2,
        )
    assert Annotation.objects.count() == 2


# --- anchors follow edits ----------------------------------------------------------------------


def test_an_edit_to_another_message_never_moves_a_span(transcript, annotator, schema):
    span = tag(transcript, annotator, schema, "330 m")
    before = (span.message_index, span.start, span.end)
    save_messages(transcript, chat(FINAL, "Paris is the capital of France."), annotator)
    after = fresh(span)
    assert (after.message_index, after.start, after.end) == before
    assert after.anchor_state == AnchorState.OK


def test_its_own_message_edited_with_the_text_there_once_reanchors(transcript, annotator, schema):
    span = tag(transcript, annotator, schema, "330 m")
    edited = "Built in 1889, the Eiffel Tower is 330 m tall."
    editing.edit_message(
        Transcript.objects.get(pk=transcript.pk),
        2,
        {"content": edited},
        expected_version=1,
        author=annotator,
    )
    after = fresh(span)
    assert after.anchor_state == AnchorState.OK
    assert edited[after.start : after.end] == "330 m"
    assert after.start == edited.index("330 m")


def test_its_own_message_edited_with_the_text_there_twice_is_flagged(transcript, annotator, schema):
    span = tag(transcript, annotator, schema, "330 m")
    editing.edit_message(
        Transcript.objects.get(pk=transcript.pk),
        2,
        {"content": "330 m? Yes: 330 m tall, built in 1889."},
        expected_version=1,
        author=annotator,
    )
    after = fresh(span)
    assert after.anchor_state == AnchorState.FLAGGED
    assert (after.start, after.end, after.text) == (span.start, span.end, "330 m")  # kept


def test_its_own_message_edited_with_the_text_gone_is_flagged(transcript, annotator, schema):
    span = tag(transcript, annotator, schema, "330 m")
    editing.edit_message(
        Transcript.objects.get(pk=transcript.pk),
        2,
        {"content": "The Eiffel Tower is 300 m tall and was built in 1889."},
        expected_version=1,
        author=annotator,
    )
    after = fresh(span)
    assert after.anchor_state == AnchorState.FLAGGED
    assert (after.start, after.end) == (span.start, span.end)


def test_a_flagged_span_is_anchored_again_by_new_offsets(transcript, annotator, schema):
    span = tag(transcript, annotator, schema, "330 m")
    edited = "The Eiffel Tower is 300 m tall and was built in 1889."
    editing.edit_message(
        Transcript.objects.get(pk=transcript.pk),
        2,
        {"content": edited},
        expected_version=1,
        author=annotator,
    )
    start = edited.index("300 m")
    again = annotations.update_annotation(
        fresh(span), user=annotator, value="hallucination", start=start, end=start + 5
    )
    assert (again.anchor_state, again.text) == (AnchorState.OK, "300 m")


def test_messages_inserted_before_it_move_it_with_its_message(transcript, annotator, schema):
    span = tag(transcript, annotator, schema, "330 m")
    rating = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="helpful", value=5, message_index=2
    )
    editing.insert_message(
        Transcript.objects.get(pk=transcript.pk),
        None,
        {"role": "developer", "content": "Answer in metres."},
        expected_version=1,
        author=annotator,
    )
    editing.insert_message(
        Transcript.objects.get(pk=transcript.pk),
        1,
        {"role": "user", "content": "Hello."},
        expected_version=2,
        author=annotator,
    )
    for before, after in ((span, fresh(span)), (rating, fresh(rating))):
        assert after.message_index == 4
        assert (after.start, after.end, after.anchor_state) == (
            before.start,
            before.end,
            AnchorState.OK,
        )


def test_a_moved_message_takes_its_annotations_along(transcript, annotator, schema):
    span = tag(transcript, annotator, schema, "330 m")
    editing.move_message(
        Transcript.objects.get(pk=transcript.pk), 2, 4, expected_version=1, author=annotator
    )
    moved = Transcript.objects.get(pk=transcript.pk).canonical().messages
    after = fresh(span)
    assert after.message_index == 4 and moved[4].content == FINAL
    assert after.anchor_state == AnchorState.OK


def test_a_deleted_message_orphans_its_annotations(transcript, annotator, schema):
    span = tag(transcript, annotator, schema, "330 m")
    rating = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="helpful", value=5, message_index=2
    )
    later = tag(transcript, annotator, schema, "France", index=4)
    editing.delete_message(
        Transcript.objects.get(pk=transcript.pk), 2, expected_version=1, author=annotator
    )
    assert fresh(span).anchor_state == AnchorState.ORPHANED
    assert fresh(rating).anchor_state == AnchorState.ORPHANED
    assert fresh(rating).message_index == 2  # where it was: kept, not deleted
    assert (fresh(later).message_index, fresh(later).anchor_state) == (3, AnchorState.OK)
    with pytest.raises(annotations.AnnotationLocked):
        annotations.update_annotation(fresh(rating), user=annotator, value=4)


def test_a_message_whose_role_changed_flags_answers_that_no_longer_apply(
    transcript, annotator, schema
):
    rating = annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="helpful", value=5, message_index=2
    )
    editing.edit_message(
        Transcript.objects.get(pk=transcript.pk),
        2,
        {"channel": "analysis"},
        expected_version=1,
        author=annotator,
    )
    assert fresh(rating).anchor_state == AnchorState.FLAGGED


def test_a_whole_text_save_that_edits_next_to_an_insertion_still_follows(
    transcript, annotator, schema
):
    span = tag(transcript, annotator, schema, "1889")
    messages = chat(FINAL.replace("330 m", "330 metres"), "Paris is in France.")
    messages.insert(
        2, {"role": "assistant", "channel": "analysis", "content": "Look it up.", "end": "end"}
    )
    save_messages(transcript, messages, annotator)
    after = fresh(span)
    assert after.message_index == 3
    assert after.anchor_state == AnchorState.OK
    assert messages[3]["content"][after.start : after.end] == "1889"


def test_align_pairs_moves_edits_and_deletions():
    from editor import formats

    def m(content, role="user"):
        return formats.Message(role=role, content=content)

    old = [m("a"), m("b"), m("c"), m("d")]
    assert align(old, [m("a"), m("c"), m("d"), m("b")]) == {0: 0, 1: 3, 2: 1, 3: 2}
    assert align(old, [m("a"), m("B"), m("c"), m("d")]) == {0: 0, 1: 1, 2: 2, 3: 3}
    assert align(old, [m("a"), m("c"), m("d")]) == {0: 0, 2: 1, 3: 2}
    assert align(old, [m("x"), m("a"), m("b"), m("c"), m("d")]) == {0: 1, 1: 2, 2: 3, 3: 4}


def test_deleting_a_dataset_takes_its_schemas_and_answers_along(
    dataset, transcript, annotator, schema
):
    annotations.create_annotation(
        transcript, annotator=annotator, schema=schema, question="topic", value="bug"
    )
    version = schema.current_version
    with pytest.raises(RestrictedError):  # a version with answers is never deleted alone
        version.delete()
    dataset.delete()
    assert not Annotation.objects.exists()
    assert not LabelSchemaVersion.objects.exists()


def test_raw_mode_and_restores_take_the_same_path(transcript, annotator, schema):
    from editor.revisions import restore_revision

    span = tag(transcript, annotator, schema, "France", index=4)
    current = Transcript.objects.get(pk=transcript.pk)
    raw = "<|start|>user<|message|>First!<|end|>\n" + current.source_text
    editing.replace_source(current, raw, expected_version=1, author=annotator)
    assert (fresh(span).message_index, fresh(span).anchor_state) == (5, AnchorState.OK)

    restore_revision(
        current.revisions.get(number=1), expected_version=2, author=annotator, note="undo"
    )
    assert (fresh(span).message_index, fresh(span).anchor_state) == (4, AnchorState.OK)
