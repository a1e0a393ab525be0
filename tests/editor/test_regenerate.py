"""Regenerating a turn on every spec id, against the local OpenAI-compatible server: what the
server receives is the conversation before the turn (the spec core's conversion), and the
answer (content, reasoning, tool calls) comes back in the transcript's own spec's terms."""

from __future__ import annotations

import json

import pytest

from editor import formats
from editor.alternatives import promote, turn_starts
from editor.assist import regenerate
from editor.errors import InvalidContent, MessageNotFound, ModelCallFailed, NotAllowed, NotATurn
from editor.formats.convert import map_transcript
from editor.models import Alternative, ModelConnection, ModelRequest
from editor.storage.create import create_transcript
from tests.editor.samples import conversation, demo_texts
from tests.support.openai_server import Reply

pytestmark = pytest.mark.django_db

ANSWER = "The answer is forty-two."
REASONING = "Think about the question first."


@pytest.fixture
def connection(dataset, openai_server):
    return ModelConnection.objects.create(
        dataset=dataset,
        name="local",
        base_url=openai_server.base_url,
        model="test-model",
        options={"temperature": 0.7},
        timeout_seconds=5,
    )


def sample(spec: str) -> str:
    """The demo sample of ``spec`` when it has a turn to regenerate, else a small one."""
    text = demo_texts().get(spec)
    if text and turn_starts(formats.parse(text, spec).transcript.messages):
        return text
    return conversation(spec)


def transcript_of(dataset, author, spec):
    return create_transcript(dataset, author=author, text=sample(spec), spec=spec)


def kept_by(spec: str, *answer: formats.Message) -> str:
    """What ``spec`` keeps of an answer, as JSON text (the oracle for what must come back):
    an openai-messages question and ``answer``, converted by the spec core, after the
    question."""
    probe = formats.Transcript(
        spec="openai-messages", messages=[formats.Message(role="user", content="q"), *answer]
    )
    mapped, _losses = map_transcript(probe, spec)
    after = [m.to_dict() for m in mapped.messages if m.role != "user" and m.content != "q"]
    return json.dumps(after) if after else ""


def last_turn(transcript) -> int:
    return turn_starts(transcript.stored_messages())[-1]


@pytest.mark.parametrize("spec", formats.SPEC_IDS)
def test_the_request_is_the_conversation_before_the_turn(
    spec, dataset, annotator, connection, openai_server
):
    transcript = transcript_of(dataset, annotator, spec)
    index = last_turn(transcript)
    openai_server.reply(Reply(content=ANSWER, reasoning=REASONING))
    alternative = regenerate.regenerate(transcript, index, connection.pk, annotator)

    body = openai_server.bodies()[0]
    assert body["model"] == "test-model" and body["stream"] is True
    assert body["temperature"] == 0.7
    canonical = transcript.canonical()
    prefix = formats.Transcript(
        spec=spec, header=canonical.header, messages=canonical.messages[:index]
    )
    expected = json.loads(formats.serialize(map_transcript(prefix, "openai-messages")[0]))
    expected_messages = expected["messages"] if isinstance(expected, dict) else expected
    assert body["messages"] == expected_messages
    if isinstance(expected, dict) and expected.get("tools"):
        assert body["tools"] == expected["tools"]
    else:
        assert "tools" not in body
    if spec in ("harmony", "openchatml-2.2"):  # their samples declare the weather tool
        names = [tool["function"]["name"] for tool in body["tools"]]
        assert "get_current_weather" in names
    # Message by message against the transcript: every user message before the turn, in
    # order and word for word, and nothing from the turn itself or after it.
    # (Text specs keep the newline before an end token; the hub sends the logical text.)
    users = [m.content.strip() for m in canonical.messages[:index] if m.role == "user"]
    sent_users = [m["content"].strip() for m in body["messages"] if m["role"] == "user"]
    assert sent_users == users
    assert body["messages"][-1]["role"] in ("user", "tool", "system", "developer")

    assert alternative.source == "model" and alternative.message_index == index
    assert alternative.generation["connection"] == connection.pk
    assert alternative.generation["model"] == "test-model"
    assert alternative.generation["options"] == {"temperature": 0.7}
    assert alternative.generation["finish_reason"] == "stop"
    assert set(alternative.generation) >= {"usage", "created_at"}
    kept = [formats.Message.from_dict(m) for m in alternative.messages]
    assert kept[0].role == "assistant"
    assert [m.content for m in kept if ANSWER in (m.content or "")], kept
    reasoning = formats.Message(role="assistant", channel="analysis", content=REASONING)
    if REASONING in kept_by(spec, reasoning):
        assert any(REASONING in (m.content or "") for m in kept), kept
    row = ModelRequest.objects.get()
    assert (row.purpose, row.transcript, row.user, row.ok) == (
        "regenerate",
        transcript,
        annotator,
        True,
    )


@pytest.mark.parametrize("spec", formats.SPEC_IDS)
def test_a_tool_call_in_the_answer_is_kept_in_the_specs_terms(
    spec, dataset, annotator, connection, openai_server
):
    transcript = transcript_of(dataset, annotator, spec)
    index = last_turn(transcript)
    openai_server.reply(
        Reply(
            content=None,
            reasoning=REASONING,
            tool_calls=[{"id": "call_77", "name": "lookup", "arguments": {"q": "tokyo"}}],
        )
    )
    call = formats.Message(
        role="assistant",
        channel="commentary",
        recipient="functions.lookup",
        content='{"q": "tokyo"}',
        call_id="call_77",
        constrain="json",
        end=formats.CALL,
    )
    reasoning = formats.Message(role="assistant", channel="analysis", content=REASONING)
    expected = kept_by(spec, reasoning, call)
    if not expected:
        # Nothing of the answer fits the spec (ChatML): refused, with what was lost.
        with pytest.raises(InvalidContent) as caught:
            regenerate.regenerate(transcript, index, connection.pk, annotator)
        assert caught.value.code == "answer-not-representable"
        assert caught.value.details["losses"]
        assert not Alternative.objects.filter(source="model").exists()
        return
    alternative = regenerate.regenerate(transcript, index, connection.pk, annotator)
    kept = json.dumps(alternative.messages)
    for word in ("lookup", "tokyo", "call_77", REASONING):
        assert (word in kept) == (word in expected), (word, kept, expected)
    if '"end": "call"' in expected:  # the spec's own tool-call form, not text about one
        assert any(m.get("end") == formats.CALL for m in alternative.messages), kept
    assert alternative.generation["finish_reason"] == "tool_calls"


def test_accept_keep_discard(dataset, annotator, connection, openai_server):
    transcript = transcript_of(dataset, annotator, "openchatml-2.2")
    index = last_turn(transcript)
    openai_server.reply(ANSWER, "A second answer.")
    kept = regenerate.regenerate(transcript, index, connection.pk, annotator)
    chosen = regenerate.regenerate(transcript, index, connection.pk, annotator)
    # Keep: both stay alternatives, beside the turn as it stood.
    assert Alternative.objects.filter(transcript=transcript, message_index=index).count() == 3
    # Accept: one revision, the turn replaced by the model's answer.
    saved = promote(transcript, chosen, expected_version=transcript.version, author=annotator)
    assert saved.version == transcript.version + 1
    assert any("A second answer." in (m.content or "") for m in saved.stored_messages())
    assert Alternative.objects.filter(pk=kept.pk).exists()


def test_refusals(dataset, annotator, viewer, curator, connection, openai_server):
    transcript = transcript_of(dataset, annotator, "openchatml-2.2")
    with pytest.raises(NotAllowed):
        regenerate.prepare(transcript, last_turn(transcript), connection.pk, viewer)
    with pytest.raises(NotATurn):
        regenerate.prepare(transcript, 0, connection.pk, annotator)
    with pytest.raises(MessageNotFound):
        regenerate.prepare(transcript, 999, connection.pk, annotator)
    other = ModelConnection.objects.create(
        dataset=type(dataset).objects.create(name="Other", slug="other"),
        name="x",
        base_url=openai_server.base_url,
        model="m",
    )
    with pytest.raises(Exception) as caught:
        regenerate.prepare(transcript, last_turn(transcript), other.pk, annotator)
    assert caught.value.code == "not-found"
    assert openai_server.bodies() == []


def test_a_failed_call_stores_nothing(dataset, annotator, connection, openai_server):
    transcript = transcript_of(dataset, annotator, "harmony")
    openai_server.reply(Reply(status=500, error_message="out of memory"))
    with pytest.raises(ModelCallFailed, match="out of memory"):
        regenerate.regenerate(transcript, last_turn(transcript), connection.pk, annotator)
    assert not Alternative.objects.filter(transcript=transcript).exists()
    assert ModelRequest.objects.get().ok is False


def test_streamed_events_end_with_the_alternative(dataset, annotator, connection, openai_server):
    transcript = transcript_of(dataset, annotator, "openai-messages")
    openai_server.reply(Reply(content="one two three"))
    prepared = regenerate.prepare(transcript, last_turn(transcript), connection.pk, annotator)
    events = list(regenerate.events(prepared, annotator))
    deltas = [e for e in events if e.startswith("event: delta")]
    assert len(deltas) == 3
    assert "".join(json.loads(e.split("data: ", 1)[1])["content"] for e in deltas) == (
        "one two three"
    )
    done = json.loads(events[-1].split("data: ", 1)[1])
    assert events[-1].startswith("event: done")
    assert Alternative.objects.get(pk=done["alternative"]["id"]).source == "model"


def test_streamed_failure_is_an_error_event(dataset, annotator, connection, openai_server):
    transcript = transcript_of(dataset, annotator, "openai-messages")
    openai_server.reply(Reply(status=429, retry_after=3, error_message="slow down"))
    prepared = regenerate.prepare(transcript, last_turn(transcript), connection.pk, annotator)
    events = list(regenerate.events(prepared, annotator))
    assert len(events) == 1 and events[0].startswith("event: error")
    error = json.loads(events[0].split("data: ", 1)[1])
    assert error["code"] == "model-call-failed" and error["details"]["retry_after"] == 3
