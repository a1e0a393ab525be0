"""MMS: the JSON thread and the token form, and the mapping of format / end_turn."""

from __future__ import annotations

import json

from editor import formats
from editor.formats.specs import get_codec


def test_format_and_end_turn_mapping():
    thread = [
        {"role": "assistant", "format": "browser:js", "content": "open_url('x')"},
        {"role": "context", "name": "page", "content": "text"},
        {"role": "assistant", "format": "markdown", "content": "Summary", "end_turn": True},
        {"role": "assistant", "format": "markdown", "content": "mid-turn"},
    ]
    transcript, diagnostics = formats.parse(json.dumps(thread), spec="mms")
    assert diagnostics == []
    call, context, final, middle = transcript.messages
    assert (call.recipient, call.content_type, call.end, call.attrs) == (
        "browser",
        "js",
        "call",
        {"format": "browser:js"},
    )
    assert (context.name, context.end) == ("page", "end")
    assert (final.content_type, final.end) == ("markdown", "return")
    assert middle.end == "end"


def test_json_round_trip_by_value_and_exact_when_unchanged():
    text = '{"thread": [{"role": "user", "content": "hi"}, {"role": "assistant", "format": "md", "content": "yo", "end_turn": false}]}'
    transcript, _ = formats.parse(text, spec="mms")
    assert formats.serialize(transcript) == text
    transcript.messages[0].content = "hello"
    again = json.loads(formats.serialize(transcript))
    assert again == {
        "thread": [{"role": "user", "content": "hello"}, json.loads(text)["thread"][1]]
    }


def test_edited_recipient_regenerates_the_format():
    transcript, _ = formats.parse(
        '[{"role": "assistant", "format": "weather:json", "content": "{}"}]', spec="mms"
    )
    transcript.messages[0].recipient = "maps"
    assert json.loads(formats.serialize(transcript))[0]["format"] == "maps:json"


def test_spec_example_with_trailing_comma_is_reported_and_still_read():
    text = '{\n"role": "assistant",\n"format": "javascript",\n"content": "console.log(1)",\n"end_turn": true,\n}'
    transcript, diagnostics = formats.parse(text, spec="mms")
    (diagnostic,) = diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("E-PARSE-JSON", 6, 1)
    assert diagnostic.fix.edits[0].start == text.rindex(",")
    assert transcript.messages[0].end == "return"


def test_tokens_round_trip_and_halting():
    text = (
        "<|role|>user<|content|>Summarise x\n"
        "<|role|>assistant<|format|>browser:js<|content|>open_url('x')"
        "<|role|>context<|name|>page<|content|>text"
        "<|role|>assistant<|format|>markdown<|content|>Done<|end_turn|>\n"
    )
    transcript, diagnostics = formats.parse(text, spec="mms-tokens")
    assert diagnostics == []
    assert [m.end for m in transcript.messages] == ["end", "call", "end", "return"]
    assert transcript.messages[0].content == "Summarise x\n"
    assert transcript.messages[2].name == "page"
    assert formats.serialize(transcript) == text
    transcript.messages[3].content = "Finished"
    assert formats.serialize(transcript) == text.replace("Done", "Finished")


def test_tokens_truncated_assistant():
    transcript, diagnostics = formats.parse(
        "<|role|>assistant<|format|>markdown<|content|>Half", spec="mms-tokens"
    )
    assert [d.code for d in diagnostics] == ["E-STREAM-TRUNCATED"]
    assert transcript.messages[0].end is None


def test_json_to_tokens_through_serialize():
    transcript, _ = formats.parse(
        '[{"role": "assistant", "format": "js", "content": "x()", "end_turn": true}]', spec="mms"
    )
    assert (
        formats.serialize(transcript, "mms-tokens")
        == "<|role|>assistant<|format|>js<|content|>x()<|end_turn|>"
    )


def test_message_start():
    assert get_codec("mms-tokens").message_start == "<|role|>"
    assert get_codec("mms").message_start is None
