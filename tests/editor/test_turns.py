"""A transcript shown as its own file has it: one turn per file message, fields in the
spec's own words (editor.presentation.display.display_turns, editor.formats.as_written)."""

import json

import pytest

from editor import formats
from editor.formats.render import ANNOTATOR, AUDIENCES, DEBUG, END_USER, render
from editor.presentation.display import display_turns

from .samples import demo_texts

HARMONY_WORDS = ("analysis", "commentary", "final", "channel", "constrain", "recipient", "to=")


def parsed(text: str, spec: str) -> formats.Transcript:
    return formats.parse(text, spec).transcript


def stored(transcript: formats.Transcript) -> formats.Transcript:
    """As ``models.Transcript.canonical()`` gives it: no source, no layout."""
    return formats.Transcript.from_dict(transcript.to_dict())


def turns_of(text: str, spec: str, audience: str = ANNOTATOR):
    transcript = parsed(text, spec)
    return display_turns(transcript, render(transcript, audience))


def labels(turn) -> list[list[tuple]]:
    return [[tuple(badge) for badge in part.badges] for part in turn.parts]


def demo_turns(spec: str, audience: str = ANNOTATOR):
    return turns_of(demo_texts()[spec], spec, audience)


# --- every spec ------------------------------------------------------------------------------


@pytest.mark.parametrize("audience", AUDIENCES)
@pytest.mark.parametrize("spec", formats.SPEC_IDS)
def test_every_rendered_item_is_in_exactly_one_turn_in_order(spec, audience):
    transcript = parsed(demo_texts()[spec], spec)
    rendered = render(transcript, audience)
    turns = display_turns(transcript, rendered)
    assert [i for turn in turns for i in turn.indices] == [item.index for item in rendered.items]
    assert [turn.number for turn in turns] == sorted({turn.number for turn in turns})


@pytest.mark.parametrize("spec", formats.SPEC_IDS)
def test_end_users_get_the_files_numbers_and_no_hidden_turn(spec):
    everything = {turn.number: turn for turn in demo_turns(spec, ANNOTATOR)}
    shown = demo_turns(spec, END_USER)
    assert shown, spec
    assert not any(turn.hidden for turn in shown)
    assert {turn.number for turn in shown} == {n for n, t in everything.items() if not t.hidden}
    for turn in shown:
        assert turn.role == everything[turn.number].role


# --- OpenAI Chat Completions -----------------------------------------------------------------


def test_openai_demo_assistant_with_reasoning_and_a_tool_call_is_one_turn_numbered_3():
    turns = demo_turns("openai-messages")
    assert [turn.number for turn in turns] == [1, 2, 3, 4, 5]
    call_turn = turns[2]
    assert call_turn.number == 3 and call_turn.role == "assistant" and call_turn.hidden
    assert call_turn.indices == [2, 3]
    assert labels(call_turn) == [
        [("reasoning_content", None)],
        [("tool_calls[0]", "get_weather"), ("id", "call_9f2")],
    ]
    assert labels(turns[3]) == [[("content", None), ("tool_call_id", "call_9f2")]]


@pytest.mark.parametrize("audience", [ANNOTATOR, DEBUG])
def test_openai_labels_never_use_harmony_words(audience):
    text = json.dumps(
        [
            {"role": "user", "content": "Weather and time in Paris?"},
            {
                "role": "assistant",
                "reasoning": "Two tools.",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    },
                    {
                        "id": "b",
                        "type": "function",
                        "function": {"name": "python", "arguments": "1"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "a", "name": "get_weather", "content": "rain"},
            {"role": "tool", "tool_call_id": "b", "content": "1"},
            {"role": "assistant", "content": "Rain, and it is noon."},
        ]
    )
    turns = turns_of(text, "openai-messages", audience)
    words = [value for turn in turns for part in labels(turn) for badge in part for value in badge]
    assert not [w for w in words if w and any(h in w for h in HARMONY_WORDS)]
    assert not [w for w in words if w and ("functions." in w or "<|" in w)]
    assert [turn.number for turn in turns] == [1, 2, 3, 4, 5]
    assert labels(turns[1]) == [
        [("reasoning", None)],
        [("content", None)],
        [("tool_calls[0]", "get_weather"), ("id", "a")],
        [("tool_calls[1]", "python"), ("id", "b")],
    ]
    assert labels(turns[2]) == [[("content", None), ("name", "get_weather"), ("tool_call_id", "a")]]
    assert labels(turns[3]) == [[("content", None), ("tool_call_id", "b")]]


def test_openai_legacy_function_call_and_reply_keep_their_words():
    turns = turns_of(
        json.dumps(
            [
                {"role": "user", "content": "2+2?"},
                {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "calc", "arguments": "{}"},
                },
                {"role": "function", "name": "calc", "content": "4"},
            ]
        ),
        "openai-messages",
    )
    assert [(turn.number, turn.role) for turn in turns] == [
        (1, "user"),
        (2, "assistant"),
        (3, "function"),
    ]
    assert labels(turns[1]) == [[("function_call", "calc")]]
    assert labels(turns[2]) == [[("content", None), ("name", "calc")]]


def test_openai_end_user_sees_the_content_part_of_a_turn_with_hidden_reasoning():
    text = json.dumps(
        [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "reasoning_content": "secret", "content": "Hello"},
        ]
    )
    annotator = turns_of(text, "openai-messages", ANNOTATOR)
    end_user = turns_of(text, "openai-messages", END_USER)
    assert [turn.indices for turn in annotator] == [[0], [1, 2]]
    assert not annotator[1].hidden
    assert [turn.indices for turn in end_user] == [[0], [2]]
    assert [(turn.number, labels(turn)) for turn in end_user] == [
        (1, [[("content", None)]]),
        (2, [[("content", None)]]),
    ]


def openai_file(messages: int) -> str:
    """``messages`` file messages; every third an assistant message with reasoning, content
    and two tool calls (four canonical messages)."""
    out = []
    for n in range(messages):
        if n % 3 == 2:
            calls = [
                {"id": f"c{n}{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for k in range(2)
            ]
            out.append(
                {"role": "assistant", "reasoning_content": "r", "content": "c", "tool_calls": calls}
            )
        else:
            out.append({"role": "user", "content": f"message {n}"})
    return json.dumps(out, indent=2)


def test_a_stored_openai_transcript_is_numbered_as_its_file():
    text = openai_file(73)
    transcript = parsed(text, "openai-messages")
    assert len(transcript.messages) > 73
    for canonical in (transcript, stored(transcript)):
        turns = display_turns(canonical, render(canonical, ANNOTATOR))
        assert [turn.number for turn in turns] == list(range(1, 74))


# --- OpenChatML JSON ---------------------------------------------------------------------------

INTERCHANGE_20 = json.dumps(
    [
        {"role": "user", "content": "News?"},
        {
            "role": "assistant",
            "thinking": "Search.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "browser.search", "arguments": "{}"},
                }
            ],
        },
        {"role": "functions.browser.search", "content": "results"},
        {"role": "assistant", "thinking": "Summarise.", "content": "Water on Mars!"},
    ]
)
PROJECTION_22 = json.dumps(
    [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "channel": "commentary",
            "tool_call": {
                "id": "wx1",
                "recipient": "functions.get_weather",
                "content_type": "json",
                "arguments": "{}",
            },
        },
        {
            "role": "tool",
            "name": "functions.get_weather",
            "call_id": "wx1",
            "channel": "commentary",
            "content": "20",
        },
        {
            "role": "assistant",
            "channel": "final",
            "content": "20 °C.",
            "thinking": "Sunny.",
            "end": "return",
        },
    ]
)


def test_openchatml_json_20_speaks_tool_calls_and_thinking():
    turns = turns_of(INTERCHANGE_20, "openchatml-json")
    assert [(turn.number, turn.role) for turn in turns] == [
        (1, "user"),
        (2, "assistant"),
        (3, "functions.browser.search"),
        (4, "assistant"),
    ]
    assert labels(turns[1]) == [
        [("thinking", None)],
        [("tool_calls[0]", "browser.search"), ("id", "call_1")],
    ]
    assert labels(turns[3]) == [[("thinking", None)], [("content", None)]]


def test_openchatml_json_22_speaks_tool_call_and_its_header_fields():
    turns = turns_of(PROJECTION_22, "openchatml-json")
    assert [turn.number for turn in turns] == [1, 2, 3, 4]
    assert labels(turns[1]) == [
        [
            ("tool_call", "functions.get_weather"),
            ("channel", "commentary"),
            ("id", "wx1"),
            ("content_type", "json"),
        ]
    ]
    assert labels(turns[2]) == [
        [
            ("content", None),
            ("channel", "commentary"),
            ("name", "functions.get_weather"),
            ("call_id", "wx1"),
        ]
    ]
    assert labels(turns[3]) == [
        [("thinking", None)],
        [("content", None), ("channel", "final"), ("end", "return")],
    ]


@pytest.mark.parametrize("text", [INTERCHANGE_20, PROJECTION_22])
def test_a_stored_openchatml_json_transcript_is_read_again_from_its_source_text(text):
    from_file = turns_of(text, "openchatml-json")
    canonical = stored(parsed(text, "openchatml-json"))
    again = display_turns(canonical, render(canonical, ANNOTATOR), source_text=text)
    assert [(t.number, t.indices, labels(t)) for t in again] == [
        (t.number, t.indices, labels(t)) for t in from_file
    ]


def test_a_source_text_that_says_something_else_is_not_used():
    canonical = stored(parsed(INTERCHANGE_20, "openchatml-json"))
    canonical.messages[0].content = "Edited since"
    turns = display_turns(canonical, render(canonical, ANNOTATOR), source_text=INTERCHANGE_20)
    assert [turn.indices for turn in turns] == [[i] for i in range(len(canonical.messages))]


# --- Harmony and OpenChatML 2.x ----------------------------------------------------------------


def test_harmony_speaks_channels_recipients_and_terminators():
    turns = demo_turns("harmony")
    assert [turn.role for turn in turns][3:6] == [
        "assistant",
        "assistant",
        "functions.get_current_weather",
    ]
    assert labels(turns[4]) == [
        [
            ("channel", "commentary"),
            ("to=", "functions.get_current_weather"),
            ("<|constrain|>", "json"),
            ("<|call|>", None),
        ]
    ]
    assert labels(turns[7]) == [[("channel", "final"), ("<|return|>", None)]]


def test_openchatml_22_speaks_call_id_and_intent():
    turns = demo_turns("openchatml-2.2")
    assert labels(turns[4]) == [[("channel", "commentary"), ("intent", "preamble")]]
    assert ("call_id", "wx1") in labels(turns[5])[0]


def test_a_cut_off_message_is_truncated_for_annotators_and_unmarked_for_end_users():
    text = "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Hel"
    assert labels(turns_of(text, "openchatml-2.2")[1]) == [
        [("channel", "final"), ("truncated", None)]
    ]
    assert labels(turns_of(text, "openchatml-2.2", END_USER)[1]) == [[("channel", "final")]]


# --- ChatML, OpenChatML 0.1, MMS, ShareGPT ---------------------------------------------------


def test_chatml_roles_are_as_written_and_an_open_request_is_truncated():
    text = "<|start|>user<|message|>Hi<|end_message|><|start|>assistant<|message|>Hel"
    turns = turns_of(text, "chatml")
    assert [(turn.role, labels(turn)) for turn in turns] == [
        ("user", [[]]),
        ("assistant", [[("truncated", None)]]),
    ]
    assert [turn.role for turn in demo_turns("chatml-json")][1] == "system:example_user"


def test_openchatml_01_names_thought_blocks_and_function_calls_by_their_tokens():
    turns = demo_turns("openchatml-0.1")
    assert labels(turns[1]) == [[("name", "Alice")]]
    assert labels(turns[2]) == [
        [
            ("<|start_reflect|>", None),
            ("<|start_reason|>", None),
            ("<|function_call|>", "get_stock_fundamentals"),
        ]
    ]
    assert labels(turns[3]) == [[("<|function_output|>", "get_stock_fundamentals")]]


def test_openchatml_01_thought_blocks_are_not_named_to_end_users():
    text = (
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n<|start_reflect|>private<|end_reflect|>Hello<|im_end|>"
    )
    assert labels(turns_of(text, "openchatml-0.1")[1]) == [[("<|start_reflect|>", None)]]
    assert labels(turns_of(text, "openchatml-0.1", END_USER)[1]) == [[]]


@pytest.mark.parametrize("spec", ["mms", "mms-tokens"])
def test_mms_speaks_format_and_end_turn(spec):
    turns = demo_turns(spec)
    assert labels(turns[-1])[0][-1] == ("end_turn", None)
    assert labels(turns[-1])[0][0][0] == "format"
    assert ("end_turn", None) not in labels(demo_turns(spec, END_USER)[-1])[0]


def test_mms_tool_calls_show_their_format_as_written():
    assert labels(demo_turns("mms")[3]) == [[("format", "weather:json")]]


def test_sharegpt_roles_are_the_from_values_as_written():
    turns = demo_turns("sharegpt")
    assert [(turn.number, turn.role, labels(turn)) for turn in turns] == [
        (1, "system", [[("value", None)]]),
        (2, "human", [[("value", None)]]),
        (3, "gpt", [[("value", None)]]),
    ]


SPLIT_BY_THE_AUTHOR = json.dumps(
    [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Let me check."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ]
)


def test_the_files_own_messages_win_over_how_the_serializer_would_group_them():
    # Written afresh, the two assistant messages would be one (content + tool_calls); the
    # file has two, and the source text says so.
    canonical = stored(parsed(SPLIT_BY_THE_AUTHOR, "openai-messages"))
    rendered = render(canonical, ANNOTATOR)
    from_text = display_turns(canonical, rendered, source_text=SPLIT_BY_THE_AUTHOR)
    assert [(turn.number, turn.indices) for turn in from_text] == [(1, [0]), (2, [1]), (3, [2])]
    assert [turn.indices for turn in display_turns(canonical, rendered)] == [[0], [1, 2]]


def test_an_edited_message_stays_in_the_file_message_it_was_read_from():
    transcript = parsed(SPLIT_BY_THE_AUTHOR, "openai-messages")
    transcript.messages[1].content = "Edited."  # keeps its source: the item it was read from
    turns = display_turns(transcript, render(transcript, ANNOTATOR))
    assert [turn.indices for turn in turns] == [[0], [1], [2]]
    assert len(json.loads(formats.serialize(transcript))) == 3  # as the file will be written
