"""Preference data through the import path and the ``preference`` export: TRL and HH files
become transcripts with alternatives and imported pairs; exporting them gives the same rows
back, by source, with what was left out counted and the messages in any spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from editor import editing, filestore, formats
from editor.errors import ImportRejected, InvalidContent, NotAllowed
from editor.exporting import export_dataset
from editor.exporting.tasks import run_export_task, start_export_task
from editor.importing import import_transcripts
from editor.models import Alternative, PreferencePair, Transcript
from editor.pairs import exclude_pair
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.editor.samples import demo_texts

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[1] / "preference_fixtures" / "valid"
TRL_ROWS = [
    {
        "prompt": [{"role": "user", "content": f"Question {n}?"}],
        "chosen": [{"role": "assistant", "content": f"Good answer {n}."}],
        "rejected": [{"role": "assistant", "content": f"Bad answer {n}."}],
    }
    for n in range(3)
]
HH_ROWS = [
    {
        "chosen": "\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: How are you?\n\nAssistant: Well.",
        "rejected": "\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: How are you?\n\nAssistant: Go.",
    },
    {"chosen": "\n\nHuman: 2+2?\n\nAssistant: 4", "rejected": "\n\nHuman: 2+2?\n\nAssistant: 5"},
]


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def exported(dataset, **options) -> list[dict]:
    return [json.loads(line) for line in export_dataset(dataset, format="preference", **options)]


def without_provenance(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "provenance"} for row in rows]


def test_a_trl_file_becomes_transcripts_alternatives_and_imported_pairs(dataset, curator):
    report = import_transcripts(
        jsonl(TRL_ROWS), dataset=dataset, author=curator, name="pairs.jsonl"
    )
    assert report.counts["created"] == 3
    transcript = Transcript.objects.get(dataset=dataset, title="Question 0?")
    assert transcript.spec == "openai-messages"
    assert [m.content for m in transcript.canonical().messages] == ["Question 0?", "Good answer 0."]
    alternatives = Alternative.objects.filter(transcript=transcript).order_by("pk")
    assert [(a.message_index, a.source, a.messages[0]["content"]) for a in alternatives] == [
        (1, "transcript", "Good answer 0."),
        (1, "import", "Bad answer 0."),
    ]
    pair = PreferencePair.objects.get(transcript=transcript)
    assert (pair.source, pair.message_index, pair.author) == ("import", 1, curator)
    assert pair.prompt == [{"role": "user", "content": "Question 0?", "end": "end"}]


def test_trl_conversational_round_trip_gives_the_same_rows(dataset, curator):
    import_transcripts(jsonl(TRL_ROWS), dataset=dataset, author=curator, name="pairs.jsonl")
    rows = exported(dataset, sources=["import"])
    assert without_provenance(rows) == TRL_ROWS
    assert {row["provenance"]["source"] for row in rows} == {"import"}


def test_trl_rows_with_tools_round_trip(dataset, curator):
    case = json.loads((FIXTURES / "trl_conversational_tools.json").read_text())
    import_transcripts(jsonl([case["row"]]), dataset=dataset, author=curator, name="t.jsonl")
    (row,) = exported(dataset)
    assert row["tools"] == case["row"]["tools"]
    assert row["chosen"][0]["tool_calls"] == case["row"]["chosen"][0]["tool_calls"]
    assert row["prompt"] == case["row"]["prompt"]
    assert row["rejected"] == case["row"]["rejected"]


def test_hh_round_trip_gives_the_same_text(dataset, curator):
    import_transcripts(jsonl(HH_ROWS), dataset=dataset, author=curator, name="hh.jsonl")
    rows = exported(dataset, preference_shape="hh")
    assert without_provenance(rows) == HH_ROWS
    first = Transcript.objects.filter(dataset=dataset).order_by("pk").first()
    pair = PreferencePair.objects.get(transcript=first)
    assert pair.message_index == 3  # the shared Human/Assistant/Human turns are the prompt


def test_a_json_array_of_rows_is_recognised_too(dataset, curator):
    data = json.dumps(TRL_ROWS).encode()
    report = import_transcripts(data, dataset=dataset, author=curator, name="pairs.json")
    assert report.counts["created"] == 3
    assert PreferencePair.objects.filter(transcript__dataset=dataset).count() == 3


def test_shape_hh_reads_rows_explicitly_and_shape_transcripts_never(dataset, curator):
    report = import_transcripts(
        jsonl(HH_ROWS[1:]), dataset=dataset, author=curator, name="x.jsonl", shape="hh"
    )
    assert report.counts["created"] == 1
    with pytest.raises(ImportRejected):  # read as transcript envelopes: no body, no spec
        import_transcripts(
            jsonl(TRL_ROWS), dataset=dataset, author=curator, name="x.jsonl", shape="transcripts"
        )
    with pytest.raises(InvalidContent):
        import_transcripts(jsonl(TRL_ROWS), dataset=dataset, author=curator, shape="nope")


def test_a_bad_row_fails_the_import_with_its_code_and_line(dataset, curator):
    rows = [TRL_ROWS[0], {"prompt": "Hi", "chosen": "Hello"}]
    with pytest.raises(ImportRejected) as rejected:
        import_transcripts(jsonl(rows), dataset=dataset, author=curator, name="bad.jsonl")
    failed = [item for item in rejected.value.report.items if item.code]
    assert [(item.location, item.code) for item in failed] == [
        ("bad.jsonl:2", "invalid-preference-row")
    ]
    assert "E-PREF-MISSING" in failed[0].message
    assert not PreferencePair.objects.exists() and not Transcript.objects.exists()


def test_partial_import_keeps_the_good_rows(dataset, curator):
    rows = [TRL_ROWS[0], {"chosen": 3, "rejected": "x"}, TRL_ROWS[1]]
    report = import_transcripts(
        jsonl(rows), dataset=dataset, author=curator, name="p.jsonl", partial=True
    )
    assert (report.counts["created"], report.failed) == (2, 1)
    assert PreferencePair.objects.count() == 2


@pytest.fixture
def mixed(dataset, curator, annotator):
    """Two imported pairs (one then excluded) and one pair from an edit."""
    import_transcripts(jsonl(TRL_ROWS[:2]), dataset=dataset, author=curator, name="p.jsonl")
    exclude_pair(PreferencePair.objects.order_by("pk").last(), curator)
    transcript = create_transcript(
        dataset,
        author=annotator,
        spec="openai-messages",
        text=json.dumps(
            [{"role": "user", "content": "Edit me?"}, {"role": "assistant", "content": "Old."}]
        ),
    )
    save_transcript(
        transcript,
        expected_version=transcript.version,
        author=annotator,
        text=json.dumps(
            [{"role": "user", "content": "Edit me?"}, {"role": "assistant", "content": "New."}]
        ),
        spec="openai-messages",
    )
    return transcript


def test_sources_choose_the_pairs_and_left_out_pairs_are_counted(dataset, mixed):
    export = export_dataset(dataset, format="preference", sources=["edit"])
    rows = [json.loads(line) for line in export]
    assert [(r["chosen"][0]["content"], r["rejected"][0]["content"]) for r in rows] == [
        ("New.", "Old.")
    ]
    assert rows[0]["provenance"]["source"] == "edit"
    assert export.summary()["left_out"]["excluded"] == 0
    both = export_dataset(dataset, format="preference", sources=["edit", "import"])
    lines = list(both.with_summary_line())
    summary = json.loads(lines[-1])["summary"]
    assert summary["pairs"] == 2 and summary["left_out"]["excluded"] == 1
    assert {json.loads(line)["provenance"]["source"] for line in lines[:-1]} == {"edit", "import"}


def test_the_messages_inside_follow_the_spec(dataset, curator):
    import_transcripts(jsonl(TRL_ROWS[:1]), dataset=dataset, author=curator, name="p.jsonl")
    (harmony,) = exported(dataset, spec="harmony")
    assert (
        harmony["chosen"] == "<|start|>assistant<|channel|>final<|message|>Good answer 0.<|return|>"
    )
    assert harmony["prompt"].endswith("<|start|>user<|message|>Question 0?<|end|>")
    (sharegpt,) = exported(dataset, spec="sharegpt")
    assert sharegpt["chosen"] == [{"from": "gpt", "value": "Good answer 0."}]
    (standard,) = exported(dataset, preference_shape="standard")
    assert without_provenance([standard]) == [
        {"prompt": "Question 0?", "chosen": "Good answer 0.", "rejected": "Bad answer 0."}
    ]
    (chatml,) = exported(dataset, preference_shape="standard", spec="chatml")
    back = formats.parse(chatml["prompt"] + chatml["rejected"], "chatml").transcript
    assert [m.content for m in back.messages] == ["Question 0?", "Bad answer 0."]


def test_bad_preference_options_are_refused(dataset):
    for options in (
        {"preference_shape": "nope"},
        {"preference_shape": "hh", "spec": "chatml"},
        {"preference_shape": "standard", "spec": "sharegpt"},
        {"sources": ["gossip"]},
        {"sources": []},
        {"audience": "end_user"},
        {"with_annotations": True},
    ):
        with pytest.raises(InvalidContent):
            export_dataset(dataset, format="preference", **options)


def test_a_prepared_preference_export_records_pairs_and_left_out(
    dataset, mixed, curator, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        task = start_export_task(dataset, curator, format="preference", sources=["import"])
    done = run_export_task(task.pk)
    assert done.status == "succeeded" and done.file_name.endswith("-preference.jsonl")
    assert done.losses["pairs"] == 1 and done.losses["left_out"]["excluded"] == 1
    stored = Path(filestore.exports().path(done.file_path))
    rows = [json.loads(line) for line in stored.read_text().splitlines()]
    assert [r["chosen"][0]["content"] for r in rows] == ["Good answer 0."]


def test_viewers_may_not_export_pairs(dataset, viewer):
    with pytest.raises(NotAllowed):
        start_export_task(dataset, viewer, format="preference")


def test_the_import_command_takes_a_shape(dataset, tmp_path):
    path = tmp_path / "hh.jsonl"
    path.write_bytes(jsonl(HH_ROWS))
    call_command("import_transcripts", str(path), dataset=dataset.slug, shape="hh")
    assert PreferencePair.objects.filter(transcript__dataset=dataset).count() == 2


def test_the_export_command_writes_pairs_and_says_what_was_left_out(dataset, mixed, capsys):
    call_command(
        "export_dataset",
        dataset.slug,
        format="preference",
        sources=["import"],
        preference_shape="standard",
    )
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["chosen"] for row in rows] == ["Good answer 0."]
    assert "1 pair(s) exported; left out: 1 excluded." in err


def test_a_harmony_correction_exports_in_any_spec_with_its_tools(dataset, annotator):
    weather = create_transcript(
        dataset, text=demo_texts()["openchatml-2.2"], spec="openchatml-2.2", author=annotator
    )
    final = len(weather.canonical().messages) - 1
    editing.edit_message(
        weather, final, {"content": "It is 20 °C."}, expected_version=1, author=annotator
    )
    (chat,) = exported(dataset)
    assert chat["chosen"][-1] == {"role": "assistant", "content": "It is 20 °C."}
    assert chat["rejected"][-1]["role"] == "assistant"
    assert [tool["function"]["name"] for tool in chat["tools"]] == ["get_current_weather"]
    assert chat["provenance"]["spec"] == "openchatml-2.2"
    (harmony,) = exported(dataset, spec="harmony")
    assert (
        harmony["chosen"] == "<|start|>assistant<|channel|>final<|message|>It is 20 °C.<|return|>"
    )
    whole = formats.parse(harmony["prompt"] + harmony["chosen"], "harmony").transcript
    assert whole.messages[-1].content == "It is 20 °C."
    (own,) = exported(dataset, spec="openchatml-2.2", preference_shape="standard")
    assert own["chosen"] == "<|start|>assistant<|channel|>final<|message|>It is 20 °C.<|return|>\n"
    again = formats.parse(own["prompt"] + own["chosen"], "openchatml-2.2").transcript
    assert len(again.messages) == final + 1 and again.messages[-1].content == "It is 20 °C."
