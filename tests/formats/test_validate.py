"""Semantic validation: the fixture corpus of tests/fixtures/validate/ plus targeted checks.

Corpus layout: ``<name>.<spec>.<ext>`` is an input written in ``<spec>``; ``<name>.expected.json``
holds ``{"codes": [...], "fixed"?: true}``. Each entry of ``codes`` is a code or an object
``{"code", "line"?, "column"?, "message_index"?}``; the validator's diagnostics (parse
diagnostics excluded) must be exactly these, in order, compared on the keys given. With
``"fixed": true`` every quick fix is applied in turn and the fixed text no longer has the
fixed diagnostic.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor import formats
from editor.formats.diagnostics import CODES, Diagnostic, Edit, Fix
from editor.formats.model import Message, Transcript
from editor.formats.validate import validate

from .conftest import spec_samples

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "validate"
CASES = sorted(p for p in CORPUS.iterdir() if not p.name.endswith(".expected.json"))
OWN_CODES = {
    "W-HEADER-MISSING", "E-HEADER-VALUE", "W-CHANNEL-UNKNOWN", "W-ROLE-UNKNOWN", "W-INTENT-UNKNOWN",
    "E-CALL-ID-MISSING", "E-CALL-ID-DUPLICATE", "E-CALL-REPLY-UNKNOWN", "W-CALL-UNANSWERED",
    "E-CALL-NAME-MISMATCH", "E-CALL-CHANNEL", "E-RETURN-NOT-FINAL", "E-CALL-MIXED-ENVELOPE",
    "W-CALL-UNKNOWN-TOOL", "W-TOOL-SCHEMA-INVALID", "E-V01-ROLE", "E-V01-NAME",
    "E-V01-THOUGHT-UNBALANCED", "E-MMS-FORMAT-MISSING", "W-MMS-TOOL-NO-CONTEXT",
    "E-PARSE-HEADER", "E-PARSE-CHANNEL-MISSING", "E-BODY-CONSTRAINT-VIOLATION", "E-CALL-SCHEMA",
}  # fmt: skip


def load(path: Path) -> tuple[str, str, dict]:
    name, rest = path.name.split(".", 1)
    spec = rest.rsplit(".", 1)[0]
    text = path.read_text("utf-8")
    expected = json.loads((CORPUS / f"{name}.expected.json").read_text("utf-8"))
    return spec, text, expected


def run(spec: str, text: str):
    transcript, _ = formats.parse(text, spec)
    return validate(transcript, text=text)


def apply_fix(text: str, fix) -> str:
    for edit in sorted(fix.edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_corpus_case_gives_expected_diagnostics(path):
    spec, text, expected = load(path)
    got = run(spec, text)
    wanted = [w if isinstance(w, dict) else {"code": w} for w in expected["codes"]]
    assert [d.code for d in got] == [w["code"] for w in wanted], [str(d) for d in got]
    assert [{k: getattr(d, k) for k in w} for d, w in zip(got, wanted, strict=True)] == wanted


FIXED = [p for p in CASES if load(p)[2].get("fixed")]


@pytest.mark.parametrize("path", FIXED, ids=[p.name for p in FIXED])
def test_corpus_quick_fixes_remove_their_diagnostic(path):
    spec, text, _ = load(path)
    fixable = [d for d in run(spec, text) if d.fix is not None]
    assert fixable
    for diagnostic in fixable:
        fixed = apply_fix(text, diagnostic.fix)
        after = [(d.code, d.message_index) for d in run(spec, fixed)]
        assert (diagnostic.code, diagnostic.message_index) not in after, (fixed, after)


def test_every_validation_code_is_registered_and_has_a_fixture():
    assert set(CODES) >= OWN_CODES
    covered = {"E-V01-NAME"}  # a parsed name never holds whitespace: hand-built test below
    for path in CASES:
        covered |= {w if isinstance(w, str) else w["code"] for w in load(path)[2]["codes"]}
    assert covered >= OWN_CODES, OWN_CODES - covered


def test_v01_name_with_whitespace():
    transcript = Transcript("openchatml-0.1", messages=[Message("user", "hi", name="Eric Smith")])
    assert [d.code for d in validate(transcript)] == ["E-V01-NAME"]


def test_hand_built_transcript_positions_fall_back_to_the_start():
    transcript = Transcript(
        "openchatml-2.2", {"version": "2.2"}, [Message("assistant", "x", channel="nope")]
    )
    (diagnostic,) = validate(transcript)
    assert (diagnostic.line, diagnostic.column, diagnostic.offset, diagnostic.message_index) == (
        1,
        1,
        0,
        0,
    )


def test_spec_worked_example_16_2_is_clean_apart_from_the_missing_header():
    (example,) = spec_samples("openchatml-2.2")
    assert [d.code for d in run("openchatml-2.2", example)] == ["W-HEADER-MISSING"]


def test_json_error_position_is_mapped_into_the_transcript():
    text = 'version: 2.2\n<|start|>assistant to=functions.f call_id=c<|channel|>commentary<|constrain|>json<|message|>{"a" 1}<|call|>'
    (diagnostic,) = run("openchatml-2.2", text)
    assert diagnostic.code == "E-BODY-CONSTRAINT-VIOLATION"
    assert text[diagnostic.offset] == "1"
    assert (diagnostic.line, diagnostic.column) == (2, text.index("1}") - text.index("\n"))


def test_schema_errors_name_their_json_path():
    text = (CORPUS / "call-schema-ts.openchatml-2.2.txt").read_text("utf-8")
    messages = [d.message for d in run("openchatml-2.2", text) if d.code == "E-CALL-SCHEMA"]
    assert any("$.location" in m for m in messages) and any("$.format" in m for m in messages)


def test_a_diagnostic_as_json_holds_every_field_and_its_fix_edits_as_objects():
    plain = Diagnostic("E-X", "error", "Plain", 2, 3, 9)
    fixed = Diagnostic(
        "W-Y", "warning", "Fixable", 1, 1, 0, 4, Fix("Do it", (Edit(0, 2, "ab"), Edit(5, 5, "")))
    )
    assert plain.to_dict() == {
        "code": "E-X",
        "severity": "error",
        "message": "Plain",
        "line": 2,
        "column": 3,
        "offset": 9,
        "message_index": None,
    }
    assert fixed.to_dict() == {
        "code": "W-Y",
        "severity": "warning",
        "message": "Fixable",
        "line": 1,
        "column": 1,
        "offset": 0,
        "message_index": 4,
        "fix": {
            "title": "Do it",
            "edits": [
                {"start": 0, "end": 2, "replacement": "ab"},
                {"start": 5, "end": 5, "replacement": ""},
            ],
        },
    }
    assert json.loads(json.dumps(fixed.to_dict())) == fixed.to_dict()
