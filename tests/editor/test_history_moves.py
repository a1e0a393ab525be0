"""History diffs say what an inserted or deleted message held, and a move is a move (issue 31,
item 10): in ``editor.revisions`` and on the history page."""

import pytest

from editor import editing
from editor.revisions import diff_revisions
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def talk(dataset, annotator):
    # messages: Question 0? / Answer 0. / Question 1? / Answer 1. / Question 2? / Answer 2.
    return create_transcript(
        dataset, text=conversation(turns=3), spec="openchatml-2.2", author=annotator
    )


def changes_between(transcript, old: int, new: int):
    revisions = transcript.revisions
    diff = diff_revisions(revisions.get(number=old), revisions.get(number=new))
    return [m for m in diff.messages if m.status != "unchanged"]


def test_a_move_is_one_moved_change(talk, annotator):
    editing.move_message(talk, 1, 4, expected_version=1, author=annotator)
    [moved] = changes_between(talk, 1, 2)
    assert (moved.status, moved.old_index, moved.new_index) == ("moved", 1, 4)
    assert moved.role == "assistant"


def test_inserted_and_deleted_messages_carry_their_text(talk, annotator):
    editing.insert_message(
        talk, 0, {"role": "user", "content": "A new question"}, expected_version=1, author=annotator
    )
    [added] = changes_between(talk, 1, 2)
    assert added.status == "added" and added.message["content"] == "A new question"
    editing.delete_message(talk, 4, expected_version=2, author=annotator)
    [removed] = changes_between(talk, 2, 3)
    assert removed.status == "removed" and removed.message["content"] == "Answer 1."


def test_the_history_page_shows_the_text_and_the_move(client, talk, annotator):
    editing.delete_message(talk, 3, expected_version=1, author=annotator)
    client.force_login(annotator)
    html = client.get(f"/transcripts/{talk.pk}/history/").content.decode()
    removed = html.split('data-change="removed"', 1)[1].split("</article>", 1)[0]
    assert 'data-testid="message-text">Answer 1.</pre>' in removed

    editing.move_message(talk, 0, 2, expected_version=2, author=annotator)
    html = client.get(f"/transcripts/{talk.pk}/history/").content.decode()
    assert 'data-change="moved"' in html
    assert "message #0 moved to #2" in html
    assert 'data-change="removed"' not in html and 'data-change="added"' not in html
