"""Conversion: fixture pairs (tests/fixtures/convert/*.json) and the A→B→A property.

Fixture layout: one JSON file per case, ``{"from", "to", "input", "output", "losses"}`` where
``losses`` lists ``[message_index, field]`` pairs in report order; the input is parsed as
``from``, converted to ``to``, and must give exactly ``output`` and those losses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor import formats
from editor.formats.codecs.bodytext import written_text
from editor.formats.codecs.openchatml01 import message_parts
from editor.formats.convert import convert, harmony_prompt, map_transcript
from editor.formats.model import Message, Transcript
from editor.formats.validate import validate
from editor.formats.validate.context import is_reply
from tests.budget import examples

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "convert"
CASES = sorted(CORPUS.glob("*.json"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_fixture_pair(path):
    case = json.loads(path.read_text("utf-8"))
    transcript, diagnostics = formats.parse(case["input"], case["from"])
    assert not formats.has_errors(diagnostics)
    text, losses = convert(transcript, case["to"])
    assert text == case["output"]
    assert [[loss.message_index, loss.field] for loss in losses] == case["losses"]
    _, diagnostics = formats.parse(text, case["to"])
    assert not formats.has_errors(diagnostics), [str(d) for d in diagnostics]


def test_same_spec_is_a_no_op():
    case = json.loads((CORPUS / "ocm22-to-ocm22.json").read_text("utf-8"))
    assert case["output"] == case["input"] and case["losses"] == []


def test_every_loss_serializes():
    transcript, _ = formats.parse(
        json.loads((CORPUS / "ocm22-to-chatml.json").read_text("utf-8"))["input"], "openchatml-2.2"
    )
    _, losses = convert(transcript, "chatml")
    assert all(set(loss.to_dict()) == {"message_index", "field", "detail"} for loss in losses)


# --- A→B→A keeps everything B can represent -------------------------------------------------
# Transcripts are generated in 2.2 semantics and first mapped into A, so each one is a
# legitimate A transcript; the round trip through B must give back A's messages except where
# the A→B losses name the message (or a whole message was dropped, which a loss also names).
PAIRS = [
    ("openchatml-2.2", "harmony"), ("openchatml-2.2", "openchatml-2.0"), ("openchatml-2.2", "openai-messages"),
    ("openchatml-2.2", "openchatml-0.1"), ("openchatml-2.2", "chatml"), ("openchatml-2.2", "mms"),
    ("openchatml-2.2", "sharegpt"), ("openai-messages", "harmony"), ("openai-messages", "openchatml-2.2"),
    ("harmony", "openchatml-2.2"), ("openchatml-0.1", "openchatml-2.2"), ("mms", "openchatml-2.2"),
    ("chatml", "openchatml-2.2"),
]  # fmt: skip

# Logical text written as a 2.2 body (escaped), since the generated transcripts are 2.2.
TEXT = st.lists(st.sampled_from([*"ab <|>\n", "<|end|>", "<|start|>", "é"]), max_size=8).map(
    # a 2.2 body cannot end in "<" (it would join the terminator as an escape)
    lambda parts: written_text("openchatml-2.2", "".join(parts).rstrip("<"))
)


@st.composite
def turns(draw):
    messages = []
    for n in range(draw(st.integers(1, 4))):
        messages.append(Message("user", draw(TEXT) or "q"))
        if draw(st.booleans()):
            messages.append(
                Message("assistant", "<|start_reason|>" + (draw(TEXT) or "t"), channel="analysis")
            )
        if draw(st.booleans()):
            messages.append(
                Message(
                    "assistant",
                    json.dumps({"x": n}),
                    channel="commentary",
                    recipient="functions.f",
                    call_id=f"call_{n + 1}",
                    constrain="json",
                    end="call",
                )
            )
            messages.append(
                Message(
                    "tool",
                    json.dumps({"ok": n}),
                    channel="commentary",
                    name="functions.f",
                    call_id=f"call_{n + 1}",
                )
            )
        messages.append(
            Message("assistant", draw(TEXT).strip().rstrip("<") or "a", channel="final", end="end")
        )
    return Transcript("openchatml-2.2", {"version": "2.2"}, messages)


def _normal(message: Message, spec: str) -> dict:
    data = message.to_dict()
    if data.get("channel") == "final":
        del data["channel"]  # 2.x §5 rule 2: no channel means final (same meaning)
    if is_reply(message) and data.get("recipient") == "assistant":
        del data["recipient"]  # a reply goes back to the assistant: Harmony writes it, 2.2 may
    if spec == "openchatml-0.1":
        data["content"] = message.content.strip()
    return data


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=turns())
def test_round_trip_keeps_what_b_can_represent(a, b, source):
    original, _ = map_transcript(source, a)
    through_b, losses = map_transcript(original, b)
    back, _ = map_transcript(through_b, a)
    explained = {loss.message_index for loss in losses}
    before = [_normal(m, a) for m in original.messages]
    after = [_normal(m, a) for m in back.messages]
    if len(before) != len(after):
        assert any(loss.field == "message" for loss in losses), (before, after, losses)
        return
    for index, (x, y) in enumerate(zip(before, after, strict=True)):
        assert x == y or index in explained or a in ("openchatml-0.1", "mms"), (index, x, y, losses)
    # …and through text: B's serializer and parser agree with the mapping.
    text = formats.serialize(through_b, b)
    _, diagnostics = formats.parse(text, b)
    assert not formats.has_errors(diagnostics), [str(d) for d in diagnostics]


# --- gpt-oss conventions (harmony_prompt) and the way back ----------------------------------
FIXTURES = CORPUS.parent


def _case(name):
    case = json.loads((CORPUS / f"{name}.json").read_text("utf-8"))
    return formats.parse(case["input"], case["from"])[0]


def _validates(text, spec):
    transcript, diagnostics = formats.parse(text, spec)
    return [str(d) for d in diagnostics + validate(transcript, text=text) if d.severity == "error"]


@pytest.mark.parametrize(
    "name",
    ["harmony-gpt-oss-to-openai", "harmony-builtins-to-openai", "openai-settings-to-harmony"],
)
def test_openai_harmony_round_trip_is_exact(name):
    source = _case(name)
    through, _ = convert(source, "harmony" if source.spec != "harmony" else "openai-messages")
    assert _validates(through, "harmony" if source.spec != "harmony" else "openai-messages") == []
    back, _ = convert(formats.parse(through)[0], source.spec)
    original, _ = map_transcript(source, "openchatml-2.2")
    again, _ = map_transcript(formats.parse(back, source.spec)[0], "openchatml-2.2")
    assert again.header == original.header
    assert [m.to_dict() for m in again.messages] == [m.to_dict() for m in original.messages]


def test_reasoning_effort_lives_in_the_2_2_header():
    transcript, _ = formats.parse(
        "version: 2.2\ngeneration_settings:\n  reasoning_effort: high\n  temperature: 0.7\n"
        "<|start|>user<|message|>Hi<|end|>\n",
        "openchatml-2.2",
    )
    text, losses = convert(transcript, "harmony")
    assert "\n\nReasoning: high\n\n" in text
    assert [str(loss) for loss in losses] == [
        "document: header: document header dropped (harmony has none): "
        "['generation_settings', 'version']"
    ]  # temperature has no place in Harmony
    text, _ = convert(transcript, "openai-messages")
    assert json.loads(text)["reasoning_effort"] == "high"
    openai, _ = formats.parse(
        json.dumps({"reasoning_effort": "low", "messages": []}), "openai-messages"
    )
    assert map_transcript(openai, "openchatml-2.2")[0].header == {
        "version": "2.2",
        "generation_settings": {"reasoning_effort": "low"},
    }


def test_an_unknown_effort_is_reported_not_written():
    openai, _ = formats.parse(
        json.dumps({"reasoning_effort": "minimal", "messages": [{"role": "user", "content": "x"}]}),
        "openai-messages",
    )
    text, losses = convert(openai, "harmony")
    assert "Reasoning: medium" in text
    assert [(loss.message_index, loss.field) for loss in losses] == [
        (None, "attrs.reasoning_effort")
    ]


def test_a_system_message_that_is_not_the_generated_one_is_content():
    text = (
        "<|start|>system<|message|>You are a helpful AI assistant.\nKnowledge cutoff: 2024-06\n\n"
        "Reasoning: high<|end|><|start|>user<|message|>Hi<|end|>"
    )
    transcript, _ = formats.parse(text, "harmony")
    out, _ = convert(transcript, "openai-messages")
    assert json.loads(out)["messages"][0] == {
        "role": "system",
        "content": "You are a helpful AI assistant.\nKnowledge cutoff: 2024-06\n\nReasoning: high",
    }


def test_a_gpt_oss_system_message_disagreeing_with_the_header_is_kept():
    transcript, _ = formats.parse(
        "version: 2.2\ngeneration_settings: {reasoning_effort: high}\n<|start|>system<|message|>"
        + harmony_prompt.system_message(reasoning_effort="low")
        + "<|end|>\n<|start|>user<|message|>Hi<|end|>\n",
        "openchatml-2.2",
    )
    text, _ = convert(transcript, "harmony")
    assert text.count("<|start|>system") == 1 and "Reasoning: low" in text


@pytest.mark.parametrize(
    ("path", "spec"),
    [
        ("mms/valid/named-context.json", "mms"),
        ("mms/valid/inline-tool-use.json", "mms"),
        ("mms-tokens/valid/named-context.txt", "mms-tokens"),
    ],
)
@pytest.mark.parametrize(
    "to", ["openchatml-2.2", "openchatml-2.0", "harmony", "openchatml-json", "openai-messages",
           "openchatml-0.1", "sharegpt", "chatml"],
)  # fmt: skip
def test_a_context_with_no_call_before_it_converts_to_valid_text(path, spec, to):
    transcript, _ = formats.parse((FIXTURES / path).read_text("utf-8"), spec)
    text, losses = convert(transcript, to)
    assert _validates(text, to) == []
    assert any(loss.field == "role" and "context" in loss.detail for loss in losses)


def test_a_named_context_comes_back_from_2_2():
    transcript, _ = formats.parse(
        (FIXTURES / "mms/valid/named-context.json").read_text("utf-8"), "mms"
    )
    text, _ = convert(transcript, "openchatml-2.2")
    back, _ = convert(formats.parse(text, "openchatml-2.2")[0], "mms")
    messages = json.loads(back)["messages"]
    assert messages[2] == {
        "role": "context",
        "name": "news_article",
        "content": "[... news article text ...]",
    }
    assert convert(transcript, "mms-tokens")[1] == []  # MMS to MMS: nothing approximated


# --- built-in tools through openai-messages -------------------------------------------------


def test_builtin_calls_survive_openai_messages_and_validate():
    source = (FIXTURES / "harmony/valid/gpt-oss-builtins-to-in-start-header.txt").read_text("utf-8")
    text, _ = convert(formats.parse(source, "harmony")[0], "openai-messages")
    transcript, diagnostics = formats.parse(text, "openai-messages")
    calls = [(m.recipient, m.constrain) for m in transcript.messages if m.end == "call"]
    assert calls == [("browser.search", None), ("python", None)]
    assert [m.name for m in transcript.messages if m.role == "tool"] == ["browser.search", "python"]
    found = diagnostics + validate(transcript, text=text)
    assert [d.code for d in found if d.severity != "info"] == []  # no E-BODY-…, no W-CALL-UNKNOWN…
    back, _ = convert(transcript, "harmony")
    # no <|constrain|>json; to= in the start header, as openai/harmony's renderer writes it
    assert (
        "<|start|>assistant to=python<|channel|>commentary<|message|>print(2**20)<|call|>" in back
    )
    assert _validates(back, "harmony") == []


def test_a_gpt_oss_system_message_with_builtins_stays_the_harmony_system_message():
    source = (FIXTURES / "harmony/valid/gpt-oss-builtins-to-in-start-header.txt").read_text("utf-8")
    harmony = formats.parse(source, "harmony")[0]
    text, _ = convert(harmony, "openai-messages")
    back, _ = convert(formats.parse(text, "openai-messages")[0], "harmony")
    roles = [m.role for m in formats.parse(back, "harmony")[0].messages]
    assert roles[:2] == ["system", "user"]  # not a generated system + developer instructions
    assert formats.parse(back, "harmony")[0].messages[0].content == harmony.messages[0].content
    # from 2.2 too: the Harmony writer keeps it instead of generating a second one
    ocm, _ = convert(harmony, "openchatml-2.2")
    again, _ = convert(formats.parse(ocm, "openchatml-2.2")[0], "harmony")
    assert again.count("<|start|>system") == 1


def test_read_system_message_takes_only_builtin_tool_sections():
    browser = "# Tools\n\n## browser\n\nnamespace browser {\n\ntype open = () => any;\n\n} // namespace browser"
    text = harmony_prompt.system_message(reasoning_effort="low", builtin_tools=browser)
    assert harmony_prompt.read_system_message(text).builtin_tools == browser
    other = text.replace("## browser", "## weather")
    assert harmony_prompt.read_system_message(other) is None
    assert harmony_prompt.read_system_message(text.replace("# Tools", "# Tool")) is None


def _openai(tools, name, arguments):
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
    messages = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    return formats.parse(json.dumps({"tools": tools, "messages": messages}), "openai-messages")[0]


def test_a_declared_function_named_like_a_builtin_is_a_function():
    python = {"type": "function", "function": {"name": "python", "parameters": {}}}
    declared = _openai([python], "python", "{}").messages[0]
    assert (declared.recipient, declared.constrain) == ("functions.python", "json")
    builtin = _openai([], "python", "print(1)").messages[0]
    assert (builtin.recipient, builtin.constrain) == ("python", None)


def test_a_call_openai_would_read_back_otherwise_is_a_loss():
    transcript, _ = formats.parse(
        "<|start|>assistant to=functions.python<|channel|>commentary <|constrain|>json"
        '<|message|>{"a":1}<|call|>'
        "<|start|>assistant to=browser.open<|channel|>commentary <|constrain|>json"
        '<|message|>{"id":1}<|call|>',
        "harmony",
    )
    text, losses = convert(transcript, "openai-messages")
    assert [(loss.message_index, loss.field) for loss in losses] == [
        (0, "recipient"),
        (0, "constrain"),
        (1, "constrain"),
    ]
    back = formats.parse(text, "openai-messages")[0].messages
    assert [(m.recipient, m.constrain) for m in back] == [("python", None), ("browser.open", None)]


# --- open messages (completion prompts, truncation) -----------------------------------------


@pytest.mark.parametrize(
    ("source", "spec"),
    [
        ("<|start|>user<|message|>Hi<|end_message|><|start|>assistant<|message|>", "chatml"),
        ("<|start|>user<|message|>Hi<|end|><|start|>assistant", "harmony"),
        (
            '[{"token": "<|start|>"}, "user", {"token": "<|message|>"}, "Hi", '
            '{"token": "<|end_message|>"}, {"token": "<|start|>"}, "assistant"]',
            "chatml-json",
        ),
    ],
)
@pytest.mark.parametrize(
    "to", ["openai-messages", "sharegpt", "mms", "mms-tokens", "openchatml-0.1"]
)
def test_a_completion_prompt_is_dropped_and_reported(source, spec, to):
    transcript, _ = formats.parse(source, spec)
    text, losses = convert(transcript, to)
    # Harmony's generation prompt is the end of a request, which openai-messages → harmony
    # writes back (test_the_generation_prompt_survives_openai_messages): no loss there
    expected = [] if (spec, to) == ("harmony", "openai-messages") else [(1, "message")]
    assert [(loss.message_index, loss.field) for loss in losses] == expected
    back, diagnostics = formats.parse(text, to)
    assert [m.role for m in back.messages] == ["user"]
    assert not formats.has_errors(diagnostics)


def test_an_unterminated_message_is_written_complete_and_reported():
    transcript, _ = formats.parse(
        "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Hel",
        "harmony",
    )
    text, losses = convert(transcript, "openai-messages")
    assert json.loads(text)["messages"][1] == {"role": "assistant", "content": "Hel"}
    assert [(loss.message_index, loss.field) for loss in losses] == [(1, "end")]


# --- v0.1 <|function_list|> ↔ tool declarations -------------------------------------------


@pytest.mark.parametrize("to", ["openai-messages", "harmony", "sharegpt", "openchatml-2.2"])
def test_a_v01_function_list_becomes_declarations_and_comes_back(to):
    source = (Path(formats.__file__).parent.parent / "demo/openchatml-0.1.txt").read_text("utf-8")
    transcript, _ = formats.parse(source, "openchatml-0.1")
    text, losses = convert(transcript, to)
    assert {(loss.message_index, loss.field) for loss in losses} >= {(0, "flags"), (0, "tools")}
    through, diagnostics = formats.parse(text, to)
    found = diagnostics + validate(through, text=text)
    unknown = {d.message.split()[0] for d in found if d.code == "W-PARSE-UNKNOWN-TOKEN"}
    assert not unknown & {"<|function_list|>", "<|reflect|>", "<|reason|>"}
    assert not any(d.code == "W-CALL-UNKNOWN-TOOL" for d in found)
    assert "get_stock_fundamentals" in text and "<|function_list|>" not in text
    back, _ = convert(through, "openchatml-0.1")
    system = formats.parse(back, "openchatml-0.1")[0].messages[0]
    assert system.content.startswith("You are a function calling AI model.")
    assert [p["kind"] for p in message_parts(system)][-2:] == ["function_list", "text"]
    assert message_parts(system)[-2]["json"]["function"]["name"] == "get_stock_fundamentals"


def test_a_function_list_with_prose_inside_stays_text():
    text = "<|im_start|>system\n<|function_list|>\nsee the wiki\n<|function_list|>\n<|im_end|>"
    transcript, _ = formats.parse(text, "openchatml-0.1")
    out, losses = convert(transcript, "openai-messages")
    assert "tools" not in json.loads(out) and losses == []
    assert "see the wiki" in json.loads(out)["messages"][0]["content"]


# --- CoT markers ↔ Harmony analysis -----------------------------------------------------------

COT_MARKERS = {"<|start_reflect|>", "<|start_introspect|>", "<|start_reason|>"}


def _unknown_tokens(text, spec):
    transcript, diagnostics = formats.parse(text, spec)
    found = diagnostics + validate(transcript, text=text)
    return {d.message.split()[0] for d in found if d.code == "W-PARSE-UNKNOWN-TOKEN"}


def test_v01_thought_blocks_become_plain_harmony_analysis_and_come_back():
    source = (Path(formats.__file__).parent.parent / "demo/openchatml-0.1.txt").read_text("utf-8")
    text, losses = convert(formats.parse(source, "openchatml-0.1")[0], "harmony")
    assert not _unknown_tokens(text, "harmony") & COT_MARKERS
    # the reason block is what a Harmony analysis is; only the reflect kind is lost
    assert [str(loss) for loss in losses if loss.message_index == 2] == [
        "message 2: content: CoT marker <|start_reflect|> dropped (harmony has none)"
    ]
    back, losses = convert(formats.parse(text, "harmony")[0], "openchatml-0.1")
    assert not [loss for loss in losses if loss.field == "channel"]
    assert back.count("<|start_reason|>") == 2 and "<|start_reflect|>" not in back
    again, losses = convert(formats.parse(back, "openchatml-0.1")[0], "harmony")
    assert again == text and not [loss for loss in losses if loss.message_index == 2]


def test_2x_cot_markers_split_harmony_analysis_and_are_reported():
    source = (FIXTURES / "openchatml-2.0/valid/cot-markers.txt").read_text("utf-8")
    text, losses = convert(formats.parse(source, "openchatml-2.0")[0], "harmony")
    analysis = [
        m.content for m in formats.parse(text, "harmony")[0].messages if m.channel == "analysis"
    ]
    assert analysis == ["91 = 7 \u00d7 13.", "Checked."]
    assert [(loss.message_index, loss.field) for loss in losses if loss.message_index == 1] == [
        (1, "message")
    ]
    assert not _unknown_tokens(text, "harmony") & COT_MARKERS
    # a marker the 2.x author wrote is text the way back does not restore: reported
    transcript, _ = formats.parse(
        "<|start|>assistant<|channel|>analysis<|message|><|start_reason|>x<|end|>", "openchatml-2.2"
    )
    text, losses = convert(transcript, "harmony")
    assert "analysis<|message|>x<|end|>" in text
    assert [(loss.message_index, loss.field) for loss in losses][:1] == [(0, "content")]


def test_spec_worked_example_16_2_keeps_its_own_system_message_in_harmony():
    (example,) = (FIXTURES / "spec-samples" / "openchatml-2.2").glob("worked-example-16.2.txt")
    text = example.read_text("utf-8")
    transcript, _ = formats.parse(text, "openchatml-2.2")
    harmony, _ = convert(transcript, "harmony")
    assert harmony.count("<|start|>system") == 1
    assert harmony.startswith(text[: text.index("<|end|>")])


@pytest.mark.parametrize(
    "text",
    [
        "Reasoning: high",
        "You are a pirate.\nKnowledge cutoff: 2024-06",
        "# Valid channels: analysis, final.",
        harmony_prompt.system_message(reasoning_effort="low", current_date="2025-01-02"),
        "Knowledge cutoff: 2024-06\nReasoning: high\n# Tools\n\n## browser\n\n// Browse.\n"
        "namespace browser {\n}\n\n# Valid channels: analysis, final.",
        "# Valid channels: analysis.\nReasoning: high",  # any order (issue 34)
        "reasoning: HIGH",  # any capitalisation
        "# Valid channels: analysis.\nYou are a pirate.",  # the identity anywhere
        "Knowledge cutoff: 2024-06\nYou are ChatGPT.\n\nReasoning: high",
    ],
)
def test_gpt_oss_system_messages_are_recognised_in_any_subset(text):
    assert harmony_prompt.is_system_message(text)


@pytest.mark.parametrize(
    "text",
    [
        "You are a pirate.",
        "Reasoning: extreme",
        "Reasoning: high\nAlways answer in French.\nBe brief.",  # two lines of no section
        "Reasoning: high\nReasoning: low",  # a section said twice
        "# Tools\n\n## functions\n\nnamespace functions {\n}",  # function tools: a developer's
    ],
)
def test_other_system_prompts_are_not_gpt_oss_system_messages(text):
    assert not harmony_prompt.is_system_message(text)


HARMONY_OUTPUTS = [
    p.stem
    for p in CASES
    if json.loads(p.read_text("utf-8"))["to"] == "harmony"
    and json.loads(p.read_text("utf-8"))["from"] == "openai-messages"
]


@pytest.mark.parametrize("name", HARMONY_OUTPUTS)
def test_harmony_through_openai_messages_gives_back_the_same_bytes(name):
    """harmony → openai-messages → harmony is the identity on what gpt-oss's renderer writes
    (the outputs of the openai-messages → harmony fixtures)."""
    harmony = json.loads((CORPUS / f"{name}.json").read_text("utf-8"))["output"]
    openai, _ = convert(formats.parse(harmony, "harmony")[0], "openai-messages")
    back, losses = convert(formats.parse(openai, "openai-messages")[0], "harmony")
    assert back == harmony
    assert losses == []


# --- the generation prompt (openai/harmony's render_conversation_for_completion) ------------


@pytest.mark.parametrize(
    ("harmony", "flag"),
    [
        ("<|start|>user<|message|>Hi<|end|><|start|>assistant", None),
        ("<|start|>user<|message|>Hi<|end|>", False),
    ],
)
def test_the_generation_prompt_survives_openai_messages(harmony, flag):
    """A request that does not end with the assistant gets `<|start|>assistant` in Harmony
    unless openai-messages says ``add_generation_prompt: false``, which a Harmony text
    without the prompt says on its way to openai-messages."""
    openai, losses = convert(formats.parse(harmony, "harmony")[0], "openai-messages")
    assert losses == []
    assert json.loads(openai).get("add_generation_prompt") == flag
    back, losses = convert(formats.parse(openai, "openai-messages")[0], "harmony")
    assert back.endswith(harmony) and losses == []


def test_a_message_s_fields_start_with_the_semantic_fields_in_their_order():
    """Conversion copies messages and storage reads them by position (hub._copy,
    editor.models.Message.canonical_of): a field added to Message must come after these, or
    both must change."""
    from dataclasses import fields

    from editor.formats.model import SEMANTIC_FIELDS

    assert tuple(field.name for field in fields(Message))[: len(SEMANTIC_FIELDS)] == SEMANTIC_FIELDS
