"""The editor's domain operations (editor/editing.py): one revision each, minimal source
diffs, conflicts on stale versions, quick fixes, raw mode and draft validation."""

from __future__ import annotations

import pytest

from editor import editing, formats
from editor.errors import ConflictError, InvalidContent, NotAllowed
from editor.models import Revision, Status, Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import demo_texts, readable_specs

pytestmark = pytest.mark.django_db

CALL_WITHOUT_ID = (
    "version: 2.2\n"
    "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{}<|call|>\n"
    "<|start|>tool name=functions.f<|channel|>commentary<|message|>{}<|end|>"
)


@pytest.fixture
def weather(dataset, annotator):
    return create_transcript(
        dataset, text=demo_texts()["openchatml-2.2"], spec="openchatml-2.2", author=annotator
    )


def fresh(transcript: Transcript) -> Transcript:
    return Transcript.objects.select_related("dataset").get(pk=transcript.pk)


def changed_lines(old: str, new: str) -> list[tuple[str, str]]:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    assert len(old_lines) == len(new_lines)
    return [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]


def test_edit_content_changes_only_that_messages_bytes(weather, annotator):
    before = weather.source_text
    result = editing.edit_message(
        weather, 7, {"content": "It is 20 °C and sunny."}, expected_version=1, author=annotator
    )

    assert result.version == 2
    saved = fresh(weather)
    assert saved.canonical().messages[7].content == "It is 20 °C and sunny."
    assert changed_lines(before, saved.source_text) == [
        (
            "<|start|>assistant<|channel|>final<|message|>It\u2019s 20 °C and sunny in Tokyo right "
            "now.<|return|>",
            "<|start|>assistant<|channel|>final<|message|>It is 20 °C and sunny.<|return|>",
        )
    ]
    revision = saved.revisions.get(number=2)
    assert revision.author == annotator
    assert revision.note == "edited message 7"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"channel": "commentary"}, {"channel": "commentary"}),
        ({"recipient": "functions.x", "end": "call"}, {"recipient": "functions.x", "end": "call"}),
        ({"intent": "preamble"}, {"intent": "preamble"}),
        ({"end": None}, {"end": None}),
        ({"attrs": {"note": "kept"}}, {"attrs": {"note": "kept"}}),
        ({"role": "user", "channel": None}, {"role": "user", "channel": None}),
    ],
)
def test_edit_any_canonical_field(weather, annotator, changes, expected):
    editing.edit_message(weather, 7, changes, expected_version=1, author=annotator)
    message = fresh(weather).canonical().messages[7]
    for name, value in expected.items():
        assert getattr(message, name) == value


def test_an_edit_writes_exactly_one_revision_and_returns_fresh_diagnostics(weather, annotator):
    result = editing.edit_message(
        weather, 6, {"call_id": "nope"}, expected_version=1, author=annotator
    )
    assert Revision.objects.filter(transcript=weather).count() == 2
    codes = {d["code"] for d in result.diagnostics}
    assert "E-CALL-REPLY-UNKNOWN" in codes or "W-CALL-UNANSWERED" in codes, codes
    assert result.transcript.error_count + result.transcript.warning_count > 0


def test_stale_version_is_a_conflict_and_changes_nothing(weather, annotator, curator):
    editing.edit_message(weather, 3, {"content": "mine"}, expected_version=1, author=curator)
    with pytest.raises(ConflictError) as raised:
        editing.edit_message(
            weather, 3, {"content": "theirs"}, expected_version=1, author=annotator
        )
    assert raised.value.current_version == 2
    assert raised.value.status == 409
    saved = fresh(weather)
    assert saved.version == 2
    assert saved.canonical().messages[3].content == "mine"


def test_unknown_field_and_bad_values_are_refused(weather, annotator):
    with pytest.raises(InvalidContent, match="Not a message field: colour"):
        editing.edit_message(weather, 1, {"colour": "red"}, expected_version=1, author=annotator)
    with pytest.raises(InvalidContent, match="Message 1: end must be"):
        editing.edit_message(weather, 1, {"end": "stop"}, expected_version=1, author=annotator)
    with pytest.raises(InvalidContent, match="Message 1 has no role"):
        editing.edit_message(weather, 1, {"role": ""}, expected_version=1, author=annotator)
    assert fresh(weather).version == 1


def test_missing_message_is_404(weather, annotator):
    with pytest.raises(editing.MessageNotFound) as raised:
        editing.edit_message(weather, 99, {"content": "x"}, expected_version=1, author=annotator)
    assert raised.value.status == 404
    assert "8 messages" in raised.value.message


def test_viewers_may_not_edit(weather, viewer):
    with pytest.raises(NotAllowed):
        editing.edit_message(weather, 1, {"content": "x"}, expected_version=1, author=viewer)


def test_insert_after_and_at_the_start(weather, annotator):
    editing.insert_message(
        weather,
        2,
        {"role": "user", "content": "One more thing."},
        expected_version=1,
        author=annotator,
    )
    editing.insert_message(weather, None, None, expected_version=2, author=annotator)
    messages = fresh(weather).canonical().messages
    assert len(messages) == 10
    assert messages[0].role == "user" and messages[0].content == ""
    assert messages[4].content == "One more thing."
    assert messages[4].end == formats.END


def test_delete_move_duplicate(weather, annotator):
    roles_before = [m.role for m in weather.canonical().messages]
    editing.delete_message(weather, 0, expected_version=1, author=annotator)
    assert [m.role for m in fresh(weather).canonical().messages] == roles_before[1:]

    editing.move_message(fresh(weather), 1, 3, expected_version=2, author=annotator)
    moved = fresh(weather).canonical().messages
    assert [m.role for m in moved][:4] == ["developer", "assistant", "assistant", "user"]

    editing.duplicate_message(fresh(weather), 3, expected_version=3, author=annotator)
    duplicated = fresh(weather).canonical().messages
    assert duplicated[3] == duplicated[4]
    assert len(duplicated) == 8
    assert fresh(weather).version == 4
    assert [r.note for r in Revision.objects.for_transcript(weather)][:3] == [
        "duplicated message 3",
        "moved message 1 to 3",
        "deleted message 0",
    ]


def test_move_to_a_missing_index_is_refused(weather, annotator):
    with pytest.raises(editing.MessageNotFound):
        editing.move_message(weather, 1, 9, expected_version=1, author=annotator)


def test_delete_is_undone_by_restoring_the_revision_before(weather, annotator):
    from editor.revisions import restore_revision

    editing.delete_message(weather, 4, expected_version=1, author=annotator)
    restore_revision(
        weather.revisions.get(number=1), expected_version=2, author=annotator, note="undo"
    )
    saved = fresh(weather)
    assert saved.source_text == demo_texts()["openchatml-2.2"]
    assert saved.version == 3


@pytest.mark.parametrize("spec", readable_specs())
def test_edits_keep_every_other_message_of_every_spec(dataset, annotator, spec):
    text = demo_texts()[spec]
    transcript = create_transcript(dataset, text=text, spec=spec, author=annotator)
    messages = transcript.canonical().messages
    index = len(messages) - 1
    result = editing.edit_message(
        transcript, index, {"content": "Edited."}, expected_version=1, author=annotator
    )
    saved = fresh(result.transcript).canonical().messages
    assert saved[:index] == messages[:index]
    assert saved[index].content == "Edited."


# --- quick fixes ------------------------------------------------------------------------------


def test_quick_fix_by_code_message_and_id(dataset, annotator):
    transcript = create_transcript(
        dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=annotator
    )
    offered = [d for d in transcript.diagnostics if d["code"] == "E-CALL-ID-MISSING"]
    assert len(offered) == 2
    first = offered[0]
    assert first["message_index"] == 0
    assert first["fix"]["title"] == "Add call_id=call_1"
    assert len(first["fix"]["id"]) == 12

    result = editing.apply_fix(
        transcript,
        code=first["code"],
        message_index=first["message_index"],
        fix_id=first["fix"]["id"],
        expected_version=1,
        author=annotator,
    )
    assert result.version == 2
    assert "call_id=" in fresh(transcript).source_text
    remaining = [d for d in result.diagnostics if d["code"] == "E-CALL-ID-MISSING"]
    assert len(remaining) < len(offered)
    assert fresh(transcript).revisions.get(number=2).note.startswith("quick fix:")


def test_a_fix_not_offered_any_more_is_refused(dataset, annotator):
    transcript = create_transcript(
        dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=annotator
    )
    with pytest.raises(editing.FixNotFound):
        editing.apply_fix(
            transcript,
            code="E-CALL-ID-MISSING",
            message_index=0,
            fix_id="000000000000",
            expected_version=1,
            author=annotator,
        )


def test_a_fix_on_a_stale_version_is_a_conflict(dataset, annotator):
    transcript = create_transcript(
        dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=annotator
    )
    first = next(d for d in transcript.diagnostics if d.get("fix"))
    editing.edit_message(transcript, 1, {"content": "{ }"}, expected_version=1, author=annotator)
    with pytest.raises(ConflictError):
        editing.apply_fix(
            fresh(transcript),
            code=first["code"],
            message_index=first["message_index"],
            fix_id=first["fix"]["id"],
            expected_version=1,
            author=annotator,
        )


# --- raw source -------------------------------------------------------------------------------

BROKEN = "<|start|>user<|message|>hi<|end|>\n<|start|><|message|>no role<|end|>"


def test_raw_source_with_errors_is_refused_unless_a_draft(weather, annotator):
    with pytest.raises(editing.HasErrors) as raised:
        editing.replace_source(weather, BROKEN, expected_version=1, author=annotator)
    assert raised.value.status == 422
    assert any(d["code"] == "E-PARSE-ROLE-MISSING" for d in raised.value.details["diagnostics"])
    assert fresh(weather).version == 1

    weather.status = Status.IN_REVIEW
    weather.save(update_fields=["status"])
    result = editing.replace_source(
        weather, BROKEN, as_draft=True, expected_version=1, author=annotator
    )
    saved = fresh(weather)
    assert saved.source_text == BROKEN
    assert saved.status == Status.DRAFT
    assert saved.error_count >= 1
    assert result.transcript.diagnostics == saved.diagnostics


def test_raw_source_converted_to_another_spec_returns_the_losses(weather, annotator):
    preview = editing.convert_source(weather.source_text, spec="openchatml-2.2", to="chatml")
    assert any(
        loss["message_index"] == 5 and "tool call" in loss["detail"] for loss in preview.losses
    )
    assert fresh(weather).version == 1  # a preview saves nothing

    result = editing.replace_source(
        weather,
        weather.source_text,
        convert_to="chatml",
        as_draft=True,
        expected_version=1,
        author=annotator,
    )
    saved = fresh(weather)
    assert saved.spec == "chatml"
    assert saved.source_text == preview.text
    assert result.losses == preview.losses


# --- drafts -----------------------------------------------------------------------------------


def test_message_draft_is_validated_without_saving(weather):
    check = editing.validate_message_draft(weather, 5, {"content": "{not json"})
    codes = [d["code"] for d in check.for_message(5)]
    assert "E-BODY-CONSTRAINT-VIOLATION" in codes
    assert fresh(weather).version == 1
    assert Revision.objects.filter(transcript=weather).count() == 1


def test_source_draft_is_validated_without_saving(weather):
    check = editing.validate_source_draft(BROKEN, "openchatml-2.2")
    assert check.error_count >= 1
    assert fresh(weather).source_text == demo_texts()["openchatml-2.2"]


def test_an_edit_rewrites_only_the_rows_that_change(weather, annotator):
    from editor.models import Message

    def row_ids():
        return list(
            Message.objects.filter(transcript=weather)
            .order_by("index")
            .values_list("pk", flat=True)
        )

    before = row_ids()
    editing.edit_message(weather, 6, {"content": "{}"}, expected_version=1, author=annotator)
    assert row_ids() == before  # updated in place

    editing.insert_message(weather, 5, None, expected_version=2, author=annotator)
    after_insert = row_ids()
    assert after_insert[:6] == before[:6]  # rows before the insertion are untouched
    assert len(after_insert) == 9
    assert fresh(weather).canonical().messages[6].role == "user"
    assert [m.content for m in fresh(weather).canonical().messages][7] == "{}"
