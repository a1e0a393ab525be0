"""ChatML text form: grammar, completion prompts, round trips and edits."""

from __future__ import annotations

from editor import formats
from editor.formats.diagnostics import ERROR, INFO

TEXT = "<|start|>system<|message|>Be brief.<|end_message|>\n<|start|>user<|message|>Hi<|end_message|>\n"


def codes(diagnostics):
    return [d.code for d in diagnostics]


def test_messages_and_unknown_roles_are_kept():
    text = (
        TEXT
        + "<|start|>system:example_user<|message|>x<|end_message|><|start|>narrator<|message|>y<|end_message|>"
    )
    transcript, diagnostics = formats.parse(text, spec="chatml")
    assert [m.role for m in transcript.messages] == [
        "system",
        "user",
        "system:example_user",
        "narrator",
    ]
    assert transcript.messages[1].content == "Hi" and transcript.messages[1].end == "end"
    assert diagnostics == []
    assert formats.serialize(transcript) == text


def test_open_last_message_is_a_completion_prompt_not_an_error():
    for tail in ("<|start|>assistant<|message|>partial", "<|start|>assistant"):
        transcript, diagnostics = formats.parse(TEXT + tail, spec="chatml")
        last = transcript.messages[-1]
        assert last.role == "assistant" and last.end is None
        assert codes(diagnostics) == ["I-PARSE-COMPLETION-PROMPT"]
        assert diagnostics[0].severity == INFO
        assert formats.serialize(transcript) == TEXT + tail


def test_open_message_followed_by_another_is_an_error():
    _, diagnostics = formats.parse(
        "<|start|>user<|message|>a<|start|>assistant<|message|>b<|end_message|>", spec="chatml"
    )
    assert codes(diagnostics) == ["E-PARSE-UNCLOSED-MESSAGE"]
    fix = diagnostics[0].fix
    assert fix.edits[0].replacement == "<|end_message|>" and fix.edits[0].start == 25


def test_2x_tokens_are_unknown_in_chatml():
    transcript, diagnostics = formats.parse(
        "<|start|>user<|message|>a<|end|><|end_message|>", spec="chatml"
    )
    assert transcript.messages[0].content == "a<|end|>"
    assert codes(diagnostics) == ["W-PARSE-UNKNOWN-TOKEN"]


def test_edit_changes_only_that_message_and_new_messages_are_canonical():
    transcript, _ = formats.parse(TEXT, spec="chatml")
    transcript.messages[0].content = "Be very brief."
    transcript.messages.append(formats.Message(role="assistant", content="Hello"))
    assert formats.serialize(transcript) == (
        "<|start|>system<|message|>Be very brief.<|end_message|>\n"
        "<|start|>user<|message|>Hi<|end_message|>\n"
        "<|start|>assistant<|message|>Hello<|end_message|>\n"
    )


def test_strict_mode_ignores_the_completion_prompt_info():
    formats.parse("<|start|>user<|message|>hi", spec="chatml", strict=True)
    _, diagnostics = formats.parse("", spec="chatml")
    assert [d.severity for d in diagnostics] == [ERROR]
