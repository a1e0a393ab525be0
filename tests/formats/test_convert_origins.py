"""Where each converted message comes from (``map_transcript_traced``): what lets labels
follow their messages across specs."""

from __future__ import annotations

from editor import formats
from editor.formats.convert import map_transcript_traced

CHAT = formats.Transcript(
    spec="openchatml-2.2",
    messages=[
        formats.Message(role="user", content="Weather?"),
        formats.Message(role="assistant", channel="analysis", content="Look it up."),
        formats.Message(
            role="assistant",
            channel="commentary",
            recipient="functions.weather",
            call_id="c1",
            constrain="json",
            content="{}",
            end=formats.CALL,
        ),
        formats.Message(
            role="tool", name="functions.weather", call_id="c1", channel="commentary", content="{}"
        ),
        formats.Message(role="assistant", channel="final", content="Sunny."),
    ],
)


def test_the_same_spec_maps_each_message_to_itself():
    _, _, origins = map_transcript_traced(CHAT, "openchatml-2.2")
    assert origins == [(0,), (1,), (2,), (3,), (4,)]


def test_dropped_messages_have_no_place():
    mapped, losses, origins = map_transcript_traced(CHAT, "chatml")
    assert origins == [(0,), (4,)]
    assert [m.content for m in mapped.messages] == ["Weather?", "Sunny."]
    assert {loss.message_index for loss in losses} >= {1, 2, 3}


def test_a_generated_message_comes_from_nothing():
    mapped, _, origins = map_transcript_traced(CHAT, "harmony")
    assert mapped.messages[0].role == "system" and origins[0] == ()
    assert origins[1:] == [(0,), (1,), (2,), (3,), (4,)]


def test_merged_messages_keep_every_origin():
    mapped, _, origins = map_transcript_traced(CHAT, "openchatml-0.1")
    assert len(mapped.messages) == len(origins)
    merged = next(o for o in origins if len(o) > 1)
    assert set(merged) <= {1, 2, 4}
    assert sorted(i for o in origins for i in o) == [0, 1, 2, 3, 4]


def test_messages_the_target_adds_come_from_nothing_and_the_rest_stay_aligned():
    """OpenAI tools become a v0.1 function list (a system message of its own) or Harmony's
    developer # Tools: messages the source never had."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "editor/demo/openai-messages.json").read_text()
    source = formats.parse(text, "openai-messages").transcript
    for target in ("openchatml-0.1", "harmony", "openchatml-2.2"):
        mapped, _, origins = map_transcript_traced(source, target)
        assert len(origins) == len(mapped.messages), target
        added = [m.role for m, origin in zip(mapped.messages, origins, strict=True) if not origin]
        assert set(added) <= {"system", "developer"}, (target, added)
        contents = {index: source.messages[index].content for origin in origins for index in origin}
        for message, origin in zip(mapped.messages, origins, strict=True):
            if len(origin) == 1 and contents[origin[0]]:
                assert contents[origin[0]] in message.content or message.role != "assistant"
        kept = sorted(i for origin in origins for i in origin)
        assert kept == sorted(set(kept)), target  # no source message written twice
