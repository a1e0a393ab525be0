"""The ``ocm`` command line, in-process and as a subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from editor.formats.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
V01 = FIXTURES / "openchatml-0.1" / "valid" / "function-calling.txt"
BROKEN = FIXTURES / "chatml-json" / "invalid" / "wire-example.json"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_detect():
    assert run("detect", str(V01)) == (0, "openchatml-0.1\n", "")


def test_parse_prints_canonical_json_with_derived_parts():
    code, out, _ = run("parse", str(V01))
    assert code == 0
    doc = json.loads(out)
    assert doc["spec"] == "openchatml-0.1" and doc["diagnostics"] == []
    assistant = doc["messages"][2]
    assert assistant["parts"][0]["kind"] == "function_call"
    assert "channel" not in assistant  # null fields omitted


def test_parse_reports_errors_with_positions_and_exit_1():
    code, out, _ = run("parse", str(BROKEN))
    assert code == 1
    first = json.loads(out)["diagnostics"][0]
    assert {k: first[k] for k in ("code", "severity", "line", "column")} == {
        "code": "E-PARSE-JSON",
        "severity": "error",
        "line": 8,
        "column": 64,
    }
    assert "fix" in first


def test_validate_lists_diagnostics_like_a_compiler():
    code, out, _ = run("validate", str(BROKEN))
    assert code == 1
    assert out.splitlines()[0].startswith(f"{BROKEN}:8:64: error E-PARSE-JSON: ")


def test_convert_writes_the_target_spec(tmp_path):
    source = tmp_path / "chat.json"
    source.write_text(
        '[{"role": "assistant", "format": "js", "content": "x()", "end_turn": true}]', "utf-8"
    )
    code, out, _ = run("convert", str(source), "--to", "mms-tokens")
    assert code == 0
    assert out.startswith("<|role|>assistant")


def test_render_end_user_hides_thoughts():
    code, out, _ = run("render", str(FIXTURES / "openchatml-0.1" / "valid" / "thought-example.txt"))
    assert code == 0
    assert "start_reflect" not in out and "Band-Aid" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["parse", "/no/such/file"], "cannot read"),
        (["parse", str(FIXTURES)], "cannot read"),
    ],
)
def test_unusable_input_exits_2_without_traceback(argv, needle):
    code, _, err = run(*argv)
    assert code == 2 and needle in err and "Traceback" not in err


def test_unknown_spec_exits_2():
    with pytest.raises(SystemExit) as info:
        main(["parse", str(V01), "--spec", "nope"], io.StringIO(), io.StringIO())
    assert info.value.code == 2


def subprocess_run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "editor.formats.cli", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )


def test_stdin_and_subprocess():
    done = subprocess_run("detect", "-", stdin=b"<|role|>user<|content|>hi")
    assert (done.returncode, done.stdout) == (0, b"mms-tokens\n")


def test_not_utf8_exits_2():
    done = subprocess_run("parse", "-", stdin=b"\xff\xfe\x00")
    assert done.returncode == 2
    assert b"not UTF-8" in done.stderr and b"Traceback" not in done.stderr


def test_undetectable_input_exits_1():
    done = subprocess_run("detect", "-", stdin=b"plain prose")
    assert done.returncode == 1 and b"no supported spec" in done.stderr


def test_version_is_printed():
    with pytest.raises(SystemExit) as exit_:
        run("--version")
    assert exit_.value.code == 0


def test_render_audience_help_shows_its_default(capsys):
    with pytest.raises(SystemExit):
        run("render", "--help")
    assert "(default: end_user)" in " ".join(capsys.readouterr().out.split())


def test_validate_summary_counts_in_singular_and_plural(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("<|start|>user<|message|>hi<|end|>", encoding="utf-8")
    _, _, err = run("validate", str(path), "--spec", "openchatml-2.2")
    assert "1 message, 0 errors, 1 other diagnostic" in err


# --- machine-readable output and JSONL datasets ----------------------------------------------

DIAGNOSTIC_KEYS = {
    "code",
    "severity",
    "message",
    "line",
    "column",
    "offset",
    "message_index",
    "fix",
}


def test_validate_json_format_is_one_array_of_diagnostics():
    code, out, _ = run("validate", str(BROKEN), "--format", "json")
    assert code == 1
    diagnostics = json.loads(out)
    assert isinstance(diagnostics, list) and diagnostics
    assert all(set(d) == DIAGNOSTIC_KEYS for d in diagnostics)
    assert (diagnostics[0]["code"], diagnostics[0]["line"], diagnostics[0]["column"]) == (
        "E-PARSE-JSON",
        8,
        64,
    )
    assert diagnostics[0]["fix"]["edits"]


def test_validate_json_format_of_a_clean_file_is_an_empty_array():
    code, out, _ = run("validate", str(V01), "--format", "json")
    assert (code, json.loads(out)) == (0, [])


def dataset(tmp_path: Path, lines: list[str], name: str = "data.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return path


GOOD = json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
ENVELOPE = json.dumps({"id": "a1", "text": "<|start|>user<|message|>hi<|end|>", "spec": "harmony"})
UNANSWERED = json.dumps(
    {
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{"}}
                ],
            },
        ]
    }
)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_validate_a_jsonl_dataset_reports_by_line_with_a_summary(tmp_path, jobs):
    path = dataset(tmp_path, [GOOD, "{not json", "", ENVELOPE, GOOD])
    code, out, err = run("validate", str(path), "-j", jobs)
    assert code == 1
    assert out.splitlines() == [
        f"{path}:2: 1:2: error E-PARSE-JSON: The line is not valid JSON: "
        "Expecting property name enclosed in double quotes (column 2)"
    ]
    assert err == f"{path}: 4 records, 1 with errors, 1 error, 0 other diagnostics\n"


def test_validate_a_jsonl_dataset_as_json_names_each_record(tmp_path):
    path = dataset(tmp_path, [GOOD, UNANSWERED])
    code, out, _ = run("validate", str(path), "--format", "json")
    diagnostics = json.loads(out)
    assert code == 1
    assert {d["record"] for d in diagnostics} == {2}
    assert all(set(d) == DIAGNOSTIC_KEYS | {"record"} for d in diagnostics)


def test_a_clean_dataset_exits_0(tmp_path):
    path = dataset(tmp_path, [GOOD, ENVELOPE])
    assert run("validate", str(path)) == (
        0,
        "",
        f"{path}: 2 records, 0 with errors, 0 errors, 0 other diagnostics\n",
    )


def test_a_line_that_is_not_utf8_is_one_record_error(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(GOOD.encode() + b"\n\xff\xfe\n")
    code, out, _ = run("validate", str(path))
    assert code == 1
    assert out.startswith(f"{path}:2: 1:1: error E-PARSE-JSON: The line is not UTF-8")


def test_jsonl_from_stdin_needs_the_flag(monkeypatch):
    data = (GOOD + "\n" + GOOD + "\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, _, err = run("validate", "-", "--jsonl")
    assert (code, err) == (0, "-: 2 records, 0 with errors, 0 errors, 0 other diagnostics\n")


def test_a_jsonl_file_of_messages_is_one_transcript(tmp_path):
    lines = [
        json.dumps({"role": "user", "content": "a"}),
        json.dumps({"role": "assistant", "content": "b"}),
    ]
    path = dataset(tmp_path, lines)
    code, _, err = run("validate", str(path))
    assert (code, err) == (
        0,
        f"{path}: openchatml-json, 2 messages, 0 errors, 0 other diagnostics\n",
    )


def test_convert_a_jsonl_dataset_one_record_a_line(tmp_path):
    path = dataset(tmp_path, [GOOD, "[", ENVELOPE])
    code, out, err = run("convert", str(path), "--to", "sharegpt", "-j", "2")
    assert code == 1  # line 2 could not be converted
    first, envelope = (json.loads(line) for line in out.splitlines())
    assert first == {
        "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]
    }
    assert envelope["id"] == "a1" and envelope["spec"] == "sharegpt"
    assert envelope["document"]["conversations"][0]["value"] == "hi"
    assert f"{path}:2: 1:2: error E-PARSE-JSON" in err
    assert err.endswith(f"{path}: 2 records converted, 1 not converted, 0 losses\n")


def test_convert_a_jsonl_dataset_to_a_text_spec_writes_envelopes(tmp_path):
    path = dataset(tmp_path, [UNANSWERED])
    code, out, err = run("convert", str(path), "--to", "chatml")
    assert code == 0
    (record,) = (json.loads(line) for line in out.splitlines())
    assert record["spec"] == "chatml" and record["text"].startswith("<|start|>user")
    assert f"{path}:1: loss: message 1: message: tool call to functions.f dropped" in err
