"""Revision history: list, diff any two, restore (as a new, version-checked revision)."""

from __future__ import annotations

import pytest

from editor.errors import ConflictError
from editor.models import HistoryBroken, Revision, RevisionKind, Transcript
from editor.revisions import diff_revisions, diff_snapshots, list_revisions, restore_revision
from editor.storage.create import create_transcript
from editor.storage.save import delete_transcript, save_transcript, undelete_transcript
from tests.editor.samples import conversation, demo_texts

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(dataset, curator):
    """Revision 1: two exchanges; 2: answer 0 edited; 3: a message appended, title changed."""
    transcript = create_transcript(dataset, text=conversation(), author=curator, title="Chat")
    messages = transcript.canonical().messages
    messages[1].content = "Answer 0, but better.\nWith a second line."
    transcript = save_transcript(
        transcript, expected_version=1, author=curator, messages=messages, note="better answer"
    )
    messages = [*transcript.canonical().messages, transcript.canonical().messages[0]]
    messages[-1].content = "Follow-up?"
    return save_transcript(
        transcript, expected_version=2, author=curator, messages=messages, title="Chat v3"
    )


def test_list_is_newest_first_in_one_query(history, curator, django_assert_num_queries):
    with django_assert_num_queries(1):
        revisions = list(list_revisions(history))
        assert [(r.number, r.author) for r in revisions] == [
            (3, curator),
            (2, curator),
            (1, curator),
        ]
    assert revisions[1].note == "better answer"


def test_diff_names_changed_added_and_unchanged_messages(history):
    first, last = history.revisions.get(number=1), history.revisions.get(number=3)

    diff = diff_revisions(first, last)

    statuses = [(m.status, m.old_index, m.new_index) for m in diff.messages]
    assert statuses == [
        ("unchanged", 0, 0),
        ("changed", 1, 1),
        ("unchanged", 2, 2),
        ("unchanged", 3, 3),
        ("added", None, 4),
    ]
    changed = diff.messages[1]
    assert [f.field for f in changed.fields] == ["content"]
    assert "-Answer 0." in changed.content_diff
    assert "+Answer 0, but better." in changed.content_diff
    assert "+With a second line." in changed.content_diff
    assert (diff.title.old, diff.title.new) == ("Chat", "Chat v3")
    assert diff.has_changes
    assert "+<|start|>user<|message|>Follow-up?<|end|>" in diff.source_diff


def test_diff_the_other_way_round_removes(history):
    diff = diff_revisions(history.revisions.get(number=3), history.revisions.get(number=1))
    assert [m.status for m in diff.messages][-1] == "removed"
    assert diff.to_dict()["messages"][-1]["old_index"] == 4


def test_diff_of_a_revision_with_itself_is_empty(history):
    revision = history.revisions.get(number=2)
    assert not diff_revisions(revision, revision).has_changes


def test_field_level_changes(dataset, curator):
    transcript = create_transcript(dataset, text=conversation(), author=curator)
    messages = transcript.canonical().messages
    messages[1].channel = "analysis"
    messages[1].recipient = "functions.lookup"
    saved = save_transcript(transcript, expected_version=1, author=curator, messages=messages)

    diff = diff_revisions(saved.revisions.get(number=1), saved.revisions.get(number=2))

    changed = next(m for m in diff.messages if m.status == "changed")
    assert [(f.field, f.old, f.new) for f in changed.fields] == [
        ("channel", "final", "analysis"),
        ("recipient", None, "functions.lookup"),
    ]
    assert changed.content_diff == ""


def test_restore_writes_a_new_revision_byte_for_byte(history, curator):
    first = history.revisions.get(number=1)

    restored = restore_revision(first, expected_version=3, author=curator)

    assert restored.version == 4
    assert restored.source_text == conversation()
    assert restored.title == "Chat"
    assert restored.canonical().to_dict() == first.full_snapshot["transcript"]
    latest = restored.revisions.get(number=4)
    assert (latest.kind, latest.note) == (RevisionKind.RESTORE, "restored revision 1")
    assert not diff_revisions(first, latest).has_changes
    assert history.revisions.count() == 4  # nothing rewritten


def test_restore_from_a_stale_version_conflicts(history, curator):
    with pytest.raises(ConflictError):
        restore_revision(history.revisions.get(number=1), expected_version=2, author=curator)
    assert Transcript.objects.get(pk=history.pk).version == 3


def test_restore_keeps_layout_of_a_text_spec(dataset, curator):
    text = demo_texts()["openchatml-2.0"]
    transcript = create_transcript(dataset, text=text, spec="openchatml-2.0", author=curator)
    edited = save_transcript(
        transcript, expected_version=1, author=curator, text=conversation("openchatml-2.0")
    )
    restored = restore_revision(edited.revisions.get(number=1), expected_version=2, author=curator)
    assert restored.source_text == text


def test_restore_of_a_state_the_text_could_not_say(dataset, curator):
    transcript = create_transcript(
        dataset, text=conversation("chatml"), spec="chatml", author=curator
    )
    messages = transcript.canonical().messages
    messages[1].channel = "final"  # ChatML cannot say this: the text is not exact
    lossy = save_transcript(transcript, expected_version=1, author=curator, messages=messages)
    save_transcript(lossy, expected_version=2, author=curator, text=conversation("chatml", turns=1))

    restored = restore_revision(lossy.revisions.get(number=2), expected_version=3, author=curator)

    assert restored.canonical().messages[1].channel == "final"
    assert (
        restored.canonical().to_dict() == lossy.revisions.get(number=2).full_snapshot["transcript"]
    )


def test_a_conflict_can_be_shown_as_a_diff(dataset, curator, annotator):
    transcript = create_transcript(dataset, text=conversation(), author=curator)
    theirs = transcript.canonical().messages
    theirs[0].content = "Theirs"
    save_transcript(transcript, expected_version=1, author=annotator, messages=theirs)
    mine = transcript.canonical()
    mine.messages[0].content = "Mine"
    with pytest.raises(ConflictError) as caught:
        save_transcript(transcript, expected_version=1, author=curator, canonical=mine)

    diff = diff_snapshots(
        caught.value.current,
        {"title": "", "metadata": {}, "source_text": "", "transcript": mine.to_dict()},
        old_label="current",
        new_label="yours",
    )
    assert [(f.old, f.new) for f in diff.messages[0].fields] == [("Theirs", "Mine")]


def test_a_revision_whose_text_is_exact_stores_the_text_only(history):
    """The footprint rule: the canonical transcript is not kept twice when the source text
    says exactly the same; it is parsed again when the revision is read."""
    newest = history.revisions.get(number=3)
    for revision in history.revisions.exclude(pk=newest.pk):
        assert "transcript" not in revision.snapshot
        assert revision.snapshot["spec"] == history.spec
        full = revision.full_snapshot
        assert set(full) == {"title", "metadata", "source_text", "transcript"}
        assert revision.canonical().to_dict() == full["transcript"]
    assert newest.canonical() == history.canonical()


def test_the_newest_revision_is_the_transcript_itself_until_the_next_write(
    dataset, curator, annotator
):
    """No copy of the state in the newest revision (an imported dataset is stored once);
    every write stores the copy first, so that history reads the same before and after."""
    transcript = create_transcript(dataset, text=conversation(), author=curator, title="One")
    first = transcript.revisions.get()
    assert first.snapshot == Revision.CURRENT
    before = dict(first.full_snapshot)
    messages = transcript.canonical().messages
    messages[0].content = "Edited."
    edited = save_transcript(transcript, expected_version=1, author=annotator, messages=messages)
    deleted = delete_transcript(edited, author=curator)
    undeleted = undelete_transcript(deleted, author=curator)
    restored = restore_revision(
        undeleted.revisions.get(number=1), expected_version=undeleted.version, author=curator
    )
    revisions = list(restored.revisions.order_by("number"))
    assert [r.snapshot == Revision.CURRENT for r in revisions] == [False] * 4 + [True]
    assert revisions[0].full_snapshot == before
    assert revisions[1].canonical().messages[0].content == "Edited."
    assert revisions[4].canonical() == restored.canonical() == revisions[0].canonical()


def test_a_newest_revision_read_after_the_transcript_moved_on_reads_its_copy(dataset, curator):
    transcript = create_transcript(dataset, text=conversation(), author=curator)
    read_before = transcript.revisions.get()  # holds CURRENT, as read
    save_transcript(transcript, expected_version=1, author=curator, title="Renamed")
    assert read_before.full_snapshot["title"] == ""


def test_a_write_that_bypasses_storage_is_caught_when_history_is_read(dataset, curator):
    transcript = create_transcript(dataset, text=conversation(), author=curator)
    Transcript.objects.filter(pk=transcript.pk).update(version=2, title="Behind its back")
    with pytest.raises(HistoryBroken):
        transcript.revisions.get().full_snapshot  # noqa: B018


def test_a_revision_whose_text_is_not_exact_keeps_its_transcript(dataset, curator):
    transcript = create_transcript(
        dataset, text=conversation("chatml"), spec="chatml", author=curator
    )
    messages = transcript.canonical().messages
    messages[1].channel = "final"
    lossy = save_transcript(transcript, expected_version=1, author=curator, messages=messages)
    save_transcript(lossy, expected_version=2, author=curator, title="Moved on")
    stored = lossy.revisions.get(number=2).snapshot
    assert stored["transcript"]["messages"][1]["channel"] == "final"
    assert "spec" not in stored


def test_revisions_stored_in_full_before_the_compact_form_still_read_and_restore(history, curator):
    first = history.revisions.get(number=1)
    full = dict(first.full_snapshot)
    type(first).objects.filter(pk=first.pk).update(snapshot=full)  # as older versions wrote
    first = history.revisions.get(number=1)
    assert first.full_snapshot == full
    restored = restore_revision(first, expected_version=3, author=curator)
    assert restored.canonical().to_dict() == full["transcript"]
    diff = diff_revisions(first, history.revisions.get(number=3))
    assert [m.status for m in diff.messages if m.status != "unchanged"]
