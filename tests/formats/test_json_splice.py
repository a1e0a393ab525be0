"""JSON documents after an edit: only the edited items of the message array change
(docs/formats.md, "JSON formats")."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor import formats
from tests.budget import examples

from .conftest import fixture_inputs, read_input
from .test_properties_json_and_v01 import mms_messages, openai_messages, plain

SPLICED_SPECS = ("openai-messages", "sharegpt", "mms", "openchatml-json")
CASES = [
    (spec, path)
    for spec, path in fixture_inputs("valid")
    if spec in SPLICED_SPECS and path.suffix in (".json", ".jsonl")
]


def parsed(text: str, spec: str) -> formats.Transcript:
    transcript, diagnostics = formats.parse(text, spec=spec)
    assert not formats.has_errors(diagnostics)
    return transcript


def item_span(message: formats.Message) -> tuple[int, int]:
    source = message.source
    return source.start, source.start + source.end - source.begin


def written_anew(transcript: formats.Transcript) -> str:
    """What the serializer writes for ``transcript`` without its layout: the whole document."""
    return formats.serialize(formats.Transcript.from_dict(transcript.to_dict()))


def written_through_an_edit(text: str, spec: str) -> str:
    """``text`` parsed and written as an edited document is, with nothing edited."""
    transcript = parsed(text, spec)
    transcript.layout["sources"] = ()  # not given back whole: spliced
    return formats.serialize(transcript)


def edited_items():
    for spec, path in CASES:
        text = read_input(path)
        transcript = parsed(text, spec)
        if "array" not in transcript.layout:  # a lone MMS message: written anew
            continue
        # A fixture the writer gives back whole: each of its items is written as the writer
        # would write it (others are written anew on the first edit; see the tests below).
        stable = written_through_an_edit(text, spec) == text
        for index, message in enumerate(transcript.messages):
            if message.content:
                yield pytest.param(spec, text, index, stable, id=f"{spec}/{path.name}#{index}")


@pytest.mark.parametrize(("spec", "text", "index", "stable"), list(edited_items()))
def test_an_edited_message_changes_only_its_item(spec, text, index, stable):
    transcript = parsed(text, spec)
    start, end = item_span(transcript.messages[index])
    message = transcript.messages[index]
    transcript.messages[index] = dataclasses.replace(message, content=message.content + " (ed)")

    written = formats.serialize(transcript)

    if stable:
        assert written.startswith(text[:start]) and written.endswith(text[end:])
    assert parsed(written, spec).messages == parsed(written_anew(transcript), spec).messages


def test_every_json_spec_is_spliced_somewhere():
    stable = {case.values[0] for case in edited_items() if case.values[3]}
    assert stable == set(SPLICED_SPECS)


def test_an_item_the_writer_writes_otherwise_is_written_anew_on_the_first_edit():
    text = (
        '[{"role": "user", "content": "hi"},\n'
        ' {"role": "assistant", "channel": "analysis", "content": "think", "end": "end"},\n'
        ' {"role": "assistant", "channel": "final", "content": "hello"}]'
    )
    transcript = parsed(text, "openchatml-json")
    transcript.messages[0].content = "hey"
    assert formats.serialize(transcript) == (
        '[{"role": "user", "content": "hey"},\n'
        ' {"role": "assistant", "channel": "analysis", "content": "think"},\n'
        ' {"role": "assistant", "channel": "final", "content": "hello"}]'
    )


TOOLS_AFTER = """{
  "messages": [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "reasoning_content": "Look it up.", "content": null,
     "tool_calls": [
       {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}},
       {"id": "c2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
     ]},
    {"role": "tool", "tool_call_id": "c1", "content": "18C"},
    {"role": "tool", "tool_call_id": "c2", "content": "noon"},
    {"role": "assistant",   "content": "It is 18C at noon."}
  ],
  "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
  "model": "gpt-x"
}
"""


def test_the_document_around_the_array_stays_as_written():
    transcript = parsed(TOOLS_AFTER, "openai-messages")
    transcript.messages[0].content = "Weather in Lyon?"
    written = formats.serialize(transcript)
    assert written == TOOLS_AFTER.replace("Paris?", "Lyon?")


def test_a_call_taken_out_of_its_message_rewrites_that_item_alone():
    transcript = parsed(TOOLS_AFTER, "openai-messages")
    assert [m.recipient for m in transcript.messages[1:4]] == [
        None,
        "functions.get_weather",
        "functions.get_time",
    ]
    del transcript.messages[5]  # the second call's reply
    del transcript.messages[3]  # the second call
    written = formats.serialize(transcript)
    items = json.loads(written)["messages"]
    assert [call["id"] for call in items[1]["tool_calls"]] == ["c1"]
    assert '"tools": [{"type": "function"' in written  # still after the messages
    for kept in (
        '    {"role": "user", "content": "Weather in Paris?"},\n',
        '    {"role": "tool", "tool_call_id": "c1", "content": "18C"},\n    {"role": "assistant",'
        '   "content": "It is 18C at noon."}\n',
    ):
        assert kept in written
    assert parsed(written, "openai-messages").messages == transcript.messages


def test_new_and_moved_items_take_the_first_items_style():
    text = '[\n\t{"role":"user","content":"a"},\n\t{"role":"assistant","content":"b"}\n]'
    transcript = parsed(text, "openai-messages")
    transcript.messages.insert(1, formats.Message(role="system", content="be brief"))
    transcript.messages.reverse()
    written = formats.serialize(transcript)
    assert written == (
        '[\n\t{"role":"assistant","content":"b"},\n\t{"role":"system","content":"be brief"},'
        '\n\t{"role":"user","content":"a"}\n]'
    )


def test_an_item_written_over_several_lines_is_written_so_one_level_in():
    text = '{\n    "conversations": [\n        {\n            "from": "human",\n            "value": "hi"\n        }\n    ]\n}'
    transcript = parsed(text, "sharegpt")
    transcript.messages.append(formats.Message(role="assistant", content="hello"))
    written = formats.serialize(transcript)
    assert written == (
        '{\n    "conversations": [\n        {\n            "from": "human",\n            '
        '"value": "hi"\n        },\n        {\n            "from": "gpt",\n            '
        '"value": "hello"\n        }\n    ]\n}'
    )


def test_a_duplicated_message_repeats_its_item():
    text = '[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]'
    transcript = parsed(text, "openai-messages")
    transcript.messages.insert(1, dataclasses.replace(transcript.messages[0]))
    assert formats.serialize(transcript) == (
        '[{"role": "user", "content": "a"}, {"role": "user", "content": "a"}, '
        '{"role": "assistant", "content": "b"}]'
    )


def test_edited_document_keys_write_the_document_afresh():
    transcript = parsed(TOOLS_AFTER, "openai-messages")
    transcript.attrs["model"] = "gpt-y"
    written = formats.serialize(transcript)
    assert json.loads(written)["model"] == "gpt-y"
    assert parsed(written, "openai-messages").messages == transcript.messages


def test_a_repaired_document_is_written_afresh_as_json():
    text = '[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b",},]'
    transcript, diagnostics = formats.parse(text, spec="openai-messages")
    assert [d.code for d in diagnostics] == ["E-PARSE-JSON"]
    transcript.messages[0].content = "c"
    written = formats.serialize(transcript)
    assert json.loads(written) == [
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "b"},
    ]


def test_every_message_removed_writes_an_empty_array_inside_the_document():
    transcript = parsed(TOOLS_AFTER, "openai-messages")
    transcript.messages.clear()
    written = formats.serialize(transcript)
    assert written.startswith('{\n  "messages": [],\n  "tools": [')
    assert json.loads(written)["messages"] == []


def test_messages_read_from_two_items_stay_in_two():
    text = (
        '[{"role": "user", "content": "Weather?"},\n'
        ' {"role": "assistant", "content": "Let me look."},\n'
        ' {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",'
        ' "function": {"name": "get_weather", "arguments": "{}"}}]}]'
    )
    transcript = parsed(text, "openai-messages")
    transcript.messages[0].content = "Weather in Oslo?"
    assert formats.serialize(transcript) == text.replace("Weather?", "Weather in Oslo?")
    transcript.messages[1].content = "Looking."
    assert formats.serialize(transcript) == (
        text.replace("Weather?", "Weather in Oslo?").replace("Let me look.", "Looking.")
    )


# --- any edits, by meaning -------------------------------------------------------------------

SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
edits = st.lists(
    st.tuples(
        st.sampled_from(["edit", "delete", "insert", "move", "duplicate"]),
        st.integers(0, 20),
        st.integers(0, 20),
        plain,
    ),
    max_size=4,
)


def documents(messages_strategy, spec: str, key: str | None):
    @st.composite
    def build(draw):
        written = formats.serialize(formats.Transcript(spec=spec, messages=draw(messages_strategy)))
        value = json.loads(written)
        for item in value if isinstance(value, list) else ():
            # Tool calls with no "content" key at all, as OpenAI's fine-tuning examples write them.
            if isinstance(item, dict) and item.get("tool_calls") and draw(st.booleans()):
                item.pop("content", None)
            # A 2.2 call beside an empty content, as the spec's §10 example writes it.
            if isinstance(item, dict) and "tool_call" in item and draw(st.booleans()):
                item["content"] = ""
        if key is not None and isinstance(value, list) and draw(st.booleans()):
            value = {key: value, "model": "m"} if draw(st.booleans()) else {"x": 1, key: value}
        ascii_only = draw(st.booleans())
        if spec == "openchatml-json" and isinstance(value, list) and draw(st.booleans()):
            # JSON Lines: one object a line.
            return "".join(json.dumps(item, ensure_ascii=ascii_only) + "\n" for item in value)
        indent = draw(st.sampled_from([None, 2, "\t"]))
        return json.dumps(value, indent=indent, ensure_ascii=ascii_only)

    return build()


def edited(transcript: formats.Transcript, operations) -> None:
    """``operations`` applied as the editor applies them: an edited message keeps the source
    of the one it replaces, an inserted one its neighbour's."""
    messages = transcript.messages
    for name, at, to, text in operations:
        if not messages:
            return
        index, target = at % len(messages), to % len(messages)
        if name == "edit":
            messages[index] = dataclasses.replace(messages[index], content=text)
        elif name == "delete":
            del messages[index]
        elif name == "insert":
            new = formats.Message(role="user", content=text)
            new.source = messages[index].source
            messages.insert(index + 1, new)
        elif name == "move":
            messages.insert(target, messages.pop(index))
        else:
            messages.insert(index + 1, formats.Message.from_dict(messages[index].to_dict()))


@pytest.mark.parametrize(
    ("spec", "strategy", "key"),
    [
        ("openai-messages", openai_messages(), "messages"),
        ("mms", mms_messages(tokens=False), "messages"),
        (
            "sharegpt",
            st.lists(
                st.builds(
                    formats.Message, role=st.sampled_from(["user", "assistant"]), content=plain
                ),
                min_size=1,
                max_size=4,
            ),
            "conversations",
        ),
        (
            "openchatml-json",
            st.lists(
                st.builds(
                    formats.Message,
                    role=st.sampled_from(["user", "assistant", "tool"]),
                    channel=st.sampled_from([None, "analysis", "commentary", "final"]),
                    content=plain,
                    recipient=st.sampled_from([None, "functions.lookup"]),
                    end=st.sampled_from([formats.END, formats.RETURN, formats.CALL]),
                ),
                min_size=1,
                max_size=4,
            ),
            "messages",
        ),
    ],
)
def test_any_edits_write_what_the_document_written_anew_says(spec, strategy, key):
    @SETTINGS
    @given(documents(strategy, spec, key), edits)
    def check(text, operations):
        transcript = parsed(text, spec)
        edited(transcript, operations)
        written = formats.serialize(transcript)
        again, diagnostics = formats.parse(written, spec=spec)
        assert not formats.has_errors(diagnostics), written
        assert again.messages == parsed(written_anew(transcript), spec).messages
        assert again.attrs == transcript.attrs

    check()


def test_tool_calls_written_without_content_stay_so_when_edited():
    text = (
        '[{"role": "user", "content": "Weather?"},\n'
        ' {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",'
        ' "function": {"name": "get_weather", "arguments": "{}"}}]}]'
    )
    transcript = parsed(text, "openai-messages")
    transcript.messages[1].content = '{"city": "Oslo"}'
    written = formats.serialize(transcript)
    assert written == text.replace('"arguments": "{}"', '"arguments": "{\\"city\\": \\"Oslo\\"}"')
    # New calls, and calls read beside a content key, are written with "content": null.
    assert '"content": null' in written_anew(transcript)


def test_json_lines_keep_their_other_lines():
    text = '{"role":"user","content":"hi"}\n{"role":"assistant","channel":"final","content":"yo"}\n'
    transcript = parsed(text, "openchatml-json")
    transcript.messages[1].content = "hello"
    transcript.messages.append(formats.Message(role="user", content="bye"))
    assert formats.serialize(transcript) == (
        '{"role":"user","content":"hi"}\n{"role":"assistant","channel":"final","content":"hello"}'
        '\n{"role":"user","content":"bye"}\n'
    )


def test_messages_read_from_another_text_are_written_anew():
    first = parsed('[{"from": "human", "value": "a"}, {"from": "human", "value": "b"}]', "sharegpt")
    other = parsed('[{"from": "gpt",  "value": "elsewhere"}]', "sharegpt")
    first.messages[1] = other.messages[0]  # its source is another document's
    written = formats.serialize(first)
    assert parsed(written, "sharegpt").messages == first.messages


def test_a_call_read_beside_empty_content_keeps_it_when_edited():
    text = (
        '[{"role": "user", "content": "Weather?"},\n'
        ' {"role": "assistant", "channel": "commentary", "content": "", "tool_call":'
        ' {"id": "c1", "recipient": "functions.get_weather", "arguments": "{}"}}]'
    )
    transcript = parsed(text, "openchatml-json")
    transcript.messages[1].content = "{}\n"
    written = formats.serialize(transcript)
    assert json.loads(written)[1]["content"] == ""
    assert '"content": ""' not in written_anew(transcript)  # new calls are written without
