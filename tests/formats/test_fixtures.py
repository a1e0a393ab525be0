"""Every fixture of tests/fixtures/ (see conftest.py for the layout)."""

from __future__ import annotations

import pytest

from editor import formats
from editor.formats.diagnostics import ERROR, WARNING

from .conftest import expected_for, fixture_inputs, read_input

VALID = fixture_inputs("valid")
INVALID = fixture_inputs("invalid")


def case_id(case):
    spec, path = case
    return f"{spec}/{path.name}"


@pytest.mark.parametrize("case", VALID, ids=[case_id(c) for c in VALID])
def test_valid_fixture_parses_to_expected_canonical_json(case):
    spec, path = case
    text = read_input(path)
    transcript, diagnostics = formats.parse(text, spec=spec)
    errors = [str(d) for d in diagnostics if d.severity == ERROR]
    assert errors == []
    assert transcript.to_dict() == expected_for(path)


@pytest.mark.parametrize("case", VALID, ids=[case_id(c) for c in VALID])
def test_valid_fixture_is_detected(case):
    spec, path = case
    assert formats.detect(read_input(path)) == spec


@pytest.mark.parametrize(
    "case",
    [c for c in VALID if c[0] in formats.TEXT_SPECS],
    ids=[case_id(c) for c in VALID if c[0] in formats.TEXT_SPECS],
)
def test_valid_text_fixture_round_trips_byte_for_byte(case):
    spec, path = case
    text = read_input(path)
    transcript, _ = formats.parse(text, spec=spec)
    assert formats.serialize(transcript) == text


@pytest.mark.parametrize("case", INVALID, ids=[case_id(c) for c in INVALID])
def test_invalid_fixture_gives_expected_diagnostics(case):
    spec, path = case
    text = read_input(path)
    expected = expected_for(path)
    _, diagnostics = formats.parse(text, spec=spec)
    reported = [d for d in diagnostics if d.severity in (ERROR, WARNING)]
    wanted = expected["diagnostics"]
    got = [
        {key: getattr(d, key) for key in want} for d, want in zip(reported, wanted, strict=False)
    ]
    assert [d.code for d in reported] == [w["code"] for w in wanted]
    assert got == wanted
    if expected.get("detect", True):
        assert formats.detect(text) == spec


@pytest.mark.parametrize("case", INVALID, ids=[case_id(c) for c in INVALID])
def test_invalid_fixture_raises_in_strict_mode(case):
    spec, path = case
    text = read_input(path)
    _, diagnostics = formats.parse(text, spec=spec)
    if not formats.has_errors(diagnostics):
        pytest.fail("an invalid fixture must produce at least one error diagnostic")
    with pytest.raises(formats.ParseError) as info:
        formats.parse(text, spec=spec, strict=True)
    assert info.value.diagnostic.severity == ERROR
