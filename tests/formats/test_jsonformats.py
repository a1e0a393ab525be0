"""The JSON formats: OpenAI messages, ShareGPT, ChatML token lists, OpenChatML JSON projections."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editor import formats
from editor.formats.codecs import json_support as js
from editor.formats.codecs import jsonformats
from editor.formats.codecs.json_support import repair
from editor.formats.diagnostics import Diagnostics
from tests.budget import examples


def parse(text, spec):
    return formats.parse(text, spec=spec)


# --- shared JSON handling --------------------------------------------------------------------


def test_repair_keeps_offsets_and_fixes_curly_quotes_and_trailing_commas():
    text = '[{"token": "<|message|>”}, "a",\n]'
    candidate, edits, kinds = repair(text)
    assert len(candidate) == len(text)
    assert json.loads(candidate) == [{"token": "<|message|>"}, "a"]
    assert kinds == ["straight quotes for curly ones", "remove trailing commas"]
    fixed = text
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        fixed = fixed[: edit.start] + edit.replacement + fixed[edit.end :]
    assert json.loads(fixed) == [{"token": "<|message|>"}, "a"]


def test_curly_quotes_inside_text_are_content():
    _, edits, _ = repair('["he said “hi” then", ]')
    assert [(e.replacement) for e in edits] == [""]


@pytest.mark.parametrize(
    "spec", ["openai-messages", "sharegpt", "chatml-json", "openchatml-json", "mms"]
)
def test_hopeless_json_gives_one_error_and_no_messages(spec):
    transcript, diagnostics = parse('{"messages": [{"role": ', spec)
    assert [d.code for d in diagnostics] == ["E-PARSE-JSON"]
    assert diagnostics[0].fix is None
    assert transcript.messages == []


def test_json_error_position_is_the_decoders():
    _, (diagnostic,) = parse(
        '{"messages": [\n  {"role": "user" "content": "x"}]}', "openai-messages"
    )
    assert (diagnostic.line, diagnostic.column, diagnostic.offset) == (2, 19, 33)


def test_edited_document_keeps_indentation_and_non_ascii():
    text = '[\n    {"role": "user", "content": "héllo"}\n]'
    transcript, _ = parse(text, "openai-messages")
    transcript.messages.append(formats.Message(role="assistant", content="ça va"))
    transcript.attrs["model"] = "m"  # a document key edited: the document is written afresh
    assert formats.serialize(transcript) == (
        '{\n    "model": "m",\n    "messages": [\n        {\n            "role": "user",\n'
        '            "content": "héllo"\n        },\n        {\n            "role": "assistant",'
        '\n            "content": "ça va"\n        }\n    ]\n}'
    )

    transcript, _ = parse(text, "openai-messages")
    transcript.messages[0].content = "wörld"
    assert formats.serialize(transcript) == '[\n    {"role": "user", "content": "wörld"}\n]'


# --- OpenAI ----------------------------------------------------------------------------------

TOOLS = {
    "messages": [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "Need the tool.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "wx", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        {"role": "assistant", "content": "18 °C."},
    ],
    "tools": [{"type": "function", "function": {"name": "wx", "parameters": {"type": "object"}}}],
    "temperature": 0,
}


def test_openai_tool_calls_map_to_commentary_call_messages():
    transcript, diagnostics = parse(json.dumps(TOOLS), "openai-messages")
    assert diagnostics == []
    analysis, call, reply = transcript.messages[1:4]
    assert (analysis.channel, analysis.content) == ("analysis", "Need the tool.")
    assert (call.channel, call.recipient, call.call_id, call.constrain, call.end) == (
        "commentary",
        "functions.wx",
        "c1",
        "json",
        "call",
    )
    assert (reply.role, reply.call_id, reply.name) == ("tool", "c1", "functions.wx")
    assert transcript.attrs == {"tools": TOOLS["tools"], "temperature": 0}


def test_openai_round_trip_by_value_after_an_edit():
    transcript, _ = parse(json.dumps(TOOLS), "openai-messages")
    transcript.messages[-1].content = "Eighteen."
    value = json.loads(formats.serialize(transcript))
    expected = json.loads(json.dumps(TOOLS))
    expected["messages"][-1]["content"] = "Eighteen."
    assert value == expected


def test_openai_content_parts_are_kept():
    parts = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "u"}},
    ]
    transcript, _ = parse(json.dumps([{"role": "user", "content": parts}]), "openai-messages")
    assert transcript.messages[0].content == "What is this?"
    transcript.messages[0].content = "And this?"
    written = json.loads(formats.serialize(transcript))
    assert written[0]["content"] == [{"type": "text", "text": "And this?"}, parts[1]]


def test_openai_shape_error_points_at_the_message():
    _, diagnostics = parse('[{"role": "user", "content": "a"}, 3]', "openai-messages")
    assert [(d.code, d.message_index, d.offset) for d in diagnostics] == [("E-PARSE-SHAPE", 1, 35)]


# --- ShareGPT --------------------------------------------------------------------------------


def test_sharegpt_mapping_and_kept_keys():
    doc = {
        "id": "x1",
        "conversations": [
            {"from": "human", "value": "hi"},
            {"from": "gpt", "value": "hello"},
            {"from": "tool", "value": "42"},
            {"from": "function_call", "value": '{"name": "f", "arguments": {}}'},
        ],
    }
    transcript, diagnostics = parse(json.dumps(doc), "sharegpt")
    assert diagnostics == []
    assert [m.role for m in transcript.messages] == ["user", "assistant", "tool", "assistant"]
    assert transcript.messages[2].attrs == {"from": "tool"}
    assert transcript.messages[3].recipient == "functions.f"
    transcript.messages[0].content = "hey"
    doc["conversations"][0]["value"] = "hey"
    assert json.loads(formats.serialize(transcript)) == doc


# --- ChatML JSON -----------------------------------------------------------------------------


def test_chatml_json_completion_request_leaves_the_last_message_open():
    text = '[{"token": "<|start|>"}, "user", {"token": "<|message|>"}, "hi", {"token": "<|end_message|>"}, {"token": "<|start|>"}, "assistant"]'
    transcript, diagnostics = parse(text, "chatml-json")
    assert diagnostics == []
    assert [(m.role, m.end) for m in transcript.messages] == [("user", "end"), ("assistant", None)]
    transcript.messages[0].content = "hey"
    again, _ = parse(formats.serialize(transcript), "chatml-json")
    assert again == transcript


def test_chatml_json_spec_typo_is_read_as_message_with_a_fix():
    text = '[{"token": "<|start|>"}, "user", {"token": "<|end_message|>"}, "How are you now?", {"token": "<|end_message|>"}]'
    transcript, (diagnostic,) = parse(text, "chatml-json")
    assert diagnostic.code == "E-PARSE-UNEXPECTED-TOKEN"
    assert transcript.messages[0].content == "How are you now?"
    (edit,) = diagnostic.fix.edits
    fixed = text[: edit.start] + edit.replacement + text[edit.end :]
    assert parse(fixed, "chatml-json").diagnostics == []


# --- OpenChatML JSON -------------------------------------------------------------------------


def test_openchatml_json_20_expands_and_groups_back():
    doc = [
        {"role": "user", "content": "news?"},
        {
            "role": "assistant",
            "thinking": "search",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "browser.search", "arguments": "{}"},
                }
            ],
        },
        {"role": "assistant", "thinking": "done", "content": "Water on Mars."},
    ]
    transcript, diagnostics = parse(json.dumps(doc), "openchatml-json")
    assert diagnostics == []
    assert [(m.channel, m.end) for m in transcript.messages] == [
        (None, "end"),
        ("analysis", "end"),
        ("commentary", "call"),
        ("analysis", "end"),
        ("final", "end"),
    ]
    assert transcript.messages[2].recipient == "functions.browser.search"
    transcript.messages[0].content = "news, please?"
    doc[0]["content"] = "news, please?"
    assert json.loads(formats.serialize(transcript)) == doc


def test_openchatml_json_22_lines_round_trip():
    text = (
        '{"role": "assistant", "channel": "commentary", "tool_call": {"id": "a", "recipient": "functions.f", '
        '"content_type": "json", "arguments": "{}"}}\n'
        '{"role": "assistant", "channel": "final", "content": "ok", "thinking": "t", "end": "return"}\n'
    )
    transcript, diagnostics = parse(text, "openchatml-json")
    assert diagnostics == []
    assert [(m.channel, m.end) for m in transcript.messages] == [
        ("commentary", "call"),
        ("analysis", "end"),
        ("final", "return"),
    ]
    transcript.messages[-1].content = "fine"
    written = formats.serialize(transcript)
    expected = text.replace('"ok"', '"fine"')
    assert [json.loads(line) for line in written.splitlines()] == [
        json.loads(line) for line in expected.splitlines()
    ]


PROSE_ROLES = ["user", "system", "developer", "assistant", "tool", "function", "functions.f", "x"]


@given(
    role=st.one_of(st.sampled_from(PROSE_ROLES), st.text(max_size=5)),
    content=st.one_of(st.text(max_size=20), st.none(), st.integers()),
    pending_call=st.booleans(),
)
@settings(max_examples=examples(300), deadline=None)
def test_a_prose_message_is_read_as_every_field_reads_it(role, content, pending_call):
    """The shortcut for {"role", "content"} messages gives what the reading of every field
    gives, a reply (named after the call it answers) and odd values included."""

    def read(reader):
        calls, sink = js.Calls(), Diagnostics("")
        if pending_call:
            calls.called(formats.Message(role="assistant", recipient="functions.f", call_id="c"))
        node = js.read_unlocated(json.dumps({"role": role, "content": content}))
        return reader(node, 0, calls, sink, frozenset({"f"})), sink.items, calls

    assert read(jsonformats.openai_messages) == read(jsonformats._message_fields)
