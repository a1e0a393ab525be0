"""A dataset exported as chat rows (`format=messages`) loads with Hugging Face `datasets`
(`load_dataset("json", data_files=…)`, the real package) and keeps tool calls, tool replies
and reasoning in the fields TRL and the OpenAI fine-tuning format read."""

from __future__ import annotations

import importlib
import json

import pytest

from editor.exporting import export_dataset
from editor.models import Dataset
from editor.storage.create import create_transcript
from tests.editor.samples import conversation, demo_texts, readable_specs

pytestmark = pytest.mark.django_db

WEATHER_QUESTION = "What is the weather like in SF?"  # Harmony's sample: a call and reasoning


@pytest.fixture
def hf_datasets(monkeypatch, tmp_path):
    """The `datasets` package, offline (nothing to fetch for the packaged json builder) and
    caching under the test's own directory."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    return importlib.import_module("datasets")


@pytest.fixture
def every_spec(dataset: Dataset, curator) -> Dataset:
    """The demo sample of every readable spec (Harmony's has a tool call and reasoning),
    and a plain conversation without tools."""
    for spec in readable_specs():
        create_transcript(
            dataset, text=demo_texts()[spec], spec=spec, author=curator, title=f"Sample {spec}"
        )
    create_transcript(dataset, text=conversation(), author=curator, title="Plain")
    return dataset


def load(hf_datasets, dataset, tmp_path, **options):
    path = tmp_path / "rows.jsonl"
    with path.open("w", encoding="utf-8") as out:
        out.writelines(export_dataset(dataset, format="messages", **options))
    loaded = hf_datasets.load_dataset(
        "json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache")
    )
    return loaded, [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_every_row_loads_as_written(hf_datasets, every_spec, tmp_path):
    loaded, written = load(hf_datasets, every_spec, tmp_path)
    assert loaded.num_rows == len(written) == every_spec.transcripts.count()
    assert "messages" in loaded.column_names
    for row, line in zip(loaded, written, strict=True):
        assert [m["role"] for m in row["messages"]] == [m["role"] for m in line["messages"]]
        assert [m["content"] for m in row["messages"]] == [m["content"] for m in line["messages"]]


def test_tool_calls_replies_and_reasoning_keep_their_training_fields(
    hf_datasets, every_spec, tmp_path
):
    loaded, _ = load(hf_datasets, every_spec, tmp_path)
    harmony = next(row for row in loaded if row["messages"][1]["content"] == WEATHER_QUESTION)
    call_message = next(m for m in harmony["messages"] if m.get("tool_calls"))
    call = call_message["tool_calls"][0]
    assert call_message["role"] == "assistant"
    assert call["type"] == "function"
    assert call["function"]["name"] == "get_current_weather"
    assert json.loads(call["function"]["arguments"]) == {"location": "San Francisco, CA"}
    reply = next(m for m in harmony["messages"] if m["role"] == "tool")
    assert reply["tool_call_id"] == call["id"]
    assert json.loads(reply["content"])["sunny"] is True
    assert call_message["reasoning_content"] == "Need to use function get_current_weather."
    tool_names = [tool["function"]["name"] for tool in harmony["tools"]]
    assert tool_names == ["get_location", "get_current_weather"]
    # A row without tools has none, not an empty or made-up list.
    plain = next(row for row in loaded if row["messages"][0]["content"] == "Question 0?")
    assert plain.get("tools") is None
    assert all(m.get("tool_calls") is None for m in plain["messages"])


def test_what_the_end_user_sees_loads_without_reasoning(hf_datasets, every_spec, tmp_path):
    loaded, _ = load(hf_datasets, every_spec, tmp_path, audience="end_user")
    assert loaded.num_rows == every_spec.transcripts.count()
    for row in loaded:
        for message in row["messages"]:
            assert not message.get("reasoning_content")
