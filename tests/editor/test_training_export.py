"""Chat rows with a training mask: export_dataset(format="messages", convention=…, mask=…)
(editor.exporting.training), on the hand-checked Harmony fixtures of tests/fixtures/training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.errors import InvalidContent
from editor.exporting import export_dataset
from editor.formats.tokens import tiktoken_encoding
from editor.models import DatasetTokenizer, Transcript
from editor.storage.create import create_transcript
from tests.api.conftest import api_client_for
from tests.editor.dataset_page import whole_page

pytestmark = pytest.mark.django_db

TRAINING = Path(__file__).resolve().parents[1] / "fixtures" / "training"


@pytest.fixture
def harmony_dataset(dataset, curator):
    for name in ("two-turns-with-call", "last-turn-only"):
        source = "two-turns-with-call" if name == "two-turns-with-call" else "three-turns"
        create_transcript(
            dataset,
            text=(TRAINING / f"{source}.harmony").read_text(encoding="utf-8"),
            spec="harmony",
            author=curator,
            title=name,
        )
    return dataset


def rows(dataset, **options) -> list[dict]:
    return [json.loads(line) for line in export_dataset(dataset, format="messages", **options)]


def test_weight_marks_assistant_messages_only(harmony_dataset):
    first, second = rows(harmony_dataset, convention="last_assistant_turn", mask="weight")
    assert [m.get("weight") for m in first["messages"]] == [None, None, 0, None, 0, None, 1]
    assert [m.get("weight") for m in second["messages"]] == [None, 0, None, 0, None, 1]
    assert all("weight" not in m for m in first["messages"] if m["role"] != "assistant")


def test_gpt_oss_leaves_earlier_reasoning_out_and_trains_every_answer(harmony_dataset):
    export = export_dataset(harmony_dataset, format="messages", mask="weight", convention="gpt_oss")
    first, _ = [json.loads(line) for line in export]
    assistant = [m for m in first["messages"] if m["role"] == "assistant"]
    assert [m["weight"] for m in assistant] == [1, 1, 1]
    # The earlier turn's analysis is gone, the last turn's reasoning stays.
    assert ["reasoning_content" in m for m in assistant] == [False, False, True]
    assert export.summary()["losses"]["reasoning_content"]["transcripts"] == 2


def test_default_convention_of_harmony_is_gpt_oss(harmony_dataset):
    assert rows(harmony_dataset, mask="assistant_masks") == rows(
        harmony_dataset, mask="assistant_masks", convention="gpt_oss"
    )


def test_assistant_masks_is_one_flag_per_row_message(harmony_dataset):
    first, second = rows(harmony_dataset, convention="all_assistant", mask="assistant_masks")
    assert first["assistant_masks"] == [0, 0, 1, 0, 1, 0, 1]
    assert len(second["assistant_masks"]) == len(second["messages"])
    assert all("weight" not in m for m in first["messages"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "messages", "mask": "loss"}, "Unknown mask 'loss'"),
        ({"format": "messages", "mask": "weight", "convention": "x"}, "Unknown training conv"),
        ({"format": "jsonl", "mask": "weight"}, "format=messages only"),
        ({"format": "messages", "convention": "gpt_oss"}, "Name the mask"),
        ({"format": "messages", "mask": "weight", "audience": "end_user"}, "without an audience"),
    ],
)
def test_bad_mask_options_are_refused(harmony_dataset, options, message):
    with pytest.raises(InvalidContent, match=message):
        export_dataset(harmony_dataset, **options)


# --- the options through the API, the HTML export form and the export task -----------------


def lines_of(response) -> list[dict]:
    return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]


def test_the_api_streams_masked_rows(harmony_dataset, annotator, client):
    api = api_client_for(annotator)
    url = f"/datasets/{harmony_dataset.slug}/export"
    response = api.get(url, {"format": "messages", "mask": "assistant_masks"})
    assert response.status_code == 200
    assert lines_of(response)[0]["assistant_masks"] == [0, 0, 1, 0, 1, 0, 1]
    refused = api.get(url, {"format": "jsonl", "mask": "weight"})
    assert refused.status_code == 422 and refused.json()["code"] == "invalid-request"
    unknown = api.get(url, {"format": "messages", "mask": "weight", "convention": "most"})
    assert unknown.status_code == 422


def test_a_prepared_export_keeps_the_mask_options(
    harmony_dataset, annotator, django_capture_on_commit_callbacks
):
    api = api_client_for(annotator)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/datasets/{harmony_dataset.slug}/exports",
            {"format": "messages", "mask": "weight", "convention": "last_assistant_turn"},
        )
    assert response.status_code == 202, response.content
    task = api.get(f"/exports/{response.json()['id']}").json()
    assert task["status"] == "succeeded", task["error"]
    assert task["options"]["mask"] == "weight"
    download = api.get(f"/exports/{task['id']}/download")
    first = lines_of(download)[0]
    assert [m.get("weight") for m in first["messages"]] == [None, None, 0, None, 0, None, 1]


def test_the_html_export_form_offers_and_applies_the_mask(harmony_dataset, annotator, client):
    client.force_login(annotator)
    page = whole_page(client, f"/datasets/{harmony_dataset.slug}/")
    assert 'name="mask"' in page and 'name="convention"' in page
    response = client.get(
        f"/datasets/{harmony_dataset.slug}/export/",
        {"format": "messages", "mask": "weight", "convention": "all_assistant"},
    )
    assert response.status_code == 200
    first = lines_of(response)[0]
    assert [m["weight"] for m in first["messages"] if m["role"] == "assistant"] == [1, 1, 1]
    refused = client.get(
        f"/datasets/{harmony_dataset.slug}/export/", {"format": "jsonl", "mask": "weight"}
    )
    assert refused.status_code == 400


# --- transcripts over the context length: dropped or reported, as losses -------------------


@pytest.fixture
def counted(harmony_dataset):
    """A context length of 1,000 tokens; the first transcript counted over it, the second
    within it (counts set as the token counter stores them)."""
    DatasetTokenizer.objects.create(
        dataset=harmony_dataset, kind="tiktoken", encoding="cl100k_base", context_length=1000
    )
    first, second = Transcript.objects.filter(dataset=harmony_dataset).order_by("pk")
    Transcript.objects.filter(pk=first.pk).update(token_count=1500)
    Transcript.objects.filter(pk=second.pk).update(token_count=400)
    return harmony_dataset


@pytest.mark.parametrize("format", ["messages", "jsonl"])
def test_over_context_drop_leaves_them_out_with_a_loss(counted, format):
    export = export_dataset(counted, format=format, over_context="drop")
    lines = [json.loads(line) for line in export]
    assert len(lines) == 1
    summary = export.summary()
    assert summary["losses"]["context_length"]["transcripts"] == 1
    assert "1500 tokens, over the context length of 1000: left out" in json.dumps(export.losses)


def test_over_context_report_keeps_them_with_a_loss(counted):
    export = export_dataset(counted, format="messages", mask="weight", over_context="report")
    assert len(list(export)) == 2
    assert export.summary()["losses"]["context_length"]["named"][0]["title"] == (
        "two-turns-with-call"
    )


def test_over_context_needs_a_context_length_and_a_known_choice(harmony_dataset):
    with pytest.raises(InvalidContent, match="names no context length"):
        export_dataset(harmony_dataset, format="messages", over_context="drop")
    with pytest.raises(InvalidContent, match="Unknown over_context"):
        export_dataset(harmony_dataset, format="messages", over_context="trim")


def test_over_context_through_the_api_and_the_form(counted, annotator, client):
    api = api_client_for(annotator)
    response = api.get(f"/datasets/{counted.slug}/export", {"over_context": "drop"})
    assert len(lines_of(response)) == 1
    client.force_login(annotator)
    page = whole_page(client, f"/datasets/{counted.slug}/")
    assert 'name="over_context"' in page
    html = client.get(
        f"/datasets/{counted.slug}/export/", {"format": "messages", "over_context": "drop"}
    )
    assert len(lines_of(html)) == 1


# --- mask=tokens: TRL's pre-tokenized input_ids with per-token assistant_masks -------------


def test_token_masks_under_the_datasets_tokenizer(harmony_dataset):
    DatasetTokenizer.objects.create(
        dataset=harmony_dataset, kind="tiktoken", encoding="cl100k_base"
    )
    first, _ = rows(harmony_dataset, mask="tokens", convention="last_assistant_turn")
    cl100k = tiktoken_encoding("cl100k_base")
    text = (TRAINING / "two-turns-with-call.harmony").read_text(encoding="utf-8")
    assert first["input_ids"] == cl100k.encode(text)
    assert len(first["assistant_masks"]) == len(first["input_ids"])
    trained = cl100k.encoding.decode(
        [t for t, f in zip(first["input_ids"], first["assistant_masks"], strict=True) if f]
    )
    assert "12 °C in Rome.<|return|>" in trained and "Oslo" not in trained


def test_token_masks_need_the_datasets_tokenizer(harmony_dataset):
    with pytest.raises(InvalidContent, match="needs the dataset's tokenizer"):
        export_dataset(harmony_dataset, format="messages", mask="tokens")


def test_a_json_spec_transcript_has_no_token_mask_and_says_so(dataset, curator):
    DatasetTokenizer.objects.create(dataset=dataset, kind="tiktoken", encoding="cl100k_base")
    create_transcript(
        dataset,
        text='{"messages": [{"role": "user", "content": "hi"}, '
        '{"role": "assistant", "content": "hello"}]}',
        spec="openai-messages",
        author=curator,
        title="json",
    )
    export = export_dataset(dataset, format="messages", mask="tokens")
    (row,) = [json.loads(line) for line in export]
    assert "input_ids" not in row
    assert "not a text spec" in json.dumps(export.losses)


def test_masked_rows_load_with_hugging_face_datasets(harmony_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    import datasets

    DatasetTokenizer.objects.create(
        dataset=harmony_dataset, kind="tiktoken", encoding="cl100k_base"
    )
    for mask in ("weight", "assistant_masks", "tokens"):
        path = tmp_path / f"{mask}.jsonl"
        path.write_text("".join(export_dataset(harmony_dataset, format="messages", mask=mask)))
        loaded = datasets.load_dataset(
            "json", data_files=str(path), split="train", cache_dir=str(tmp_path / mask)
        )
        assert loaded.num_rows == 2 and "messages" in loaded.column_names
        if mask == "weight":
            weights = [m["weight"] for m in loaded[0]["messages"] if m["role"] == "assistant"]
            assert weights == [1, 1, 1]
        else:
            assert "assistant_masks" in loaded.column_names
        if mask == "tokens":
            assert len(loaded[0]["input_ids"]) == len(loaded[0]["assistant_masks"])
