"""An edited turn that has alternatives keeps, among them, the answer before the edit and the
corrected one (editor.pairs.keep_edited_turns, on the write path): once per content, only for
corrections, only for turns compared in pairwise items."""

from __future__ import annotations

import pytest

from editor import alternatives, editing, formats
from editor.models import Alternative, Transcript
from editor.revisions import restore_revision
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.editor.samples import demo_texts
from tests.support.turns import fresh

pytestmark = pytest.mark.django_db

LAST = 6  # the last turn of the chat: one message
HAND = [{"role": "assistant", "channel": "final", "content": "Any time!", "end": "end"}]


def edit(transcript: Transcript, index: int, content: str, author) -> Transcript:
    current = fresh(transcript)
    editing.edit_message(
        current, index, {"content": content}, expected_version=current.version, author=author
    )
    return fresh(transcript)


def kept(transcript: Transcript, index: int) -> list[tuple[str, ...]]:
    """The alternatives of the turn at ``index``: their messages' contents, in order added."""
    return [
        tuple(m["content"] for m in a.messages)
        for a in Alternative.objects.filter(transcript=transcript, message_index=index).order_by(
            "pk"
        )
    ]


def test_an_edit_of_a_compared_turn_keeps_the_original_and_the_correction(chat, curator):
    alternatives.add_alternative(chat, LAST, HAND, source="hand", author=curator)
    assert kept(chat, LAST) == [("You're welcome.",), ("Any time!",)]

    edited = edit(chat, LAST, "You're very welcome.", curator)

    assert kept(chat, LAST) == [("You're welcome.",), ("Any time!",), ("You're very welcome.",)]
    correction = Alternative.objects.filter(transcript=chat, message_index=LAST).last()
    assert (correction.source, correction.created_by) == ("transcript", curator)
    # Hashed as the stored turn is: the page and the API see it as the turn as it stands.
    assert alternatives.is_current(correction, edited.stored_messages())


def test_each_content_is_kept_once(chat, curator):
    alternatives.add_alternative(chat, LAST, HAND, source="hand", author=curator)
    edit(chat, LAST, "Glad to help.", curator)
    edit(chat, LAST, "You're welcome.", curator)  # back to the original
    edit(chat, LAST, "Glad to help.", curator)  # and to the correction again
    assert kept(chat, LAST) == [("You're welcome.",), ("Any time!",), ("Glad to help.",)]
    edit(chat, LAST, "Glad to help!", curator)
    assert kept(chat, LAST)[-1] == ("Glad to help!",)
    assert len(kept(chat, LAST)) == 4


def test_the_answer_before_an_edit_is_kept_when_it_was_not_yet(chat, curator):
    """An alternative of a turn whose own content was never stored (e.g. the row of the own
    turn deleted): the edit keeps the answer it replaced."""
    alternatives.add_alternative(chat, LAST, HAND, source="hand", author=curator)
    Alternative.objects.filter(transcript=chat, message_index=LAST, source="transcript").delete()
    edit(chat, LAST, "Sure thing.", curator)
    assert kept(chat, LAST) == [("Any time!",), ("You're welcome.",), ("Sure thing.",)]


def test_the_whole_turn_is_kept_when_one_of_its_messages_is_edited(chat, curator):
    answer = [{"role": "assistant", "channel": "final", "content": "Sunny.", "end": "end"}]
    alternatives.add_alternative(chat, 2, answer, source="hand", author=curator)
    edit(chat, 4, "20 °C, clear sky.", curator)
    assert kept(chat, 2) == [
        ("Let me check.", '{"temp": 20}', "20 °C and sunny."),
        ("Sunny.",),
        ("Let me check.", '{"temp": 20}', "20 °C, clear sky."),
    ]
    assert kept(chat, LAST) == []  # the other turn has no alternatives: it gets none


def test_turns_without_alternatives_and_other_edits_keep_nothing(chat, curator):
    edit(chat, LAST, "Bye.", curator)  # no alternatives: the pair is the record
    assert not Alternative.objects.exists()
    alternatives.add_alternative(chat, LAST, HAND, source="hand", author=curator)
    edit(chat, 1, "Weather in Osaka?", curator)  # a user message
    current = fresh(chat)
    editing.insert_message(
        current,
        5,
        {"role": "user", "content": "Hm."},
        expected_version=current.version,
        author=curator,
    )
    assert kept(chat, LAST) == [("Bye.",), ("Any time!",)]


def test_a_restore_keeps_nothing(chat, curator):
    alternatives.add_alternative(chat, LAST, HAND, source="hand", author=curator)
    first = fresh(chat).revisions.get(number=1)
    edited = edit(chat, LAST, "Cheers.", curator)
    [cheers] = [a for a in alternatives.alternatives_of(chat, LAST) if a.note]
    assert cheers.messages[0]["content"] == "Cheers."
    cheers.delete()
    restore_revision(first, expected_version=edited.version, author=curator)
    assert kept(chat, LAST) == [("You're welcome.",), ("Any time!",)]  # no correction


def test_promoting_adds_no_alternative(chat, curator):
    hand = alternatives.add_alternative(chat, LAST, HAND, source="hand", author=curator)
    alternatives.promote(fresh(chat), hand, expected_version=1, author=curator)
    assert kept(chat, LAST) == [("You're welcome.",), ("Any time!",)]


SPECS_WITH_ANSWERS = sorted(
    spec
    for spec, text in demo_texts().items()
    if any(m.role == "assistant" for m in formats.parse(text, spec=spec).transcript.messages)
)


def test_most_demo_samples_have_an_answer_to_correct():
    assert len(SPECS_WITH_ANSWERS) >= len(demo_texts()) - 2, SPECS_WITH_ANSWERS


@pytest.mark.parametrize("spec", SPECS_WITH_ANSWERS)
def test_the_correction_is_hashed_as_the_stored_turn_in_every_spec(spec, dataset, curator):
    transcript = create_transcript(dataset, text=demo_texts()[spec], spec=spec, author=curator)
    messages = transcript.stored_messages()
    last = max(i for i, m in enumerate(messages) if m.role == "assistant")
    start = alternatives.turn_start_of(messages, last)
    alternatives.add_alternative(transcript, start, HAND, source="hand", author=curator)
    edited = edit(transcript, last, "A corrected answer.", curator)
    correction = Alternative.objects.filter(transcript=transcript).order_by("pk").last()
    assert correction.messages[last - start]["content"] == "A corrected answer."
    assert alternatives.is_current(correction, edited.stored_messages())
    # Saving the same turn again (another field of another message) adds no copy of it.
    count = Alternative.objects.filter(transcript=transcript).count()
    save_transcript(
        edited, expected_version=edited.version, author=curator, title="Renamed", note="title"
    )
    assert Alternative.objects.filter(transcript=transcript).count() == count
