"""Exports written as Parquet (editor/exporting/parquet.py): streamed in row groups, typed
columns, and every export shape loads with Hugging Face ``datasets`` with the columns TRL's
trainers read (``messages``; ``prompt`` / ``chosen`` / ``rejected``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from editor import filestore
from editor.errors import ImportRejected, InvalidContent
from editor.exporting import export_dataset
from editor.exporting.parquet import MESSAGES, ParquetRows, write_parquet
from editor.exporting.tasks import run_export_task, start_export_task
from editor.importing import import_transcripts
from editor.models import Dataset, PreferencePair
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

PAIRS = [
    {
        "prompt": [{"role": "user", "content": f"Pair question {n}?"}],
        "chosen": [{"role": "assistant", "content": f"Good {n}."}],
        "rejected": [{"role": "assistant", "content": f"Bad {n}."}],
    }
    for n in range(5)
]
WITH_TOOLS = {
    "prompt": [{"role": "user", "content": "Weather in Paris?"}],
    "chosen": [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        }
    ],
    "rejected": [{"role": "assistant", "content": "No idea."}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
}


def test_rows_are_written_in_row_groups_of_the_size_asked(tmp_path):
    path = tmp_path / "rows.parquet"
    rows = [{"messages": [{"role": "user", "content": str(n)}], "n": n} for n in range(25)]
    writer = write_parquet(iter(rows), path, row_group_rows=10)
    meta = pq.ParquetFile(path).metadata
    assert (writer.count, meta.num_rows, meta.num_row_groups) == (25, 25, 3)
    table = pq.read_table(path)
    assert table.schema.field("messages").type == MESSAGES
    assert table.column("n").to_pylist() == list(range(25))


def test_what_the_columns_cannot_hold_is_counted_never_a_crash(tmp_path):
    path = tmp_path / "rows.parquet"
    rows = [
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}], "odd": 1}]},
        {"messages": [], "late": "x"},
        {"messages": None, "mask": None},
    ]
    with ParquetRows(path, row_group_rows=1) as out:
        for row in rows:
            out.write(row)
    assert out.losses == {
        "messages.odd: not a field of a Parquet message": 1,
        "late: not a column (first seen after the first rows)": 1,
        "mask: not a column (first seen after the first rows)": 1,
    }
    first = pq.read_table(path).column("messages").to_pylist()[0][0]
    assert json.loads(first["content"]) == [{"type": "text", "text": "hi"}]


def test_masks_are_integer_lists(tmp_path):
    path = tmp_path / "m.parquet"
    write_parquet([{"assistant_masks": []}, {"assistant_masks": [False, True, True]}], path)
    assert pq.read_table(path).column("assistant_masks").to_pylist() == [[], [0, 1, 1]]


def test_an_empty_export_is_a_valid_file(tmp_path):
    path = tmp_path / "empty.parquet"
    write_parquet([], path)
    assert pq.ParquetFile(path).metadata.num_rows == 0


@pytest.fixture
def stored(dataset, curator):
    for n in range(3):
        create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"T{n}"
        )
    data = "".join(json.dumps(row) + "\n" for row in [*PAIRS, WITH_TOOLS]).encode()
    import_transcripts(data, dataset=dataset, author=curator, name="pairs.jsonl")


def prepared(dataset, user, **options) -> Path:
    task = start_export_task(dataset, user, file_format="parquet", **options)
    done = run_export_task(task.pk)
    assert done.status == "succeeded", done.error
    assert done.file_name.endswith(".parquet") and done.file_path.endswith(".parquet")
    return Path(filestore.exports().path(done.file_path))


def jsonl_file(dataset, tmp_path, **options) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(export_dataset(dataset, **options)), encoding="utf-8")
    return path


def loaded(kind: str, path: Path):
    return load_dataset(
        kind, data_files=str(path), split="train", cache_dir=str(path.parent / "hf")
    )


def test_every_export_shape_loads_with_datasets_as_parquet_and_json(
    dataset, curator, stored, tmp_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        messages = prepared(dataset, curator, format="messages")
        pairs = prepared(dataset, curator, format="preference", sources=["import"])
        lines = prepared(dataset, curator, format="jsonl")
    for kind, path in (
        ("parquet", messages),
        ("json", jsonl_file(dataset, tmp_path, format="messages")),
    ):
        rows = loaded(kind, path)
        assert "messages" in rows.column_names and len(rows) == 9, kind
        chat = next(r for r in rows if r["messages"][0]["content"] == "Pair question 0?")
        chat = chat["messages"]
        assert [(m["role"], m["content"]) for m in chat] == [
            ("user", "Pair question 0?"),
            ("assistant", "Good 0."),
        ]
    for kind, path in (
        ("parquet", pairs),
        ("json", jsonl_file(dataset, tmp_path, format="preference", sources=["import"])),
    ):
        rows = loaded(kind, path)
        assert {"prompt", "chosen", "rejected"} <= set(rows.column_names), kind
        assert len(rows) == 6
        first = rows[0]
        assert first["prompt"][0]["role"] == "user"
        assert first["chosen"][0]["content"] == "Good 0."
        assert first["rejected"][0]["content"] == "Bad 0."
        call = rows[5]["chosen"][0]["tool_calls"][0]["function"]
        assert call == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    table = pq.read_table(pairs)
    assert json.loads(table.column("tools").to_pylist()[5]) == WITH_TOOLS["tools"]
    assert json.loads(table.column("provenance").to_pylist()[0])["source"] == "import"
    transcripts = loaded("parquet", lines)
    assert len(transcripts) == 9 and {"id", "title", "spec", "text"} <= set(
        transcripts.column_names
    )


def test_an_unknown_file_format_is_refused(dataset, curator):
    with pytest.raises(InvalidContent):
        start_export_task(dataset, curator, file_format="xlsx")


def test_parquet_files_import_back_as_the_same_pairs_and_chats(
    dataset, curator, stored, tmp_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        pairs = prepared(dataset, curator, format="preference", sources=["import"])
        chats = prepared(dataset, curator, format="messages")
    copy = Dataset.objects.create(name="Copy", slug="copy")
    report = import_transcripts(pairs, dataset=copy, author=None)
    assert report.counts["created"] == 6
    again = [json.loads(line) for line in export_dataset(copy, format="preference")]
    assert [{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in again[:5]] == PAIRS
    assert again[5]["tools"] == WITH_TOOLS["tools"]
    assert again[5]["chosen"] == WITH_TOOLS["chosen"]
    chat_copy = Dataset.objects.create(name="Chats", slug="chats")
    report = import_transcripts(chats, dataset=chat_copy, author=None)
    assert report.counts["created"] == 9
    assert not PreferencePair.objects.filter(transcript__dataset=chat_copy).exists()


def test_a_broken_parquet_file_is_a_failed_item(dataset, curator, tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 20)
    with pytest.raises(ImportRejected) as rejected:
        import_transcripts(path, dataset=dataset, author=curator)
    assert [item.code for item in rejected.value.report.items] == ["bad-parquet"]


@pytest.mark.parametrize("mask", ["weight", "assistant_masks"])
def test_chat_rows_with_a_training_mask_load_as_parquet_and_json(dataset, stored, tmp_path, mask):
    options = {"format": "messages", "convention": "all_assistant", "mask": mask}
    written = [json.loads(line) for line in export_dataset(dataset, **options)]
    path = tmp_path / "masked.parquet"
    writer = write_parquet(iter(written), path)
    assert writer.losses == {}
    for kind, source in (("parquet", path), ("json", jsonl_file(dataset, tmp_path, **options))):
        rows = loaded(kind, source)
        assert len(rows) == len(written) == 9, kind
        for row, expected in zip(rows, written, strict=True):
            roles = [m["role"] for m in row["messages"]]
            assert roles == [m["role"] for m in expected["messages"]]
            if mask == "weight":
                weights = [m.get("weight") for m in row["messages"]]
                assert weights == [m.get("weight") for m in expected["messages"]]
                assert {w for w, r in zip(weights, roles, strict=True) if r == "assistant"} <= {
                    0,
                    1,
                }
            else:
                assert row["assistant_masks"] == [int(v) for v in expected["assistant_masks"]]
                assert len(row["assistant_masks"]) == len(roles)
