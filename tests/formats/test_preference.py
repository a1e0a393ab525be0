"""Preference rows (editor.formats.preference): the TRL shapes and HH-RLHF read into
canonical messages, bad rows into problems with codes and places, and rows written back."""

import json
from pathlib import Path

import pytest

from editor import formats
from editor.formats import preference

CORPUS = Path(__file__).resolve().parents[1] / "preference_fixtures"
VALID = sorted((CORPUS / "valid").glob("*.json"))
INVALID = sorted((CORPUS / "invalid").glob("*.json"))
CONVERSATIONAL = [
    p for p in VALID if json.loads(p.read_text())["expected"]["shape"] == "conversational"
]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_rows_read_as_expected(path):
    case = _load(path)
    result = preference.read_row(case["row"], spec=case.get("spec"), shape=case.get("shape"))
    assert result.problems == []
    row, expected = result.row, case["expected"]
    assert (row.shape, row.spec, row.implicit) == (
        expected["shape"],
        expected["spec"],
        expected["implicit"],
    )
    for key in ("prompt", "chosen", "rejected"):
        assert [m.to_dict() for m in getattr(row, key)] == expected[key], key
    assert row.tools == expected.get("tools")


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_rows_give_problems_never_an_exception(path):
    case = _load(path)
    result = preference.read_row(case["row"], row=1, spec=case.get("spec"), shape=case.get("shape"))
    assert result.row is None
    got = [{k: v for k, v in p.to_dict().items() if k != "message"} for p in result.problems]
    assert got == case["expected"]
    assert all(p.code in preference.PROBLEM_CODES for p in result.problems)


def test_the_row_number_is_the_one_given():
    result = preference.read_row({"chosen": "x"}, row=17)
    assert [(p.code, p.row) for p in result.problems] == [("E-PREF-MISSING", 17)]


def test_unknown_spec_is_a_problem():
    row = {"prompt": "a", "chosen": "b", "rejected": "c"}
    assert [p.code for p in preference.read_row(row, spec="nope").problems] == ["E-PREF-SPEC"]


def test_recognises_preference_and_hh_rows():
    assert preference.is_preference_row({"chosen": [], "rejected": []})
    assert not preference.is_preference_row({"messages": []})
    assert preference.is_hh_row({"chosen": "\n\nHuman: a\n\nAssistant: b", "rejected": ""})
    assert not preference.is_hh_row({"prompt": "x", "chosen": "Human: a", "rejected": ""})


@pytest.mark.parametrize("path", CONVERSATIONAL, ids=lambda p: p.stem)
def test_conversational_rows_round_trip_through_openai_messages(path):
    case = _load(path)
    read = preference.read_row(case["row"]).row
    written = preference.write_row(
        read.prompt, read.chosen, read.rejected, spec=read.spec, tools=read.tools
    )
    assert written.losses == []
    again = preference.read_row(written.row).row
    for key in ("prompt", "chosen", "rejected"):
        assert [m.to_dict() for m in getattr(again, key)] == case["expected"][key]
    if not read.implicit:
        assert written.row == case["row"]


def test_hh_rows_round_trip_exactly():
    case = _load(CORPUS / "valid" / "hh_rlhf.json")
    read = preference.read_row(case["row"]).row
    written = preference.write_row(
        read.prompt, read.chosen, read.rejected, spec=read.spec, shape="hh"
    )
    assert written.row == case["row"] and written.losses == []


def test_hh_leaves_out_what_it_cannot_say_and_reports_it():
    prompt = [formats.Message(role="system", content="Be nice."), formats.Message("user", "Hi")]
    chosen = [formats.Message(role="assistant", content="Hello")]
    rejected = [formats.Message(role="assistant", content="Bye")]
    written = preference.write_row(prompt, chosen, rejected, spec="openai-messages", shape="hh")
    assert written.row == {
        "chosen": "\n\nHuman: Hi\n\nAssistant: Hello",
        "rejected": "\n\nHuman: Hi\n\nAssistant: Bye",
    }
    assert [(loss["message_index"], loss["field"]) for loss in written.losses] == [(0, "messages")]


def test_standard_plain_rows_round_trip_and_report_joined_prompts():
    case = _load(CORPUS / "valid" / "trl_standard.json")
    read = preference.read_row(case["row"]).row
    written = preference.write_row(
        read.prompt, read.chosen, read.rejected, spec=read.spec, shape="standard"
    )
    assert written.row == case["row"] and written.losses == []
    two = [formats.Message("system", "S"), formats.Message("user", "U")]
    joined = preference.write_row(two, read.chosen, read.rejected, spec=read.spec, shape="standard")
    assert joined.row["prompt"] == "S\n\nU"
    assert [loss["field"] for loss in joined.losses] == ["prompt"]


@pytest.mark.parametrize("spec", sorted(formats.TEXT_SPECS - {"mms-tokens"}))
def test_text_specs_write_strings_that_read_back_as_the_same_completions(spec):
    prompt = [formats.Message("user", "What color is the sky?")]
    chosen = [formats.Message("assistant", "Blue.")]
    rejected = [formats.Message("assistant", "Green.")]
    written = preference.write_row(prompt, chosen, rejected, spec="openai-messages", target=spec)
    assert all(isinstance(written.row[key], str) for key in ("prompt", "chosen", "rejected"))
    read = preference.read_row(written.row, spec=spec)
    assert read.problems == []
    assert [m.content.strip() for m in read.row.chosen] == ["Blue."]
    assert [m.content.strip() for m in read.row.rejected] == ["Green."]
    assert read.row.prompt[-1].content.strip() == "What color is the sky?"


def test_harmony_pair_is_a_harmony_prompt_and_two_harmony_completions():
    prompt = [formats.Message("user", "Hi")]
    chosen = [formats.Message("assistant", "Hello")]
    rejected = [formats.Message("assistant", "Bye")]
    written = preference.write_row(
        prompt, chosen, rejected, spec="openai-messages", target="harmony"
    )
    assert written.row["prompt"].endswith("<|start|>user<|message|>Hi<|end|>")
    assert written.row["chosen"] == "<|start|>assistant<|channel|>final<|message|>Hello<|return|>"
    assert written.row["rejected"] == "<|start|>assistant<|channel|>final<|message|>Bye<|return|>"


def test_conversational_in_another_json_spec_gives_its_message_lists():
    prompt = [formats.Message("user", "Hi")]
    chosen = [formats.Message("assistant", "Hello")]
    rejected = [formats.Message("assistant", "Bye")]
    written = preference.write_row(
        prompt, chosen, rejected, spec="openai-messages", target="sharegpt"
    )
    assert written.row == {
        "prompt": [{"from": "human", "value": "Hi"}],
        "chosen": [{"from": "gpt", "value": "Hello"}],
        "rejected": [{"from": "gpt", "value": "Bye"}],
    }
    back = preference.read_row(written.row, spec="sharegpt").row
    assert [m.content for m in back.chosen] == ["Hello"]


def test_unknown_shape_is_refused():
    with pytest.raises(ValueError):
        preference.write_row([], [], [], spec="openai-messages", shape="nope")
