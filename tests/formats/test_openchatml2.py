"""OpenChatML 2.0 / 2.2 and Harmony: header, message grammar, recovery, serialization."""

from __future__ import annotations

import time

import pytest

from editor import formats
from editor.formats.codecs import header as yaml_header
from editor.formats.codecs.openchatml2 import OCM22, _fast_message, _slow_message, format_message
from editor.formats.codecs.scanner import TokenStream, unescape
from editor.formats.diagnostics import Diagnostics

H = "---\nversion: 2.2\n---\n"


def parse(text, spec="openchatml-2.2"):
    return formats.parse(text, spec=spec)


def codes(diagnostics):
    return [d.code for d in diagnostics]


@pytest.mark.parametrize(
    ("written", "version"), [("2.2", "2.2"), ("2.0", "2.0"), ("2.10", "2.10"), ("'2.2'", "2.2")]
)
def test_version_keeps_its_text(written, version):
    transcript, diagnostics = parse(
        f"---\nversion: {written}\n---\n<|start|>user<|message|>x<|end|>"
    )
    assert transcript.header["version"] == version and diagnostics == []


def test_header_keys_are_kept_and_json_friendly():
    text = "---\nversion: 2.2\nx-custom: {a: 1}\ndate: 2025-08-08\n---\n<|start|>user<|message|>x<|end|>"
    transcript, _ = parse(text)
    assert transcript.header == {"version": "2.2", "x-custom": {"a": 1}, "date": "2025-08-08"}


def test_unfenced_header_ends_at_a_line_start_start_token():
    text = 'version: 2.2\ntokens: ["<|start|>"]\n<|start|>user<|message|>x<|end|>\n'
    transcript, diagnostics = parse(text)
    assert transcript.header == {"version": "2.2", "tokens": ["<|start|>"]}
    assert diagnostics == [] and formats.serialize(transcript) == text


def test_yaml_error_position_is_mapped_into_the_document():
    _, diagnostics = parse("---\nversion: 2.2\nmodel: {a\n---\n<|start|>user<|message|>x<|end|>")
    assert codes(diagnostics) == ["E-PARSE-HEADER"] and diagnostics[0].line >= 3


def test_billion_laughs_is_rejected_quickly():
    lines = ["---", "a: &a [" + ",".join(['"lol"'] * 10) + "]"]
    for prev, name in zip("abcdefghi", "bcdefghij", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 10) + "]")
    text = "\n".join(lines) + "\n---\n<|start|>user<|message|>x<|end|>"
    start = time.perf_counter()
    transcript, diagnostics = parse(text)
    assert time.perf_counter() - start < 1
    assert codes(diagnostics) == ["E-PARSE-HEADER"] and transcript.header == {}
    assert transcript.messages[0].content == "x"


def test_oversized_header_is_not_read():
    text = (
        "---\nversion: 2.2\nnote: "
        + "x" * (yaml_header.MAX_HEADER_CHARS + 1)
        + "\n---\n<|start|>user<|message|>x<|end|>"
    )
    transcript, diagnostics = parse(text)
    assert codes(diagnostics) == ["E-PARSE-HEADER"] and formats.serialize(transcript) == text


def test_edited_header_is_dumped_and_reads_back():
    transcript, _ = parse(H + "<|start|>user<|message|>x<|end|>\n")
    transcript.header["model"] = "gpt-oss-20b"
    text = formats.serialize(transcript)
    assert text.startswith("---\nversion: 2.2\nmodel: gpt-oss-20b\n---\n")
    assert parse(text)[0].header == transcript.header


def test_message_fields_and_attribute_positions():
    text = (
        H
        + "<|start|>tool name=functions.f call_id=c1 to=assistant x-trace=9<|channel|>commentary<|message|>{}<|end|>\n"
        "<|start|>assistant call_id=c2<|channel|>commentary to=functions.g <|constrain|>json<|message|>{}<|call|>\n"
    )
    transcript, diagnostics = parse(text)
    reply, call = transcript.messages
    assert diagnostics == []
    assert (reply.role, reply.name, reply.call_id, reply.recipient) == (
        "tool",
        "functions.f",
        "c1",
        "assistant",
    )
    assert reply.attrs["header_attrs"] == {"x-trace": "9"}
    assert reply.attrs["attr_order"] == ["name", "call_id", "to", "x-trace"]
    assert (
        call.attrs == {"channel_attrs": ["to"]} and call.constrain == "json" and call.end == "call"
    )
    reply.content, call.content = '{"ok":true}', '{"a":1}'
    assert formats.serialize(transcript) == text.replace("{}<|end|>", '{"ok":true}<|end|>').replace(
        "{}<|call|>", '{"a":1}<|call|>'
    )


def test_message_without_channel_has_channel_none():
    transcript, _ = parse("<|start|>user<|message|>x<|end|>")
    assert transcript.messages[0].channel is None


def test_body_is_kept_as_written_and_unescape_gives_logical_text():
    body = "a <<|end|> b <|literal|><|start|><|endliteral|> c"
    transcript, diagnostics = parse(f"<|start|>user<|message|>{body}<|end|>")
    assert diagnostics == [] and transcript.messages[0].content == body
    assert unescape(body, OCM22.vocabulary) == "a <|end|> b <|start|> c"


def test_escapes_are_2_2_only():
    transcript, diagnostics = parse(
        "<|start|>user<|message|>a <<|end|> b<|end|>", spec="openchatml-2.0"
    )
    assert transcript.messages[0].content == "a <"
    assert codes(diagnostics) == ["W-PARSE-STRAY-TEXT", "E-PARSE-UNEXPECTED-TOKEN"]


def test_recovery_keeps_going_with_precise_positions():
    text = "hello\n<|start|><|message|>a<|foo|><|start|>assistant to<|message|>b<|end|>\n<|end|>"
    transcript, diagnostics = parse(text)
    assert [(d.code, d.line, d.column) for d in diagnostics] == [
        ("W-PARSE-STRAY-TEXT", 1, 1),
        ("E-PARSE-ROLE-MISSING", 2, 10),
        ("W-PARSE-UNKNOWN-TOKEN", 2, 22),
        ("E-PARSE-UNCLOSED-MESSAGE", 2, 29),
        ("E-PARSE-ATTRIBUTE", 2, 48),
        ("E-PARSE-UNEXPECTED-TOKEN", 3, 1),
    ]
    assert [m.content for m in transcript.messages] == ["a<|foo|>", "b"]
    assert formats.serialize(transcript) == text


def test_unterminated_literal_does_not_swallow_the_rest():
    transcript, diagnostics = parse(
        "<|start|>user<|message|><|literal|>raw<|end|><|start|>assistant<|message|>ok<|end|>"
    )
    assert [m.content for m in transcript.messages] == ["<|literal|>raw", "ok"]
    assert codes(diagnostics) == ["E-PARSE-UNTERMINATED-LITERAL"]


def test_truncation_fix_inserts_the_missing_end():
    text = "<|start|>assistant<|channel|>final<|message|>Half an ans\n"
    _, diagnostics = parse(text)
    (d,) = diagnostics
    assert d.code == "E-STREAM-TRUNCATED"
    edit = d.fix.edits[0]
    assert text[: edit.start] + edit.replacement + text[edit.end :] == text.rstrip() + "<|end|>\n"


def test_harmony_header_only_prompt_is_info_and_canonical_forms():
    _, diagnostics = parse("<|start|>user<|message|>hi<|end|><|start|>assistant", spec="harmony")
    assert codes(diagnostics) == ["I-PARSE-COMPLETION-PROMPT"]
    call = formats.Message(
        role="assistant",
        channel="commentary",
        recipient="functions.f",
        constrain="json",
        content="{}",
        end="call",
    )
    reply = formats.Message(
        role="functions.f", channel="commentary", recipient="assistant", content="1"
    )
    assert format_message(call, transcript_dialect("harmony")) == (
        # openai/harmony's renderer: to= in the start header, a space before <|constrain|>
        "<|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json<|message|>{}<|call|>"
    )
    assert format_message(reply, transcript_dialect("harmony")) == (
        "<|start|>functions.f to=assistant<|channel|>commentary<|message|>1<|end|>"
    )
    assert format_message(call, OCM22) == (
        "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{}<|call|>"
    )


def transcript_dialect(spec):
    from editor.formats.codecs.openchatml2 import DIALECTS

    return DIALECTS[spec]


def test_new_messages_get_the_default_gap():
    t = formats.Transcript(
        spec="openchatml-2.2", messages=[formats.Message("user", "a"), formats.Message("user", "b")]
    )
    assert (
        formats.serialize(t)
        == "<|start|>user<|message|>a<|end|>\n<|start|>user<|message|>b<|end|>\n"
    )
    t.spec = "harmony"
    assert (
        formats.serialize(t) == "<|start|>user<|message|>a<|end|><|start|>user<|message|>b<|end|>"
    )


@pytest.mark.parametrize(
    "text",
    [
        "<|start|>assistant to=functions.f call_id=1 name=x intent=status content_type=json<|channel|>commentary<|constrain|>json<|message|>{}<|call|>",
        "<|start|>assistant<|channel|>commentary intent=preamble content_type=md<|message|>x<|end|>",
        "<|start|>assistant call_id=1 to=f<|message|>x<|return|>",
        "<|start|>user<|message|><|end|>",
    ],
)
def test_fast_path_agrees_with_the_full_parser(text):
    fast, fast_end = _fast_message(text, 0, OCM22)
    slow, slow_end = _slow_message(
        text,
        0,
        TokenStream(text, OCM22.vocabulary, escapes=True, literals=True),
        Diagnostics(text),
        OCM22,
        0,
    )
    assert (fast, fast.source, fast_end) == (slow, slow.source, slow_end)


def test_edited_body_ending_in_lt_keeps_its_terminator():
    """`a<` then `<|end|>` would read as the escape `<<|end|>` and swallow the terminator."""
    transcript, _ = formats.parse("<|start|>user<|message|>hi<|end|>", spec="openchatml-2.2")
    transcript.messages[0].content = "a <"
    text = formats.serialize(transcript)
    assert text == "<|start|>user<|message|>a <|literal|><<|endliteral|><|end|>"
    again, diagnostics = formats.parse(text, spec="openchatml-2.2")
    assert diagnostics == []
    assert again.messages[0].end == "end"
    assert unescape(again.messages[0].content, OCM22.vocabulary) == "a <"


def test_crlf_document_keeps_crlf_in_an_edited_header_and_new_gaps():
    src = "---\r\nversion: 2.2\r\n---\r\n<|start|>user<|message|>hi<|end|>\r\n"
    transcript, _ = formats.parse(src, spec="openchatml-2.2")
    transcript.header["model"] = "gpt-oss-20b"
    transcript.messages.append(formats.Message(role="assistant", channel="final", content="yo"))
    text = formats.serialize(transcript)
    assert "\n" not in text.replace("\r\n", "")
    assert text.endswith("<|end|>\r\n<|start|>assistant<|channel|>final<|message|>yo<|end|>\r\n")
    again, _ = formats.parse(text, spec="openchatml-2.2")
    assert again.header == {"version": "2.2", "model": "gpt-oss-20b"}


# --- completions and header recovery, as gpt-oss's parsers read them -------------------------

COMPLETION = (
    "<|channel|>analysis<|message|>User greets.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Hi!<|return|>"
)


@pytest.mark.parametrize("spec", ["harmony", "openchatml-2.2", "openchatml-2.0"])
def test_a_completion_starting_at_channel_is_an_assistant_message(spec):
    transcript, diagnostics = formats.parse(COMPLETION, spec)
    assert [(m.role, m.channel, m.content) for m in transcript.messages] == [
        ("assistant", "analysis", "User greets."),
        ("assistant", "final", "Hi!"),
    ]
    assert [(d.code, d.offset) for d in diagnostics] == [("I-PARSE-IMPLIED-START", 0)]
    assert formats.serialize(transcript) == COMPLETION
    transcript.messages[0].content = "User says hello."
    assert formats.serialize(transcript) == COMPLETION.replace("User greets.", "User says hello.")


def test_a_completion_is_detected_as_harmony():
    assert formats.detect("<|channel|>final<|message|>Hi!<|return|>") == "harmony"
    assert formats.detect(COMPLETION) == "harmony"


@pytest.mark.parametrize("spec", ["harmony", "openchatml-2.2"])
def test_a_header_without_message_token_keeps_its_loose_words_as_the_body(spec):
    text = "<|start|>assistant<|channel|>commentary Hello there<|end|>"
    transcript, (diagnostic,) = formats.parse(text, spec)
    (message,) = transcript.messages
    assert (message.channel, message.content_type, message.content) == (
        "commentary",
        None,
        "Hello there",
    )
    assert diagnostic.code == "E-PARSE-UNEXPECTED-TOKEN"
    assert formats.serialize(transcript) == text
    (edit,) = diagnostic.fix.edits
    fixed = text[: edit.start] + edit.replacement + text[edit.end :]
    again, problems = formats.parse(fixed, spec)
    assert again.messages[0].content == "Hello there" and problems == []
