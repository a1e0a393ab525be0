"""Alternatives of a turn (editor/alternatives.py): turns, adding with its own-turn snapshot
and dedupe, deleting, promoting as one revision, permissions and the per-annotator order."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from editor import alternatives, formats
from editor.errors import (
    AlternativeIsCurrent,
    ConflictError,
    InvalidContent,
    MessageNotFound,
    NotAllowed,
    NotATurn,
)
from editor.models import Alternative, Dataset, LabelSchema, ReviewQueue, Transcript
from tests.support.turns import CHAT, fresh, msg

pytestmark = pytest.mark.django_db

ANSWER = [{"role": "assistant", "channel": "final", "content": "Sunny, 20 °C.", "end": "return"}]


def test_a_turn_runs_from_an_assistant_message_over_assistant_and_tool_messages():
    assert alternatives.turn_end(CHAT, 2) == 5
    assert alternatives.turn_end(CHAT, 6) == 7
    assert [m.content for m in alternatives.turn_messages(CHAT, 4)] == ["20 °C and sunny."]
    assert alternatives.turn_starts(CHAT) == [2, 6]


@pytest.mark.parametrize("index", [0, 1, 5])
def test_a_turn_does_not_start_at_another_role(index):
    with pytest.raises(NotATurn, match=f"Message {index}"):
        alternatives.turn_end(CHAT, index)


def test_a_turn_past_the_end_is_not_found():
    with pytest.raises(MessageNotFound):
        alternatives.turn_end(CHAT, 7)


def test_the_hash_ignores_key_order_and_objects_versus_dicts():
    one = alternatives.content_hash([msg("assistant", "Hi")])
    assert one == alternatives.content_hash([{"end": "end", "content": "Hi", "role": "assistant"}])
    assert one != alternatives.content_hash([msg("assistant", "Hi!")])


def test_the_first_alternative_stores_the_own_turn_too(chat, annotator):
    added = alternatives.add_alternative(chat, 6, ANSWER, source="hand", author=annotator)

    rows = list(alternatives.alternatives_of(chat, 6))
    assert [row.source for row in rows] == ["transcript", "hand"]
    assert rows[0].messages == [CHAT[6].to_dict()]
    assert rows[1] == added and added.created_by == annotator
    assert added.messages == ANSWER
    assert alternatives.candidates(chat, 6) == rows


def test_the_same_content_twice_is_the_row_already_there(chat, annotator, curator):
    first = alternatives.add_alternative(chat, 6, ANSWER, source="hand", author=annotator)
    again = alternatives.add_alternative(chat, 6, ANSWER, source="import", author=curator)
    own = alternatives.add_alternative(chat, 6, [CHAT[6]], source="hand", author=curator)

    assert again == first
    assert own.source == "transcript"
    assert Alternative.objects.filter(transcript=chat).count() == 2


def test_a_multi_message_turn_may_be_replaced_by_a_single_message(chat, annotator):
    alternatives.add_alternative(chat, 2, ANSWER, source="hand", author=annotator)
    own = alternatives.alternatives_of(chat, 2).first()
    assert [m["role"] for m in own.messages] == ["assistant", "tool", "assistant"]


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ([], NotATurn),
        ([{"role": "user", "content": "Hi"}], NotATurn),
        ([{"role": "assistant", "content": "A"}, {"role": "user", "content": "B"}], NotATurn),
        ([{"role": "assistant", "content": 3}], InvalidContent),
        ([{"content": "no role"}], InvalidContent),
        ("plain text", NotATurn),
    ],
)
def test_messages_that_are_not_a_turn_are_refused(chat, annotator, messages, error):
    with pytest.raises(error):
        alternatives.add_alternative(chat, 6, messages, source="hand", author=annotator)
    assert not Alternative.objects.exists()


def test_an_alternative_at_a_message_that_starts_no_turn_is_refused(chat, annotator):
    with pytest.raises(NotATurn):
        alternatives.add_alternative(chat, 5, ANSWER, source="hand", author=annotator)


def test_an_unknown_source_is_refused(chat, annotator):
    with pytest.raises(InvalidContent, match="source"):
        alternatives.add_alternative(chat, 6, ANSWER, source="robot", author=annotator)


def test_viewers_and_outsiders_add_none(chat, viewer, outsider):
    for user in (viewer, outsider):
        with pytest.raises(NotAllowed):
            alternatives.add_alternative(chat, 6, ANSWER, source="hand", author=user)


def test_promote_is_one_revision_and_keeps_the_replaced_turn(chat, annotator):
    added = alternatives.add_alternative(chat, 2, ANSWER, source="hand", author=annotator)
    later = alternatives.add_alternative(
        chat, 6, [{"role": "assistant", "content": "Any time."}], source="hand", author=annotator
    )

    saved = alternatives.promote(chat, added, expected_version=1, author=annotator)

    assert saved.version == 2
    assert chat.revisions.count() == 2
    assert chat.revisions.get(number=2).note == f"promoted alternative {added.pk} at message 2"
    messages = fresh(chat).canonical().messages
    assert [m.content for m in messages] == [
        "Be brief.",
        "Weather in Tokyo?",
        "Sunny, 20 °C.",
        "Thanks!",
        "You're welcome.",
    ]
    own = Alternative.objects.get(transcript=chat, message_index=2, source="transcript")
    assert len(own.messages) == 3
    # The later turn moved up two messages, and its alternatives with it.
    later.refresh_from_db()
    assert later.message_index == 4
    assert {a.message_index for a in alternatives.alternatives_of(chat)} == {2, 4}


def test_promote_from_a_stale_version_is_a_conflict(chat, annotator, curator):
    added = alternatives.add_alternative(chat, 6, ANSWER, source="hand", author=annotator)
    alternatives.promote(chat, added, expected_version=1, author=curator)
    own = Alternative.objects.get(transcript=chat, message_index=6, source="transcript")

    with pytest.raises(ConflictError):
        alternatives.promote(fresh(chat), own, expected_version=1, author=annotator)
    assert fresh(chat).version == 2


def test_viewers_promote_nothing(chat, annotator, viewer):
    added = alternatives.add_alternative(chat, 6, ANSWER, source="hand", author=annotator)
    with pytest.raises(NotAllowed):
        alternatives.promote(chat, added, expected_version=1, author=viewer)


def test_the_current_turn_snapshot_cannot_be_deleted_until_another_is_promoted(
    chat, annotator, curator
):
    added = alternatives.add_alternative(chat, 6, ANSWER, source="hand", author=annotator)
    own = Alternative.objects.get(transcript=chat, message_index=6, source="transcript")
    with pytest.raises(AlternativeIsCurrent):
        alternatives.delete_alternative(own, user=curator)

    alternatives.promote(chat, added, expected_version=1, author=curator)
    own.transcript = fresh(chat)
    alternatives.delete_alternative(own, user=curator)
    assert not Alternative.objects.filter(pk=own.pk).exists()


def test_only_a_curator_or_the_creator_deletes(chat, annotator, curator, reviewer):
    added = alternatives.add_alternative(chat, 6, ANSWER, source="hand", author=curator)
    for user in (annotator, reviewer):
        with pytest.raises(NotAllowed):
            alternatives.delete_alternative(added, user=user)
    mine = alternatives.add_alternative(
        chat, 6, [{"role": "assistant", "content": "Mine."}], source="hand", author=annotator
    )
    alternatives.delete_alternative(mine, user=annotator)
    alternatives.delete_alternative(added, user=curator)
    assert list(Alternative.objects.values_list("source", flat=True)) == ["transcript"]


def test_plain_text_is_one_assistant_message_and_json_is_messages():
    assert alternatives.parse_messages("Hello") == [
        {"role": "assistant", "content": "Hello", "end": formats.END}
    ]
    assert alternatives.parse_messages('{"role": "assistant", "content": "x"}') == [
        {"role": "assistant", "content": "x"}
    ]
    with pytest.raises(InvalidContent, match="not valid JSON"):
        alternatives.parse_messages("[{")
    with pytest.raises(NotATurn):
        alternatives.parse_messages("   ")


def test_the_order_shown_is_stable_per_annotator_and_varies_between_them():
    ids = [11, 12]
    first = alternatives.shuffled_order(ids, 1, "t5:m2")
    assert alternatives.shuffled_order([12, 11], 1, "t5:m2") == first
    orders = {tuple(alternatives.shuffled_order(ids, user, "t5:m2")) for user in range(20)}
    assert orders == {(11, 12), (12, 11)}


def test_the_demo_has_a_pairwise_example_once_it_has_a_curator(django_user_model):
    call_command("load_demo", verbosity=0)
    assert not Alternative.objects.exists()  # no curator yet: nobody to add it
    django_user_model.objects.create_superuser("admin", password="x")
    call_command("load_demo", "--curator", "admin", verbosity=0)
    call_command("load_demo", "--curator", "admin", verbosity=0)
    demo = Dataset.objects.get(slug="demo")
    transcript = Transcript.objects.get(dataset=demo, external_id="demo-openchatml-2.2")
    turn = list(alternatives.alternatives_of(transcript, 3))
    assert [a.source for a in turn] == ["transcript", "hand"]
    assert len(turn[0].messages) == 5  # analysis, two commentaries, the tool's answer, final
    schema = LabelSchema.objects.get(dataset=demo, name="Preference")
    queue = ReviewQueue.objects.get(dataset=demo, name="Compare answers")
    assert list(queue.schemas.all()) == [schema]
    assert list(queue.items.values_list("transcript", flat=True)) == [transcript.pk]
