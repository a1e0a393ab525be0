"""Conformance probes: spec examples and the contract points of docs/formats.md run through the
``ocm`` CLI, each a regression test for a disagreement found in an audit."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from editor import formats
from editor.formats.cli import main
from editor.formats.convert import convert
from editor.formats.validate import validate

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
V01_DEMO = ROOT / "editor" / "demo" / "openchatml-0.1.txt"
SHAREGPT_CALLS = FIXTURES / "sharegpt" / "valid" / "function-calling.json"
V01_CONVERSATION = FIXTURES / "openchatml-0.1" / "valid" / "conversation.txt"
TOKEN_TEXT_TARGETS = ("openchatml-2.0", "openchatml-2.2", "harmony", "openchatml-json")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as fh:
        return fh.read()


def test_v01_call_template_in_system_prompt_is_not_a_call():
    # v0.1 §8.5: the system prompt shows `<|function_call|>` with placeholders; only an
    # assistant message makes a call, so nothing is "unanswered".
    code, out, _ = run("validate", str(V01_DEMO))
    assert code == 0
    assert "W-CALL-UNANSWERED" not in out


def test_v01_function_output_outside_a_tool_message_answers_nothing():
    text = (
        "<|im_start|>user\n<|function_output|>\n"
        '{"name": "f", "content": 1}\n<|im_end|>\n'
        "<|im_start|>assistant\nok\n<|im_end|>"
    )
    transcript, _ = formats.parse(text, "openchatml-0.1")
    assert not [d for d in validate(transcript, text=text) if d.code == "E-CALL-REPLY-UNKNOWN"]


def test_sharegpt_tools_as_a_json_string_convert_without_error():
    # ShareGPT datasets store `tools` as a JSON-encoded string: it declares the tools.
    for target in TOKEN_TEXT_TARGETS:
        code, out, err = run("convert", str(SHAREGPT_CALLS), "--to", target)
        assert code == 0, err
        assert "type get_stock_price" in out


def test_conversion_to_mms_tokens_ends_with_end_turn():
    # A complete last assistant message must not read back as truncated.
    code, out, err = run("convert", str(V01_CONVERSATION), "--to", "mms-tokens")
    assert code == 0
    assert out.endswith("<|end_turn|>")
    assert "end_turn" in err  # the <|end|> → <|end_turn|> change is reported
    _, diagnostics = formats.parse(out, "mms-tokens")
    assert not formats.has_errors(diagnostics)
    back, _ = convert(formats.parse(out, "mms-tokens")[0], "openchatml-0.1")
    assert back == read(V01_CONVERSATION).rstrip("\n")  # text after [EOS] is layout


def test_parse_output_is_canonical_json():
    code, out, _ = run("parse", str(V01_CONVERSATION))
    doc = json.loads(out)
    assert code == 0 and set(doc) >= {"spec", "header", "messages", "diagnostics"}


BOM = "\ufeff"
BOM_SAMPLES = {
    "openchatml-2.0": "<|start|>user<|message|>hi<|end|>",
    "openchatml-2.2": "version: 2.2\n<|start|>user<|message|>hi<|end|>",
    "openchatml-0.1": "<|im_start|>user\nhi<|im_end|>",
    "mms-tokens": "<|role|>user<|content|>hi",
    "chatml": "<|start|>user<|message|>hi<|end_message|>",
}


@pytest.mark.parametrize("spec", sorted(BOM_SAMPLES))
def test_bom_at_start_is_layout(spec):
    text = BOM + BOM_SAMPLES[spec]
    assert formats.detect(text) == spec
    transcript, diagnostics = formats.parse(text)
    assert diagnostics == [] and len(transcript.messages) == 1
    assert formats.serialize(transcript) == text


def test_bom_before_json_is_ignored():
    text = BOM + '[{"role": "user", "content": "hi"}]'
    transcript, diagnostics = formats.parse(text)
    assert transcript.spec == "openai-messages" and diagnostics == []
    assert transcript.messages[0].content == "hi"


def test_lone_surrogate_from_a_json_escape_is_printed_not_a_crash():
    text = '[{"role": "user", "content": "a\\ud800b"}]'
    for argv in (["parse", "-"], ["render", "-"], ["convert", "-", "--to", "chatml"]):
        result = subprocess.run(
            [sys.executable, "-m", "editor.formats.cli", *argv],
            input=text.encode(),
            capture_output=True,
            cwd=ROOT,
        )
        assert result.returncode == 0, result.stderr
        assert b"\\ud800" in result.stdout
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "editor.formats.cli", "parse", "-"],
            input=text.encode(),
            capture_output=True,
            cwd=ROOT,
        ).stdout
    )
    assert doc["messages"][0]["content"] == "a\ud800b"


def _validation(path: Path) -> list[str]:
    text = read(path)
    transcript, diagnostics = formats.parse(text)
    found = list(diagnostics) + validate(transcript, text=text)
    return [d.code for d in found if d.severity in ("error", "warning")]


def test_harmony_completion_prompt_needs_no_channel():
    # `<|start|>assistant` with no body is the gpt-oss prompt: the model writes the channel.
    assert _validation(FIXTURES / "harmony" / "valid" / "completion-prompt.txt") == []


def test_openchatml_json_20_variant_pairs_replies_by_tool_name():
    # 2.0 §10 has tool_calls ids but 2.0 replies (`functions.X` role) carry none.
    assert _validation(FIXTURES / "openchatml-json" / "valid" / "interchange-20.json") == []


def test_openchatml_json_22_variant_still_requires_call_ids():
    text = json.dumps(
        [
            {"role": "assistant", "channel": "commentary", "content": "{}",
             "tool_call": {"id": "c1", "recipient": "functions.f", "arguments": "{}"}},
            {"role": "tool", "name": "functions.f", "channel": "commentary", "content": "1"},
        ]
    )  # fmt: skip
    transcript, _ = formats.parse(text, "openchatml-json")
    assert "E-CALL-ID-MISSING" in [d.code for d in validate(transcript, text=text)]


SHAREGPT_TS_TOOL = {
    "conversations": [
        {
            "from": "system",
            "value": "namespace functions {\ntype f = (_: { a: string }) => any;\n}",
        },
        {"from": "human", "value": "q"},
        {"from": "function_call", "value": json.dumps({"name": "f", "arguments": {"a": "x"}})},
        {"from": "observation", "value": "1"},
        {"from": "gpt", "value": "ok"},
    ]
}


def test_sharegpt_call_arguments_are_checked_not_the_whole_turn():
    text = json.dumps(SHAREGPT_TS_TOOL)
    transcript, _ = formats.parse(text, "sharegpt")
    assert validate(transcript, text=text) == []
    bad = json.loads(text)
    bad["conversations"][2]["value"] = json.dumps({"name": "f", "arguments": {"b": 1}})
    text = json.dumps(bad)
    transcript, _ = formats.parse(text, "sharegpt")
    assert [d.code for d in validate(transcript, text=text)] == ["E-CALL-SCHEMA"]


def test_converted_16_2_to_sharegpt_validates():
    source = FIXTURES / "openchatml-2.2" / "valid" / "16-2-function-call.txt"
    text, _ = convert(formats.parse(read(source))[0], "sharegpt")
    transcript, diagnostics = formats.parse(text, "sharegpt")
    assert not formats.has_errors(diagnostics + validate(transcript, text=text))
