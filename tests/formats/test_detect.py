"""detect(): every sample of the spec texts and every format."""

from __future__ import annotations

import pytest

from editor.formats import detect, parse
from editor.formats.jsonl import validate_record

from .conftest import spec_samples


def test_every_v01_document_sample():
    samples = spec_samples("openchatml-0.1")
    assert len(samples) == 15
    assert {detect(s) for s in samples} == {"openchatml-0.1"}


def test_chatml_json_samples_even_though_they_are_broken_json():
    samples = spec_samples("chatml-json")
    assert len(samples) == 4
    assert {detect(s) for s in samples} == {"chatml-json"}


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        (
            "<|role|>assistant<|format|>javascript<|content|>console.log('hello world')<|end_turn|>",
            "mms-tokens",
        ),
        (
            '{\n"role": "assistant",\n"format": "javascript",\n"content": "x",\n"end_turn": true,\n}',
            "mms",
        ),
        ('[{"role": "platform", "content": "x"}]', "mms"),
        ('{"thread": [{"role": "user", "content": "x"}]}', "mms"),
        ('[{"role": "user", "content": "x"}]', "openai-messages"),
        ('{"messages": [{"role": "user", "content": "x"}], "tools": []}', "openai-messages"),
        ('{"conversations": [{"from": "human", "value": "x"}]}', "sharegpt"),
        ('[{"from": "human", "value": "x"}]', "sharegpt"),
        ('[{"role": "assistant", "channel": "final", "content": "x"}]', "openchatml-json"),
        ('[{"role": "assistant", "thinking": "t", "content": "x"}]', "openchatml-json"),
        # `thinking` beside what only Chat Completions has: gpt-oss's template, HF, ollama
        (
            '{"messages": [{"role": "assistant", "thinking": "t", "content": "x"}], "tools": []}',
            "openai-messages",
        ),
        (
            '[{"role": "assistant", "thinking": "t", "tool_calls": []}, '
            '{"role": "tool", "tool_call_id": "1", "content": "x"}]',
            "openai-messages",
        ),
        (
            '{"role": "user", "content": "a"}\n{"role": "assistant", "content": "b"}\n',
            "openchatml-json",
        ),
        ('[{"token": "<|start|>"}, "user", {"token": "<|message|>"}, "hi"]', "chatml-json"),
        ('[{"role": "user", "content": "x"', "openai-messages"),  # truncated: sniffed
        ("<|start|>user<|message|>hi<|end_message|>", "chatml"),
        ("<|start|>user<|message|>hi", "chatml"),
        ("<|start|>user<|message|>hi<|end|>", "openchatml-2.0"),
        ("---\nversion: 2.0\n---\n<|start|>user<|message|>hi<|end|>", "openchatml-2.0"),
        ("version: 2.2\n<|start|>user<|message|>hi<|end|>", "openchatml-2.2"),
        ("---\nversion: 2.1\n---\n<|start|>user<|message|>hi<|end|>", "openchatml-2.2"),
        (
            "<|start|>tool name=functions.f call_id=1<|channel|>commentary<|message|>{}<|end|>",
            "openchatml-2.2",
        ),
        (
            "<|start|>assistant to=functions.f<|channel|>commentary<|message|>{}<|call|>",
            "openchatml-2.0",
        ),
        (
            "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>",
            "harmony",
        ),
        ("<|start|>assistant<|channel|>final<|message|>hi<|return|>", "harmony"),
        ("[BOS]<|im_start|>user\nhi<|im_end|>[EOS]", "openchatml-0.1"),
        ("a\n<|file_separator|>\nb", "openchatml-0.1"),
        ("just prose", None),
        ("", None),
        ("[1, 2, 3]", None),
    ],
)
def test_detect(text, spec):
    assert detect(text) == spec


def test_first_family_token_wins_over_tokens_quoted_in_bodies():
    assert detect("<|im_start|>user\nWhat does <|start|> mean?<|im_end|>") == "openchatml-0.1"
    assert detect("<|role|>user<|content|>Explain <|im_start|><|end_turn|>") == "mms-tokens"


def test_large_input_is_fast():
    import time

    text = "<|start|>user<|message|>" + "x" * 5_000_000 + "<|end|>"
    began = time.perf_counter()
    assert detect(text) == "openchatml-2.0"
    assert time.perf_counter() - began < 1.0


@pytest.mark.parametrize(
    ("text", "given", "reads_as"),
    [
        ("<|im_start|>user\nHi<|im_end|>", "chatml", "openchatml-0.1"),
        ('[{"role": "user", "content": "Hi"}]', "harmony", "openai-messages"),
        ("<|role|>user<|content|>Hi<|end_turn|>", "openchatml-0.1", "mms-tokens"),
    ],
)
def test_no_message_under_the_spec_given_names_the_spec_the_text_reads_as(text, given, reads_as):
    result = parse(text, spec=given)
    assert result.transcript.messages == []
    (empty,) = [d for d in result.diagnostics if d.code == "E-PARSE-EMPTY"]
    assert empty.message.endswith(f"; the text reads as {reads_as}: parse it with that spec")
    assert parse(text, spec=reads_as).transcript.messages  # and it does


SHAREGPT_LINE = (
    '{"conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Yo"}]}'
)


def test_a_json_document_of_another_shape_names_the_spec_it_reads_as():
    result = parse(SHAREGPT_LINE, spec="openchatml-json")
    assert result.transcript.messages == []
    first = next(d for d in result.diagnostics if d.code == "E-PARSE-SHAPE")
    assert first.message.endswith("; the text reads as sharegpt: parse it with that spec")
    assert parse(SHAREGPT_LINE, spec="sharegpt").transcript.messages


def test_a_jsonl_line_of_another_shape_names_the_spec_it_reads_as():
    report = validate_record(1, SHAREGPT_LINE.encode(), "openchatml-json")
    first = next(d for d in report.diagnostics if d.code == "E-PARSE-SHAPE")
    assert first.message.endswith("; the text reads as sharegpt: parse it with that spec")


def test_no_message_in_a_text_of_no_spec_says_nothing_more():
    (empty,) = [d for d in parse("", spec="chatml").diagnostics if d.code == "E-PARSE-EMPTY"]
    assert "reads as" not in empty.message
