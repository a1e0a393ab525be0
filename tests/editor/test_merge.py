"""Saves from a stale page (issue 31, item 11): an edit whose messages nobody else changed
meanwhile is merged onto the stored version (one revision, which says so); the same message
changed by both, or indexes shifted by an insert or a delete, is a conflict."""

from __future__ import annotations

import pytest

from editor import editing
from editor.errors import ConflictError
from editor.models import Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import demo_texts

pytestmark = pytest.mark.django_db


@pytest.fixture
def weather(dataset, annotator):
    return create_transcript(
        dataset, text=demo_texts()["openchatml-2.2"], spec="openchatml-2.2", author=annotator
    )


def fresh(transcript: Transcript) -> Transcript:
    return Transcript.objects.select_related("dataset").get(pk=transcript.pk)


def edit(index, content):
    return lambda t, version, who: editing.edit_message(
        t, index, {"content": content}, expected_version=version, author=who
    )


def insert(after):
    return lambda t, version, who: editing.insert_message(
        t, after, {"role": "user", "content": "inserted"}, expected_version=version, author=who
    )


def delete(index):
    return lambda t, version, who: editing.delete_message(
        t, index, expected_version=version, author=who
    )


def move(index, to):
    return lambda t, version, who: editing.move_message(
        t, index, to, expected_version=version, author=who
    )


# (what they saved first, what I save from the page I had before theirs, merged?)
CASES = {
    "same message": (edit(5, "theirs"), edit(5, "mine"), False),
    "different messages": (edit(7, "theirs"), edit(5, "mine"), True),
    "they inserted, shifting indexes": (insert(1), edit(5, "mine"), False),
    "they deleted, shifting indexes": (delete(1), edit(5, "mine"), False),
    "I insert after their edit": (edit(7, "theirs"), insert(2), False),
    "they moved other messages": (move(1, 2), edit(5, "mine"), True),
    "they moved the message I edit": (move(5, 6), edit(5, "mine"), False),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_stale_save_merges_or_conflicts(case, weather, annotator, curator):
    theirs, mine, merges = CASES[case]
    # The page I edit from was read at version 1, before their save.
    page = fresh(weather)
    theirs(fresh(weather), 1, curator)
    after_theirs = fresh(weather).canonical()  # read now: rows and text change together
    if not merges:
        with pytest.raises(ConflictError):
            mine(page, 1, annotator)
        assert fresh(weather).version == 2
        assert fresh(weather).canonical() == after_theirs
        return
    result = mine(page, 1, annotator)
    saved = fresh(weather)
    assert saved.version == 3 and saved.revisions.count() == 3  # one revision per save
    assert result.merged_with.number == 2
    assert result.merge_note == "merged with r2 by curator"
    revision = saved.revisions.get(number=3)
    assert revision.author == annotator
    assert revision.note.endswith("(merged with r2 by curator)")
    # Theirs is kept where I did not touch; mine where I did.
    for index, (message, their) in enumerate(
        zip(saved.canonical().messages, after_theirs.messages, strict=True)
    ):
        if index == 5:
            assert message.content == "mine"
        else:
            assert message.fingerprint() == their.fingerprint()


def test_the_same_change_on_both_sides_saves_nothing_more(weather, annotator, curator):
    page = fresh(weather)
    editing.edit_message(
        fresh(weather), 5, {"content": "alike"}, expected_version=1, author=curator
    )
    result = editing.edit_message(
        page, 5, {"content": "alike"}, expected_version=1, author=annotator
    )
    assert result.version == 2 and fresh(weather).revisions.count() == 2
    assert fresh(weather).canonical().messages[5].content == "alike"


def test_different_messages_keep_both_edits(weather, annotator, curator):
    page = fresh(weather)
    editing.edit_message(
        fresh(weather), 7, {"content": "theirs"}, expected_version=1, author=curator
    )
    editing.edit_message(page, 5, {"content": "mine"}, expected_version=1, author=annotator)
    messages = fresh(weather).canonical().messages
    assert messages[7].content == "theirs" and messages[5].content == "mine"


def test_a_merge_is_still_version_checked(weather, annotator, curator, monkeypatch):
    """A third save landing between the merge's read and its save is a conflict again."""
    page = fresh(weather)
    editing.edit_message(
        fresh(weather), 7, {"content": "theirs"}, expected_version=1, author=curator
    )
    real_merge = editing.merge_messages

    def merge_then_someone_saves(*args):
        merged = real_merge(*args)
        editing.edit_message(
            fresh(weather), 2, {"content": "a third"}, expected_version=2, author=curator
        )
        return merged

    monkeypatch.setattr(editing, "merge_messages", merge_then_someone_saves)
    with pytest.raises(ConflictError):
        editing.edit_message(page, 5, {"content": "mine"}, expected_version=1, author=annotator)
    saved = fresh(weather)
    assert saved.version == 3 and saved.canonical().messages[5].content != "mine"


def test_the_editor_says_it_merged_and_shows_theirs(client, weather, annotator, curator):
    from django.test import Client

    other = Client()
    other.force_login(curator)
    hx = {"HX-Request": "true"}
    base = f"/transcripts/{weather.pk}/messages"
    other.post(
        f"{base}/7/save/", {"version": 1, "role": "assistant", "content": "Theirs"}, headers=hx
    )
    client.force_login(annotator)
    response = client.post(
        f"{base}/2/save/", {"version": 1, "role": "user", "content": "Mine"}, headers=hx
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "data-conflict" not in html
    assert "Saved: merged with r2 by curator." in html
    assert "Theirs" in html and "Mine" in html  # the whole list, their edit included
    messages = fresh(weather).canonical().messages
    assert messages[2].content == "Mine" and messages[7].content == "Theirs"


def test_a_stale_edit_of_a_message_they_deleted_is_a_conflict_not_a_missing_message(
    weather, annotator, curator
):
    editing.delete_message(fresh(weather), 7, expected_version=1, author=curator)
    # The request reads the transcript as it is now (version 2, seven messages).
    with pytest.raises(ConflictError):
        editing.edit_message(
            fresh(weather), 7, {"content": "mine"}, expected_version=1, author=annotator
        )
