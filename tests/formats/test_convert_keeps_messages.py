"""openai-messages ↔ Harmony never drops nor doubles a message (issue 34's gaps).

Three shapes the inference engines' own Harmony tests keep and conversion used to lose or
double: a user or tool message whose ``content`` is null (kept, empty:
``<|message|><|end|>``), an assistant message with reasoning and no text (one analysis
message, not an analysis and an empty final) and gpt-oss's system message written in another
layout than its renderer's (other capitalisation or order, a built-in tool section: still *the*
system message, no second one generated). Fixture pairs for each are in
tests/fixtures/convert/ (``openai-null-content-to-harmony``, ``openai-reasoning-only-to-harmony``,
``openai-builtin-tools-system-to-harmony``, ``harmony-reordered-system-to-openai``,
``openai-identity-after-cutoff-system-to-harmony``).
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor import formats
from editor.formats.cli import main
from editor.formats.convert import convert, harmony_prompt
from tests.budget import examples

HARMONY, OPENAI = "harmony", "openai-messages"
IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
CHANNELS = (
    "# Valid channels: analysis, commentary, final. Channel must be included for every message."
)
BROWSER = (
    "# Tools\n\n## browser\n\n// Tool for browsing.\nnamespace browser {\n\n"
    "type search = (_: {\nquery: string,\n}) => any;\n\n} // namespace browser"
)
# gpt-oss system messages its renderer would not write so, but gpt-oss reads as its own
SYSTEM_VARIANTS = {
    "lower-case effort line": f"{IDENTITY}\nKnowledge cutoff: 2024-06\n\nreasoning: high\n\n{CHANNELS}",
    "upper-case effort": f"{IDENTITY}\nKnowledge cutoff: 2024-06\n\nReasoning: HIGH\n\n{CHANNELS}",
    "reasoning before the cutoff": f"{IDENTITY}\nReasoning: low\nKnowledge cutoff: 2024-06\n\n{CHANNELS}",
    "lower-case channels": f"Knowledge cutoff: 2024-06\n\nReasoning: low\n\n{CHANNELS.lower()}",
    "built-in tools after the channels": f"{IDENTITY}\nKnowledge cutoff: 2024-06\n\n"
    f"Reasoning: medium\n\n{CHANNELS}\n\n{BROWSER}",
    "built-in tools before the effort": f"{IDENTITY}\nKnowledge cutoff: 2024-06\n\n{BROWSER}\n\n"
    f"Reasoning: medium\n\n{CHANNELS}",
    "built-in tools alone": f"{IDENTITY}\n\n{BROWSER}",
    "CRLF line breaks": f"{IDENTITY}\r\nKnowledge cutoff: 2024-06\r\n\r\nReasoning: high",
    "the identity after the cutoff": f"Knowledge cutoff: 2024-06\n{IDENTITY}\n\n"
    f"reasoning: high\n\n{BROWSER}\n\n{CHANNELS}",
    "the identity last": f"Reasoning: low\n\n{CHANNELS}\n\n{IDENTITY}",
}


def _harmony(openai_document: dict) -> tuple[str, list]:
    transcript, diagnostics = formats.parse(json.dumps(openai_document), OPENAI)
    assert not formats.has_errors(diagnostics)
    return convert(transcript, HARMONY)


def _messages(harmony: str) -> list[tuple[str, str | None, str]]:
    transcript, diagnostics = formats.parse(harmony, HARMONY)
    assert not formats.has_errors(diagnostics), [str(d) for d in diagnostics]
    return [(m.role, m.channel, m.content) for m in transcript.messages]


# --- 1. content null ------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["user", "tool", "assistant", "system"])
@pytest.mark.parametrize("content", [None, ""])
def test_a_message_without_content_stays_a_message(role, content):
    message = {"role": role, "content": content}
    if role == "tool":
        message["tool_call_id"] = "call_1"
    document = {
        "messages": [
            {"role": "user", "content": "Go."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            },
            message,
            {"role": "user", "content": "Done?"},
        ],
        "add_generation_prompt": False,
    }
    if role != "tool":  # the call is answered before it
        document["messages"].insert(2, {"role": "tool", "tool_call_id": "call_1", "content": "ok"})
    text, losses = _harmony(document)
    assert losses == []
    written = _messages(text)
    empty = {
        "user": ("user", None, ""),
        "tool": ("functions.f", "commentary", ""),
        "assistant": ("assistant", "final", ""),
        "system": ("system", None, ""),
    }[role]
    assert written[-2] == empty
    assert "<|message|><|end|><|start|>user<|message|>Done?" in text  # "empty content" in Harmony


def test_a_null_user_message_is_kept_by_the_cli(tmp_path):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps([{"role": "user", "content": None}]), "utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["convert", str(source), "--to", HARMONY], out, err) == 0
    assert out.getvalue().endswith("<|start|>user<|message|><|end|><|start|>assistant")
    assert "loss" not in err.getvalue()


# --- 2. reasoning and no text ---------------------------------------------------------------


@pytest.mark.parametrize("content", ["", None, "absent"])
@pytest.mark.parametrize("key", ["reasoning", "reasoning_content", "thinking"])
def test_reasoning_without_text_is_one_analysis_message(key, content):
    message = {"role": "assistant", key: "17 is prime."}
    if content != "absent":
        message["content"] = content
    text, losses = _harmony({"messages": [{"role": "user", "content": "17?"}, message]})
    assert losses == []
    assert _messages(text)[1:] == [
        ("user", None, "17?"),
        ("assistant", "analysis", "17 is prime."),
    ]


def test_empty_reasoning_and_empty_text_is_one_empty_final():
    text, _ = _harmony({"messages": [{"role": "assistant", "reasoning": "", "content": ""}]})
    assert _messages(text)[1:] == [("assistant", "final", "")]


def test_reasoning_alone_before_an_assistant_answer_keeps_its_boundary():
    """Harmony joins an analysis with the assistant message after it (one turn); the empty
    final is then what keeps the two JSON messages apart on the way back."""
    document = {
        "messages": [
            {"role": "user", "content": "17?"},
            {"role": "assistant", "reasoning": "17 is prime.", "content": ""},
            {"role": "assistant", "content": "Prime."},
        ]
    }
    text, _ = _harmony(document)
    assert [m[:2] for m in _messages(text)[2:]] == [
        ("assistant", "analysis"),
        ("assistant", "final"),
        ("assistant", "final"),
    ]
    back, _ = convert(formats.parse(text, HARMONY)[0], OPENAI)
    assert len(json.loads(back)["messages"]) == 3


# --- an answer before a call of a later JSON message is no preamble -------------------------

CALL_TURN = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ],
}
FINAL_THEN_CALL = (
    "<|start|>user<|message|>Go<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Let me check.<|end|>"
    "<|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json<|message|>{}<|call|>"
    "<|start|>functions.f to=assistant<|channel|>commentary<|message|>ok<|end|>"
)


def test_an_assistant_message_before_a_call_message_stays_apart():
    """Text beside ``tool_calls`` is the call's preamble (commentary); an assistant message of
    its own before a call message is an answer (final), and comes back as its own message."""
    document = {
        "messages": [
            {"role": "user", "content": "Go"},
            {"role": "assistant", "content": "Let me check."},
            CALL_TURN,
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ],
        "add_generation_prompt": False,
    }
    text, losses = _harmony(document)
    assert text.endswith(FINAL_THEN_CALL) and losses == []
    back, losses = convert(formats.parse(text, HARMONY)[0], OPENAI)
    assert json.loads(back)["messages"] == document["messages"] and losses == []


def test_a_harmony_final_before_a_call_is_not_made_a_preamble():
    openai, losses = convert(formats.parse(FINAL_THEN_CALL, HARMONY)[0], OPENAI)
    assert [m.get("tool_calls") is None for m in json.loads(openai)["messages"]] == [
        True,
        True,
        False,
        True,
    ]
    back, losses = convert(formats.parse(openai, OPENAI)[0], HARMONY)
    assert back.endswith(FINAL_THEN_CALL) and losses == []


# --- 3. gpt-oss's system message in another layout -----------------------------------------


@pytest.mark.parametrize("variant", SYSTEM_VARIANTS.values(), ids=SYSTEM_VARIANTS.keys())
def test_a_gpt_oss_system_message_in_another_layout_is_the_system_message(variant):
    assert harmony_prompt.is_system_message(variant)
    harmony = (
        f"<|start|>system<|message|>{variant}<|end|>"
        "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>"
        "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Hello<|return|>"
    )
    openai, losses = convert(formats.parse(harmony, HARMONY)[0], OPENAI)
    assert losses == []
    assert json.loads(openai)["messages"][0] == {"role": "system", "content": variant}
    back, losses = convert(formats.parse(openai, OPENAI)[0], HARMONY)
    assert back == harmony and losses == []  # one system message, the prompt its developer's


@pytest.mark.parametrize("variant", SYSTEM_VARIANTS.values(), ids=SYSTEM_VARIANTS.keys())
def test_an_openai_system_message_in_gpt_oss_layout_is_not_doubled(variant):
    document = {
        "messages": [{"role": "system", "content": variant}],
        "add_generation_prompt": False,
    }
    text, _ = _harmony(document)
    assert _messages(text) == [("system", None, variant)]


# --- no input message dropped or doubled: openai-messages → harmony → openai-messages ------

TEXT = st.sampled_from(["", "a", "b c"])
CONTENT = st.one_of(st.none(), TEXT)


@st.composite
def assistant_message(draw):
    message: dict = {"role": "assistant"}
    if draw(st.booleans()):
        message[draw(st.sampled_from(["reasoning", "reasoning_content", "thinking"]))] = draw(TEXT)
    content = draw(st.one_of(CONTENT, st.just("absent")))
    if content != "absent":
        message["content"] = content
    return message


@st.composite
def conversations(draw):
    """Message lists of the three shapes (null content anywhere, reasoning without text,
    gpt-oss's system message in another layout) among ordinary ones; a call is answered by
    the next message."""
    messages: list[dict] = []
    system = draw(st.sampled_from([None, "Be brief.", *SYSTEM_VARIANTS.values()]))
    if system is not None:
        messages.append({"role": "system", "content": system})
    calls = 0
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["user", "assistant", "call"]))
        if kind == "user":
            messages.append({"role": "user", "content": draw(CONTENT)})
        elif kind == "assistant":
            messages.append(draw(assistant_message()))
        else:
            calls += 1  # numbered as conversion numbers them: Harmony has no call ids
            call = {"id": f"call_{calls}", "type": "function"}
            call["function"] = {"name": "f", "arguments": "{}"}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": draw(CONTENT)})
    return messages


def _shape(message: dict) -> tuple:
    """What a message says, written either way: null and "" are both no text."""
    reasoning = next(
        (message[k] for k in ("reasoning_content", "reasoning", "thinking") if k in message), ""
    )
    return (
        message["role"],
        message.get("content") or "",
        reasoning,
        len(message.get("tool_calls", [])),
    )


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=conversations())
def test_no_input_message_is_dropped_or_doubled(messages):
    text, losses = _harmony({"messages": messages})
    assert losses == []
    assert sum(role == "system" for role, _, _ in _messages(text)) == 1
    back, losses = convert(formats.parse(text, HARMONY)[0], OPENAI)
    assert losses == []
    assert [_shape(m) for m in json.loads(back)["messages"]] == [_shape(m) for m in messages]
