"""save_transcript and friends: versioning, conflicts, minimal source edits, soft delete."""

from __future__ import annotations

import pytest

from editor import formats
from editor.errors import (
    ConflictError,
    DomainError,
    InvalidContent,
    NotAllowed,
    TranscriptDeleted,
)
from editor.models import Dataset, Message, Revision, RevisionKind, Transcript
from editor.storage.content import TranscriptContent, check_storable
from editor.storage.create import create_transcript
from editor.storage.save import delete_transcript, save_transcript, undelete_transcript
from tests.editor.samples import conversation, demo_texts, readable_specs

pytestmark = pytest.mark.django_db


@pytest.fixture
def transcript(dataset, curator):
    return create_transcript(
        dataset,
        text=demo_texts()["openchatml-2.2"],
        spec="openchatml-2.2",
        author=curator,
        title="Weather",
        metadata={"source": "demo"},
    )


def edited(transcript: Transcript, index: int, content: str) -> list[formats.Message]:
    messages = transcript.canonical().messages
    messages[index].content = content
    return messages


@pytest.mark.parametrize("spec", readable_specs())
def test_create_stores_every_field_and_the_exact_text(dataset, curator, spec):
    text = demo_texts()[spec]
    transcript = create_transcript(dataset, text=text, spec=spec, author=curator)

    stored = Transcript.objects.get(pk=transcript.pk)
    parsed = formats.parse(text, spec).transcript
    assert stored.source_text == text
    assert stored.source_is_exact
    assert stored.canonical() == parsed
    assert stored.canonical().to_dict() == parsed.to_dict()
    assert stored.version == 1
    assert [r.number for r in stored.revisions.all()] == [1]
    assert stored.revisions.get().full_snapshot["transcript"] == parsed.to_dict()


def test_spec_is_detected_when_not_given(dataset, curator):
    transcript = create_transcript(dataset, text=demo_texts()["harmony"], author=curator)
    assert transcript.spec == "harmony"


def test_undetectable_text_is_refused_with_a_code(dataset, curator):
    with pytest.raises(InvalidContent) as caught:
        create_transcript(dataset, text="just some prose", author=curator)
    assert caught.value.code == "undetectable-spec"
    assert caught.value.status == 422
    assert not Transcript.all_objects.exists()


def test_parse_errors_are_stored_as_diagnostics(dataset, curator):
    text = "<|start|>assistant<|channel|>final<|message|>Half an ans"
    transcript = create_transcript(dataset, text=text, spec="openchatml-2.2", author=curator)
    assert transcript.error_count >= 1
    assert "E-STREAM-TRUNCATED" in {d["code"] for d in transcript.diagnostics}
    assert Transcript.objects.with_errors().get() == transcript


@pytest.mark.parametrize("spec", sorted(set(readable_specs()) & formats.TEXT_SPECS))
def test_an_edit_changes_only_the_edited_message_bytes(transcript, curator, dataset, spec):
    text = demo_texts()[spec]
    original = create_transcript(dataset, text=text, spec=spec, author=curator)
    messages = original.canonical().messages
    index = len(messages) // 2
    source = formats.parse(text, spec).transcript.messages[index].source

    saved = save_transcript(
        original,
        expected_version=1,
        author=curator,
        messages=edited(original, index, messages[index].content + " (edited)"),
    )

    assert saved.version == 2
    assert saved.source_is_exact
    before, after = text[: source.start], text[source.start + len(source.raw) :]
    assert saved.source_text.startswith(before)
    assert saved.source_text.endswith(after)
    assert saved.canonical().messages[index].content.endswith(" (edited)")


def test_save_text_keeps_the_text_byte_for_byte(transcript, curator):
    text = transcript.source_text.replace("<|end|>\n", "<|end|>\n\n", 1)
    saved = save_transcript(transcript, expected_version=1, author=curator, text=text)
    assert saved.source_text == text
    assert Transcript.objects.get(pk=transcript.pk).source_text == text


def test_two_saves_from_the_same_version_one_wins_nothing_lost(transcript, curator, annotator):
    mine = edited(transcript, 1, "Mine")
    theirs = edited(transcript, 1, "Theirs")

    save_transcript(transcript, expected_version=1, author=annotator, messages=theirs)
    with pytest.raises(ConflictError) as caught:
        save_transcript(transcript, expected_version=1, author=curator, messages=mine)

    conflict = caught.value
    assert conflict.status == 409
    assert conflict.current_version == 2
    assert conflict.current["transcript"]["messages"][1]["content"] == "Theirs"
    current = Transcript.objects.get(pk=transcript.pk)
    assert current.version == 2
    assert current.canonical().messages[1].content == "Theirs"
    # Both versions stay retrievable: the original as revision 1, the winner as revision 2,
    # the loser in the caller's hands (retried on top of the current version, it wins too).
    assert [r.number for r in Revision.objects.for_transcript(transcript)] == [2, 1]
    saved = save_transcript(current, expected_version=2, author=curator, messages=mine)
    assert saved.version == 3
    assert saved.canonical().messages[1].content == "Mine"


def test_a_failed_save_writes_nothing(transcript, curator):
    with pytest.raises(InvalidContent):
        save_transcript(
            transcript, expected_version=1, author=curator, messages=edited(transcript, 0, "a\x00b")
        )
    current = Transcript.objects.get(pk=transcript.pk)
    assert current.version == 1
    assert current.source_text == demo_texts()["openchatml-2.2"]
    assert current.revisions.count() == 1


def test_saving_what_is_stored_writes_nothing(transcript, curator):
    saved = save_transcript(
        transcript, expected_version=1, author=curator, messages=transcript.canonical().messages
    )
    assert saved.version == 1
    assert Transcript.objects.get(pk=transcript.pk).version == 1
    assert transcript.revisions.count() == 1


def test_title_and_metadata_alone_are_a_revision(transcript, curator):
    saved = save_transcript(
        transcript, expected_version=1, author=curator, title="Renamed", metadata={"k": 1}
    )
    assert (saved.version, saved.title, saved.metadata) == (2, "Renamed", {"k": 1})
    assert saved.source_text == transcript.source_text
    assert saved.revisions.get(number=2).full_snapshot["title"] == "Renamed"


def test_save_canonical_dict(transcript, curator):
    document = transcript.canonical().to_dict()
    document["messages"].append({"role": "user", "content": "One more thing", "end": "end"})
    saved = save_transcript(transcript, expected_version=1, author=curator, canonical=document)
    assert saved.canonical().to_dict() == document
    assert saved.source_text.startswith(transcript.source_text.rstrip("\n"))


def test_an_edit_the_spec_cannot_say_is_kept_and_flagged(dataset, curator):
    original = create_transcript(
        dataset, text=conversation("chatml"), spec="chatml", author=curator
    )
    messages = original.canonical().messages
    messages[0].channel = "analysis"  # ChatML has no channels

    saved = save_transcript(original, expected_version=1, author=curator, messages=messages)

    assert saved.canonical().messages[0].channel == "analysis"
    assert not saved.source_is_exact


@pytest.mark.parametrize(
    ("messages", "code"),
    [
        ([{"content": "no role"}], "invalid-message"),
        ([{"role": "user", "content": 3}], "invalid-message"),
        ([{"role": "user", "end": "stop"}], "invalid-message"),
        ([{"role": "user", "channel": ["x"]}], "invalid-message"),
        (["not an object"], "invalid-message"),
        ([{"role": "user", "channel": "c" * 300}], "field-too-long"),
        ([{"role": "user", "content": "\ud800"}], "unstorable-text"),
    ],
)
def test_bad_messages_get_a_clear_error(transcript, curator, messages, code):
    with pytest.raises(InvalidContent) as caught:
        save_transcript(transcript, expected_version=1, author=curator, messages=messages)
    assert caught.value.code == code
    assert Transcript.objects.get(pk=transcript.pk).version == 1


def test_short_fields_are_each_held_to_their_length(transcript, curator):
    """Each field up to the limit is kept, however long they are together; the one past it
    is named."""
    at_limit = {"role": "user", "channel": "c" * 255, "recipient": "r" * 255, "name": "n" * 255}
    saved = save_transcript(transcript, expected_version=1, author=curator, messages=[at_limit])
    assert saved.canonical().messages[0].recipient == "r" * 255
    with pytest.raises(InvalidContent, match="Message 1: recipient is longer") as caught:
        save_transcript(
            saved,
            expected_version=2,
            author=curator,
            messages=[at_limit, {**at_limit, "recipient": "r" * 256}],
        )
    assert caught.value.code == "field-too-long"


def test_bad_metadata_gets_a_clear_error(transcript, curator):
    with pytest.raises(InvalidContent) as caught:
        save_transcript(transcript, expected_version=1, author=curator, metadata=["x"])
    assert caught.value.code == "invalid-metadata"


def test_only_editors_may_save(transcript, viewer, outsider, annotator):
    for user in (viewer, outsider):
        with pytest.raises(NotAllowed):
            save_transcript(transcript, expected_version=1, author=user, title="x")
    assert save_transcript(transcript, expected_version=1, author=annotator, title="x").version == 2


def test_soft_delete_and_undelete(transcript, curator, annotator):
    deleted = delete_transcript(transcript, author=annotator, note="duplicate")
    assert deleted.version == 2
    assert not Transcript.objects.filter(pk=transcript.pk).exists()
    assert Transcript.all_objects.deleted().get(pk=transcript.pk).deleted_by == annotator
    with pytest.raises(TranscriptDeleted):
        save_transcript(transcript, expected_version=2, author=curator, title="x")
    with pytest.raises(NotAllowed):
        undelete_transcript(transcript, author=annotator)

    restored = undelete_transcript(transcript, author=curator)

    assert restored.version == 3
    assert restored.deleted_at is None
    assert Transcript.objects.get(pk=transcript.pk).canonical() == transcript.canonical()
    kinds = list(Revision.objects.for_transcript(transcript).values_list("kind", flat=True))
    assert kinds == [RevisionKind.UNDELETE, RevisionKind.DELETE, RevisionKind.CREATE]
    with pytest.raises(DomainError) as caught:
        undelete_transcript(transcript, author=curator)
    assert caught.value.code == "not-deleted"


def test_delete_from_a_stale_version_conflicts(transcript, curator):
    save_transcript(transcript, expected_version=1, author=curator, title="x")
    with pytest.raises(ConflictError):
        delete_transcript(transcript, author=curator, expected_version=1)
    assert Transcript.objects.filter(pk=transcript.pk).exists()


def test_for_user_sees_member_datasets_only(
    transcript, dataset, curator, outsider, django_user_model
):
    other = Dataset.objects.create(name="Other", slug="other")
    create_transcript(other, text=conversation(), author=None)
    admin = django_user_model.objects.create_superuser("root")

    assert list(Transcript.objects.for_user(curator)) == [transcript]
    assert not Transcript.objects.for_user(outsider).exists()
    assert Transcript.objects.for_user(admin).count() == 2
    assert list(Dataset.objects.for_user(curator)) == [dataset]
    assert dataset.role_of(outsider) is None
    assert dataset.can_curate(admin)


def test_list_and_detail_queries_are_bounded(dataset, curator, django_assert_max_num_queries):
    for _ in range(30):
        create_transcript(dataset, text=conversation(turns=3), author=curator)

    with django_assert_max_num_queries(1):
        rows = list(
            Transcript.objects.for_user(curator).filter(dataset=dataset).summaries().order_by("-pk")
        )
    assert [r.message_count for r in rows] == [6] * 30

    with django_assert_max_num_queries(2):
        detail = Transcript.objects.with_messages().get(pk=rows[0].pk)
        assert len(detail.canonical().messages) == 6

    with django_assert_max_num_queries(2):
        transcripts = list(Transcript.objects.filter(dataset=dataset).with_messages())
        assert sum(len(t.canonical().messages) for t in transcripts) == 180


def test_message_rows_keep_none_apart_from_empty(dataset, curator):
    canonical = {
        "spec": "openchatml-2.2",
        "header": {},
        "messages": [{"role": "assistant", "channel": "", "content": "", "end": None}],
    }
    transcript = create_transcript(dataset, canonical=canonical, author=curator)
    row = Message.objects.get(transcript=transcript)
    assert row.channel == "" and row.recipient is None and row.end is None
    assert transcript.canonical().messages[0] == formats.Message.from_dict(canonical["messages"][0])


@pytest.mark.parametrize(
    "where",
    ["content", "name", "channel", "attr value", "attr key", "nested attr", "header", "doc attrs"],
)
@pytest.mark.parametrize("bad", ["\x00", "\ud800"])
def test_unstorable_text_anywhere_in_the_transcript_is_refused(where, bad):
    """Every string of the canonical transcript is checked, wherever it sits."""
    message = formats.Message(role="user", content="hi")
    header, attrs = {}, {}
    if where == "content":
        message.content = f"a{bad}"
    elif where == "name":
        message.name = bad
    elif where == "channel":
        message.channel = bad
    elif where == "attr value":
        message.attrs = {"k": bad}
    elif where == "attr key":
        message.attrs = {bad: 1}
    elif where == "nested attr":
        message.attrs = {"k": [{"deeper": ["x", bad]}]}
    elif where == "header":
        header = {"title": bad}
    else:
        attrs = {"tools": [{"name": bad}]}
    canonical = formats.Transcript(
        spec="openchatml-2.2", header=header, messages=[message], attrs=attrs
    )
    content = TranscriptContent(canonical=canonical, source_text="", source_is_exact=False)
    with pytest.raises(InvalidContent) as caught:
        check_storable(content, title="", metadata={}, external_id="")
    assert caught.value.code == "unstorable-text"
    assert "the transcript" in caught.value.message
