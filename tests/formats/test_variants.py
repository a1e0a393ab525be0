"""Realistic variants (not the spec texts' own samples) that exposed a problem: detection of
pasted gpt-oss transcripts, and conversions that lost data silently or wrote an invalid
target. Larger samples are fixtures (harmony/valid/gpt-oss-builtins-to-in-start-header,
harmony/valid/bare-json-after-channel, openai-messages/valid/legacy-function-role,
openchatml-json/valid/tool-call-beside-empty-content)."""

from __future__ import annotations

import json

import pytest

from editor import formats
from editor.formats.convert import convert
from editor.formats.validate import validate

GPT_OSS_SYSTEM = (
    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
    "Knowledge cutoff: 2024-06\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, "
    "final. Channel must be included for every message.<|end|>\n"
)
BUILTINS = (
    "<|start|>user<|message|>Search, then compute.<|end|>\n"
    "<|start|>assistant<|channel|>analysis to=browser.search code<|message|>"
    '{"query":"x"}<|call|>\n'
    "<|start|>browser.search to=assistant<|channel|>analysis<|message|>result<|end|>\n"
    "<|start|>assistant to=python<|channel|>analysis<|message|>print(1)<|call|>\n"
    "<|start|>python to=assistant<|channel|>analysis<|message|>1<|end|>\n"
    "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
)


def errors(text: str, spec: str) -> list[str]:
    transcript, diagnostics = formats.parse(text, spec)
    found = diagnostics + validate(transcript, text=text)
    return [str(d) for d in found if d.severity == "error"]


@pytest.mark.parametrize(
    "text",
    [
        # gpt-oss puts a call's to= in the start header too; its system prompt says Harmony
        GPT_OSS_SYSTEM + BUILTINS,
        # `<|constrain|>` is no 2.0 token
        "<|start|>user<|message|>x<|end|><|start|>assistant to=functions.f<|channel|>commentary"
        "<|constrain|>json<|message|>{}<|call|>",
        # the older gpt-oss form: a bare content type after the channel
        "<|start|>user<|message|>x<|end|><|start|>assistant to=functions.f<|channel|>commentary"
        " json<|message|>{}<|call|>",
    ],
)
def test_harmony_with_to_in_the_start_header_is_detected_as_harmony(text):
    assert formats.detect(text) == "harmony"
    assert errors(text, "harmony") == []


def test_the_20_worked_example_shape_stays_openchatml_20():
    text = (
        "<|start|>user<|message|>news?<|end|>\n<|start|>assistant to=functions.browser.search"
        '<|channel|>commentary<|message|>{"query":"x"}<|call|>'
    )
    assert formats.detect(text) == "openchatml-2.0"


def test_builtin_replies_keep_their_names_in_conversion():
    transcript, _ = formats.parse(BUILTINS, "harmony")
    text, _ = convert(transcript, "openchatml-2.2")
    assert "name=browser.search" in text and "name=python" in text
    assert "functions.browser" not in text and "functions.python" not in text
    assert errors(text, "openchatml-2.2") == []
    text, _ = convert(transcript, "openchatml-2.0")
    assert "<|start|>browser.search to=assistant" in text


@pytest.mark.parametrize("to", ["openai-messages", "sharegpt", "mms", "openchatml-0.1"])
def test_builtin_calls_on_analysis_are_calls_in_targets_without_analysis_calls(to):
    transcript, _ = formats.parse(BUILTINS, "harmony")
    text, losses = convert(transcript, to)
    out, diagnostics = formats.parse(text, to)
    assert not formats.has_errors(diagnostics)
    if to == "openchatml-0.1":  # calls are parts of assistant bodies
        assert '"name": "browser.search"}' in text and '"name": "python"}' in text
    else:
        calls = [m for m in out.messages if m.end == "call"]
        names = [m.recipient.removeprefix("functions.") for m in calls]
        assert names == ["browser.search", "python"]
    assert {(loss.message_index, loss.field) for loss in losses} >= {
        (1, "channel"),
        (2, "channel"),
        (3, "channel"),
        (4, "channel"),
    }


def test_openai_builtin_reply_is_not_reasoning():
    transcript, _ = formats.parse(BUILTINS, "harmony")
    text, _ = convert(transcript, "openai-messages")
    messages = json.loads(text)["messages"]
    tools = [m for m in messages if m["role"] == "tool"]
    assert [m["content"] for m in tools] == ["result", "1"]
    assert all("reasoning_content" not in m for m in tools)


CHATML_FEW_SHOT = (
    "<|start|>system<|message|>Translate to French.<|end_message|>\n"
    "<|start|>system:example_user<|message|>Hi<|end_message|>\n"
    "<|start|>system:example_assistant<|message|>Salut<|end_message|>\n"
    "<|start|>user<|message|>Bye<|end_message|>\n"
)


def test_chatml_few_shot_roles_are_openai_named_system_messages_and_back():
    transcript, _ = formats.parse(CHATML_FEW_SHOT, "chatml")
    text, losses = convert(transcript, "openai-messages")
    messages = json.loads(text)["messages"]
    assert messages[1] == {"role": "system", "content": "Hi", "name": "example_user"}
    assert messages[2] == {"role": "system", "content": "Salut", "name": "example_assistant"}
    assert losses == []
    back, _ = formats.parse(text, "openai-messages")
    again, losses = convert(back, "chatml")
    assert again == CHATML_FEW_SHOT
    assert losses == []


@pytest.mark.parametrize("to", ["openchatml-2.2", "openchatml-2.0", "harmony"])
@pytest.mark.parametrize(
    ("text", "spec"),
    [
        (
            "<|start|>user<|message|>Write a haiku<|end_message|><|start|>assistant<|message|>",
            "chatml",
        ),
        (
            '[{"token":"<|start|>"},"user",{"token":"<|message|>"},"Say hi",'
            '{"token":"<|end_message|>"},{"token":"<|start|>"},"assistant",{"token":"<|message|>"}]',
            "chatml-json",
        ),
    ],
)
def test_a_chatml_completion_request_becomes_a_bare_header(text, spec, to):
    transcript, _ = formats.parse(text, spec)
    out, _ = convert(transcript, to)
    assert out.rstrip("\n").endswith("<|start|>assistant")
    assert errors(out, to) == []


def test_fim_segments_report_their_role_when_converted():
    text = "<|fim_prefix|>def f():\n    <|fim_suffix|>\n<|fim_middle|>return 1"
    transcript, _ = formats.parse(text, "openchatml-0.1")
    _, losses = convert(transcript, "openai-messages")
    assert [(loss.message_index, loss.field) for loss in losses] == [
        (0, "role"),
        (1, "role"),
        (2, "role"),
    ]


def test_mms_tokens_end_turn_after_a_user_message_is_no_return():
    text = (
        "<|role|>platform<|content|>Be nice.<|end_turn|>\n<|role|>user<|content|>Hi<|end_turn|>\n"
        "<|role|>assistant<|format|>markdown<|content|>Hello!<|end_turn|>\n"
    )
    transcript, _ = formats.parse(text, "mms-tokens")
    out, losses = convert(transcript, "openchatml-2.2")
    assert errors(out, "openchatml-2.2") == []
    assert out.count("<|return|>") == 1
    _, losses = convert(transcript, "openai-messages")
    assert [(loss.message_index, loss.field) for loss in losses] == [(2, "end")]


def test_openai_legacy_function_reply_answers_the_function_call():
    text = (
        '[{"role":"user","content":"2+2?"},{"role":"assistant","content":null,'
        '"function_call":{"name":"calc","arguments":"{}"}},'
        '{"role":"function","name":"calc","content":"4"},{"role":"assistant","content":"4"}]'
    )
    transcript, diagnostics = formats.parse(text, "openai-messages")
    assert validate(transcript, text=text) == [] and diagnostics == []
    reply = transcript.messages[2]
    assert (reply.role, reply.name) == ("tool", "functions.calc")
    reply.content = "four"
    edited = json.loads(formats.serialize(transcript))
    assert edited[2] == {"role": "function", "content": "four", "name": "calc"}
