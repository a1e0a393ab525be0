"""Rendering policy: hidden content is ABSENT from end-user output, annotators see everything
marked, debug highlights control tokens; the next-turn CoT rule."""

from __future__ import annotations

import json

import pytest

from editor import formats
from editor.formats.model import Message, Transcript
from editor.formats.render import next_turn_prompt, render, render_text

SECRET = "SECRET-7f3a"

OCM22 = f"""version: 2.2
<|start|>system<|message|>{SECRET} system<|end|>
<|start|>developer<|message|>{SECRET} developer<|end|>
<|start|>user<|message|>What is <<|end|> for?<|end|>
<|start|>assistant<|channel|>analysis<|message|>{SECRET} thinking<|end|>
<|start|>assistant to=functions.f call_id=c1<|channel|>commentary<|constrain|>json<|message|>{{"q": "{SECRET}"}}<|call|>
<|start|>tool name=functions.f call_id=c1<|channel|>commentary<|message|>{SECRET} result<|end|>
<|start|>assistant<|channel|>commentary<|message|>{SECRET} status<|end|>
<|start|>assistant intent=preamble<|channel|>commentary<|message|>Plan: look it up.<|end|>
<|start|>assistant<|channel|>final<|message|>It closes a message.<|start_reason|>{SECRET} cot<|return|>"""

V01 = f"""[BOS]<|im_start|>system
{SECRET} sys<|reflect|><|im_end|>
<|im_start|>user
Box?<|im_end|>
<|im_start|>assistant
<|start_reflect|>{SECRET} reflect<|end_reflect|>
Band-Aids.<|im_end|>
<|im_start|>assistant
<|function_call|>
{{"arguments": {{"q": "{SECRET}"}}, "name": "f"}}
<|im_end|>
<|im_start|>tool
<|function_output|>
{{"name": "f", "content": "{SECRET}"}}
<|im_end|>[EOS]"""

MMS = json.dumps(
    [
        {"role": "platform", "content": f"{SECRET} platform"},
        {"role": "developer", "content": f"{SECRET} dev"},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "format": "weather:json",
            "content": f'{{"q": "{SECRET}"}}',
            "end_turn": True,
        },
        {"role": "context", "content": f"{SECRET} 20C"},
        {"role": "assistant", "format": "markdown", "content": "It is 20C.", "end_turn": True},
        {"role": "assistant", "format": "html", "content": "<b>20C</b>", "end_turn": True},
    ]
)

OPENAI = json.dumps(
    {
        "messages": [
            {"role": "system", "content": f"{SECRET} sys"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello", "reasoning_content": f"{SECRET} reasoning"},
        ]
    }
)

CASES = {
    "openchatml-2.2": (
        OCM22,
        ["What is <|end|> for?", "Plan: look it up.", "It closes a message."],
    ),
    "openchatml-0.1": (V01, ["Box?", "Band-Aids."]),
    "mms": (MMS, ["Weather?", "It is 20C.", "<b>20C</b>"]),
    "openai-messages": (OPENAI, ["hi", "hello"]),
}


@pytest.mark.parametrize("spec", CASES)
def test_end_user_output_contains_no_hidden_text(spec):
    text, visible = CASES[spec]
    transcript, _ = formats.parse(text, spec)
    rendered = render(transcript)
    assert [item.content for item in rendered.items] == visible
    assert SECRET not in json.dumps(rendered.to_dict())
    assert SECRET not in render_text(transcript)


@pytest.mark.parametrize("spec", CASES)
def test_annotator_sees_everything_marked(spec):
    text, visible = CASES[spec]
    transcript, _ = formats.parse(text, spec)
    rendered = render(transcript, "annotator")
    assert [item.index for item in rendered.items] == list(range(len(transcript.messages)))
    assert [i.end_user_content for i in rendered.items if i.visible_to_end_user] == visible
    assert all(i.reason for i in rendered.items)
    assert SECRET in json.dumps(rendered.to_dict())


def test_annotator_reasons_for_22():
    transcript, _ = formats.parse(OCM22, "openchatml-2.2")
    reasons = [(i.visible_to_end_user, i.reason) for i in render(transcript, "annotator").items]
    assert reasons == [
        (False, "system"), (False, "developer"), (True, "user message"), (False, "analysis"),
        (False, "tool call"), (False, "tool reply"), (False, "commentary"), (True, "commentary preamble"),
        (True, "final answer"),
    ]  # fmt: skip


def test_debug_marks_tokens_escapes_and_literals():
    text = (
        "version: 2.2\n<|start|>user<|message|>a <<|end|> <|literal|><|start|><|endliteral|><|end|>"
    )
    transcript, _ = formats.parse(text, "openchatml-2.2")
    rendered = render(transcript, "debug", source_text=text)
    kinds = [(s.kind, s.text) for s in rendered.spans]
    assert kinds == [
        ("token", "<|start|>"), ("token", "<|message|>"), ("escape", "<<|end|>"),
        ("literal", "<|literal|><|start|><|endliteral|>"), ("token", "<|end|>"),
    ]  # fmt: skip
    assert all(text[s.start : s.end] == s.text for s in rendered.spans)
    assert rendered.to_dict()["source"] == text


def test_unknown_audience_is_refused():
    with pytest.raises(ValueError):
        render(Transcript("chatml"), "everyone")


def test_next_turn_prompt_drops_finished_analysis_and_keeps_analysis_before_open_call():
    messages = [
        Message("user", "q1"),
        Message("assistant", "old thoughts", channel="analysis"),
        Message("assistant", "a1", channel="final", end="return"),
        Message("user", "q2"),
        Message("assistant", "new thoughts", channel="analysis"),
        Message(
            "assistant",
            "{}",
            channel="commentary",
            recipient="functions.f",
            constrain="json",
            end="call",
        ),
    ]
    kept = next_turn_prompt(Transcript("harmony", messages=messages)).messages
    assert [m.content for m in kept] == ["q1", "a1", "q2", "new thoughts", "{}"]


def test_render_text_format():
    transcript, _ = formats.parse(OCM22, "openchatml-2.2")
    assert render_text(transcript).splitlines()[:3] == [
        "user: What is <|end|> for?",
        "",
        "assistant/commentary: Plan: look it up.",
    ]
