"""Property tests at the limits: any nesting depth and very long single tokens never raise.

Every JSON reader of the core (documents, bodies, call arguments, tool lists, the YAML
header, TypeScript signatures) meets input nested from just under the depth limit to far
beyond Python's recursion limit, and tokens of megabytes; parse (named and detected),
validate, convert and render must all answer with diagnostics, never an exception.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from editor import formats
from editor.formats.codecs.json_depth import MAX_DEPTH
from editor.formats.convert import convert
from editor.formats.render import AUDIENCES, render
from editor.formats.validate import validate
from tests.budget import examples

LIMITS = settings(max_examples=examples(40), deadline=None)

CALL_HEAD = "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>"
# Where a deeply nested JSON value lands, one template per reader; {} is the value.
NESTING_SITES = {
    "document": "{}",
    "openai message field": '[{{"role": "user", "content": "x", "extra": {}}}]',
    "openai call arguments": (
        '[{{"role": "assistant", "content": null, "tool_calls": [{{"id": "c", "type": '
        '"function", "function": {{"name": "f", "arguments": {}}}}}]}}]'
    ),
    "openai tool parameters": (
        '{{"messages": [{{"role": "user", "content": "x"}}], "tools": [{{"type": "function", '
        '"function": {{"name": "f", "parameters": {}}}}}]}}'
    ),
    "harmony json body": CALL_HEAD + "{}<|call|>",
    "2.2 json body": (
        "version: 2.2\n<|start|>assistant to=functions.f call_id=c<|channel|>commentary"
        "<|constrain|>json<|message|>{}<|call|>"
    ),
    "v0.1 function call": "[BOS]<|im_start|>assistant\n<|function_call|>{}<|im_end|>[EOS]",
    "v0.1 function list": "[BOS]<|im_start|>system\n<|function_list|>{}<|im_end|>[EOS]",
    "yaml header": "---\nversion: 2.2\nx: {}\n---\n<|start|>user<|message|>hi<|end|>",
    "sharegpt call": '{{"conversations": [{{"from": "function_call", "value": {}}}]}}',
    "json lines": '{{"role": "user", "content": "a"}}\n{}\n',
}
TYPESCRIPT_TOOL = (
    "<|start|>developer<|message|># Tools\n\n## functions\n\nnamespace functions {{\n\n"
    "type f = (_: {}) => any;\n\n}} // namespace functions<|end|>" + CALL_HEAD + '{{"a":1}}<|call|>'
)
# A token of one character repeated: a header field, a body, a control token, a JSON string,
# a number, a YAML scalar.
LONG_TOKEN_SITES = (
    "<|start|>assistant to={}<|channel|>final<|message|>x<|end|>",
    "<|start|>user<|message|>{}<|end|>",
    "<|{}|>",
    '[{{"role": "user", "content": "{}"}}]',
    '[{{"role": "user", "content": 1{}}}]',
    "---\nversion: 2.2\nx: {}\n---\n<|start|>user<|message|>hi<|end|>",
    "[BOS]<|im_start|>user name={}\nhi<|im_end|>[EOS]",
)


def nested(depth: int, kind: str, closed: bool) -> str:
    opener, closer = ("[", "]") if kind == "array" else ('{"a": ', "}")
    return opener * depth + "1" + (closer * depth if closed else "")


def every_reader_answers(text: str) -> None:
    for spec in (None, *formats.SPEC_IDS):
        transcript, diagnostics = formats.parse(text, spec=spec)
        for d in diagnostics:
            assert 0 <= d.offset <= len(text)
        if transcript.spec not in formats.SPEC_IDS:
            continue
        validate(transcript, text=text)
        if spec is None:
            for audience in AUDIENCES:
                render(transcript, audience, source_text=text)
            for target in formats.SPEC_IDS:
                convert(transcript, to=target)


@LIMITS
@given(
    st.sampled_from(sorted(NESTING_SITES)),
    st.integers(MAX_DEPTH - 2, MAX_DEPTH + 2) | st.integers(1_000, 100_000),
    st.sampled_from(["array", "object"]),
    st.booleans(),
)
def test_any_nesting_depth_gives_diagnostics_not_an_exception(site, depth, kind, closed):
    every_reader_answers(NESTING_SITES[site].format(nested(depth, kind, closed)))


@settings(LIMITS, max_examples=examples(10))  # the TypeScript reader stops recursing at 64 levels
@given(st.integers(60, 70) | st.integers(1_000, 5_000))
def test_deep_typescript_signatures_never_raise(depth):
    every_reader_answers(TYPESCRIPT_TOOL.format("{ a: " * depth + "string" + " }" * depth))


@LIMITS
@given(st.sampled_from(LONG_TOKEN_SITES), st.sampled_from("x9[<|\\ "), st.integers(1, 2_000_000))
def test_very_long_single_tokens_never_raise(site, char, length):
    every_reader_answers(site.format(char * length))


def test_nesting_at_the_limit_is_read_and_one_more_level_is_refused():
    at_limit, _ = formats.parse(
        json.dumps(
            [
                {
                    "role": "user",
                    "content": "x",
                    "extra": json.loads(nested(MAX_DEPTH - 3, "array", True)),
                }
            ]
        ),
        spec="openai-messages",
    )
    assert at_limit.messages
    text = nested(MAX_DEPTH + 1, "array", True)
    _, (diagnostic,) = formats.parse(text, spec="openai-messages")
    assert diagnostic.code == "E-PARSE-JSON"
    assert f"nested deeper than {MAX_DEPTH} levels" in diagnostic.message
    assert diagnostic.offset == MAX_DEPTH


def test_a_number_too_long_for_python_is_a_json_diagnostic():
    text = '[{"role": "user", "content": 1' + "9" * 5_000 + "}]"
    _, diagnostics = formats.parse(text, spec="openai-messages")
    assert [d.code for d in diagnostics] == ["E-PARSE-JSON"]
    assert diagnostics[0].offset == text.index("19")
