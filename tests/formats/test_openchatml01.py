"""OpenChatML 0.1: layout kept byte for byte, derived parts, FIM and multi-file segments."""

from __future__ import annotations

from editor import formats
from editor.formats.codecs.openchatml01 import message_parts
from editor.formats.model import Message

SPEC = "openchatml-0.1"


def parse(text):
    return formats.parse(text, spec=SPEC)


def test_bos_eos_and_names_are_kept():
    text = "[BOS]<|im_start|>user name=Eric\nHi\n<|im_end|>\n<|im_start|>assistant\nHello\n<|im_end|>[EOS]\n"
    transcript, diagnostics = parse(text)
    assert diagnostics == []
    assert transcript.attrs == {"bos": True, "eos": True}
    assert [(m.role, m.name, m.content) for m in transcript.messages] == [
        ("user", "Eric", "Hi\n"),
        ("assistant", None, "Hello\n"),
    ]
    assert formats.serialize(transcript) == text


def test_an_edit_changes_only_that_message():
    text = "[BOS]<|im_start|>user\nA\n<|im_end|>\n\n<|im_start|>assistant  \nB\n<|im_end|>[EOS]"
    transcript, _ = parse(text)
    transcript.messages[0].content = "changed\n"
    assert formats.serialize(transcript) == text.replace("\nA\n", "\nchanged\n")


def test_an_edited_or_new_message_in_a_crlf_document_uses_crlf():
    text = "[BOS]<|im_start|>user name=E\r\nhi\r\n<|im_end|>\r\n<|im_start|>assistant\r\nyo\r\n<|im_end|>[EOS]"
    transcript, _ = parse(text)
    transcript.messages[0].content = "hey\r\n"
    transcript.messages.insert(1, Message("user", "more\r\n", end="end"))
    assert formats.serialize(transcript) == (
        "[BOS]<|im_start|>user name=E\r\nhey\r\n<|im_end|>\r\n"
        "<|im_start|>user\r\nmore\r\n<|im_end|>\r\n"
        "<|im_start|>assistant\r\nyo\r\n<|im_end|>[EOS]"
    )


def test_the_first_line_break_decides_the_convention():
    transcript, _ = parse("<|im_start|>user\nx\r\n<|im_end|>")
    transcript.messages[0].content = "y"
    assert formats.serialize(transcript) == "<|im_start|>user\ny<|im_end|>"


def test_unknown_header_attributes_are_kept_and_a_bare_word_is_an_error():
    transcript, diagnostics = parse("<|im_start|>user mood=happy oops\nx<|im_end|>")
    assert transcript.messages[0].attrs == {"mood": "happy"}
    assert [d.code for d in diagnostics] == ["E-PARSE-ATTRIBUTE"]


def test_derived_parts_of_a_thought_message():
    transcript, _ = parse(
        "<|im_start|>system\nBe kind.<|reflect|><|reason|><|im_end|>\n"
        "<|im_start|>assistant\n<|start_reason|>2+2=4<|end_reason|>\nFour.<|im_end|>"
    )
    system, assistant = transcript.messages
    assert [p["kind"] for p in message_parts(system)] == ["text", "flags"]
    assert message_parts(system)[1]["flags"] == ["reflect", "reason"]
    parts = message_parts(assistant)
    assert parts[0] == {
        "kind": "thought",
        "start": 0,
        "end": 35,
        "thought": "reason",
        "text": "2+2=4",
    }
    assert parts[1]["text"] == "\nFour."
    assert assistant.attrs == {}  # derived, never stored


def test_function_call_and_output_parts():
    transcript, diagnostics = parse(
        '<|im_start|>assistant\n<|function_call|>\n{"arguments": {"symbol": "TSLA"}, "name": "f"}\n<|im_end|>\n'
        '<|im_start|>tool\n<|function_output|>\n{"name": "f", "content": {"price": 1}}\n<|im_end|>'
    )
    assert diagnostics == []
    call = message_parts(transcript.messages[0])[0]
    assert (call["kind"], call["name"], call["arguments"]) == (
        "function_call",
        "f",
        {"symbol": "TSLA"},
    )
    output = message_parts(transcript.messages[1])[0]
    assert (output["kind"], output["name"], output["content"]) == (
        "function_output",
        "f",
        {"price": 1},
    )


def test_function_list_is_delimited_by_the_same_token_twice():
    transcript, _ = parse(
        '<|im_start|>system\nTools:\n<|function_list|>\n{"type": "function"}\n<|function_list|>\nGo.<|im_end|>'
    )
    parts = message_parts(transcript.messages[0])
    assert [p["kind"] for p in parts] == ["text", "function_list", "text"]
    assert parts[1]["json"] == {"type": "function"}


def test_placeholder_call_json_in_a_system_prompt_is_prose():
    _, diagnostics = parse(
        '<|im_start|>system\n<|function_call|>\n{"arguments": , "name": }\n<|im_end|>'
    )
    assert diagnostics == []


def test_unbalanced_thought_does_not_crash():
    transcript, _ = parse("<|im_start|>assistant\n<|start_reflect|>hmm<|end_reason|><|im_end|>")
    kinds = [p["kind"] for p in message_parts(transcript.messages[0])]
    assert kinds == ["unbalanced", "text", "unbalanced"]


def test_fim_segments_with_empty_middle():
    text = "<|fim_prefix|>The capital of France is <|fim_middle|><|fim_suffix|>, known for its tower.\n"
    transcript, diagnostics = parse(text)
    assert diagnostics == []
    assert [(m.role, m.content) for m in transcript.messages] == [
        ("fim_prefix", "The capital of France is "),
        ("fim_middle", ""),
        ("fim_suffix", ", known for its tower.\n"),
    ]
    transcript.messages[1].content = "Paris"
    assert formats.serialize(transcript) == text.replace("<|fim_middle|>", "<|fim_middle|>Paris")


def test_multi_file_sequence_ending_in_fim():
    text = "one\n<|file_separator|>\ntwo\n<|file_separator|>\n<|fim_prefix|>a<|fim_middle|><|fim_suffix|>b"
    transcript, diagnostics = parse(text)
    assert diagnostics == []
    assert [(m.role, m.attrs.get("file")) for m in transcript.messages] == [
        ("file", 0),
        ("file", 1),
        ("file", 2),
        ("fim_prefix", 2),
        ("fim_middle", 2),
        ("fim_suffix", 2),
    ]
    assert formats.serialize(transcript) == text
    for message in transcript.messages:
        message.source = None
    assert formats.serialize(transcript) == text


def test_start_before_end_has_a_fix_that_closes_the_message():
    text = "<|im_start|>user\nhi\n<|im_start|>assistant\nyo<|im_end|>"
    transcript, diagnostics = parse(text)
    (diagnostic,) = diagnostics
    assert diagnostic.code == "E-PARSE-UNEXPECTED-TOKEN"
    assert transcript.messages[0].end is None
    (edit,) = diagnostic.fix.edits
    fixed = text[: edit.start] + edit.replacement + text[edit.end :]
    assert parse(fixed).diagnostics == []


def test_truncated_message_at_eof():
    transcript, diagnostics = parse("<|im_start|>assistant\nHalf an ans")
    assert [d.code for d in diagnostics] == ["E-STREAM-TRUNCATED"]
    assert transcript.messages[0].end is None
    assert formats.serialize(transcript) == "<|im_start|>assistant\nHalf an ans"


def test_new_messages_are_written_in_canonical_form():
    transcript = formats.Transcript(
        spec=SPEC,
        attrs={"bos": True, "eos": True},
        messages=[
            formats.Message(role="user", name="Eric", content="Hi"),
            formats.Message(role="assistant", content="Yo"),
        ],
    )
    text = formats.serialize(transcript)
    assert (
        text
        == "[BOS]<|im_start|>user name=Eric\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>[EOS]"
    )
    assert parse(text).transcript == transcript


def test_codec_declares_message_start():
    from editor.formats.specs import get_codec

    assert get_codec(SPEC).message_start == "<|im_start|>"


def test_an_unknown_token_in_a_body_is_a_warning_and_stays_text():
    # `<|start_thought|>` is no v0.1 marker (the kinds are reflect/introspect/reason); body
    # markup the spec defines is not reported, nor is code in FIM/file segments.
    text = (
        "<|im_start|>system\nBe brief.<|reflect|>\n<|im_end|>\n"
        "<|im_start|>assistant\n<|start_thought|>hm <|x|>\n<|start_reason|>r<|end_reason|>ok\n"
        "<|im_end|>\n<|fim_prefix|>a = '<|y|>'<|fim_suffix|><|fim_middle|>"
    )
    transcript, diagnostics = parse(text)
    assert [(d.code, d.offset, d.line, d.column, d.message_index) for d in diagnostics] == [
        ("W-PARSE-UNKNOWN-TOKEN", text.index("<|start_thought|>"), 5, 1, 1),
        ("W-PARSE-UNKNOWN-TOKEN", text.index("<|x|>"), 5, 21, 1),
    ]
    assert transcript.messages[1].content.startswith("<|start_thought|>hm <|x|>\n")
    assert formats.serialize(transcript) == text
