"""export_transcript / export_dataset: any spec, round trips, filters, constant memory."""

from __future__ import annotations

import gc
import io
import json
import tracemalloc

import pytest

from editor import formats
from editor.errors import InvalidContent
from editor.exporting import export_dataset, export_transcript
from editor.importing import import_transcripts
from editor.models import Dataset, Message, Status, Transcript
from editor.storage.create import create_transcript
from editor.storage.save import delete_transcript, save_transcript
from tests.editor.samples import conversation, demo_texts, readable_specs

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_dataset(dataset, curator):
    """One transcript per readable spec id, with a title, metadata and an external id."""
    for spec in readable_specs():
        create_transcript(
            dataset,
            text=demo_texts()[spec],
            spec=spec,
            author=curator,
            title=f"Sample {spec}",
            metadata={"spec": spec, "tags": ["demo"]},
            external_id=f"demo-{spec}",
        )
    return dataset


def export_text(dataset: Dataset, **options) -> str:
    return "".join(export_dataset(dataset, **options))


def reimport(text: str) -> Dataset:
    target = Dataset.objects.create(name="Copy", slug=f"copy-{Dataset.objects.count()}")
    import_transcripts(text.encode(), dataset=target, name="export.jsonl")
    return target


def by_id(dataset: Dataset) -> dict[str, Transcript]:
    return {t.external_id: t for t in Transcript.objects.filter(dataset=dataset).with_messages()}


def test_own_spec_round_trip_gives_the_same_transcripts(demo_dataset):
    exported = export_text(demo_dataset)
    copy = reimport(exported)

    originals, copies = by_id(demo_dataset), by_id(copy)
    assert copies.keys() == originals.keys()
    for external_id, original in originals.items():
        again = copies[external_id]
        assert again.canonical().to_dict() == original.canonical().to_dict()
        assert (again.title, again.metadata, again.spec) == (
            original.title,
            original.metadata,
            original.spec,
        )
        if original.spec in formats.TEXT_SPECS:
            assert again.source_text == original.source_text  # byte for byte
    # …and exporting the copy says exactly the same thing.
    assert export_text(copy) == exported


def test_line_shape(demo_dataset):
    lines = [json.loads(line) for line in export_text(demo_dataset).splitlines()]
    by_spec = {line["spec"]: line for line in lines}
    text_line = by_spec["openchatml-2.2"]
    assert list(text_line) == ["id", "title", "spec", "status", "metadata", "text"]
    assert text_line["text"] == demo_texts()["openchatml-2.2"]
    json_line = by_spec["openai-messages"]
    assert json_line["document"] == json.loads(demo_texts()["openai-messages"])
    assert (json_line["id"], json_line["status"]) == ("demo-openai-messages", "draft")


@pytest.mark.parametrize("spec", readable_specs())
def test_dataset_in_any_spec_reimports_as_what_it_says(demo_dataset, spec):
    export = export_dataset(demo_dataset, spec=spec)
    exported = "".join(export)
    assert export.count == len(readable_specs())

    copy = reimport(exported)

    lines = {json.loads(line)["id"]: json.loads(line) for line in exported.splitlines()}
    for external_id, again in by_id(copy).items():
        line = lines[external_id]
        body = line["text"] if "text" in line else json.dumps(line["document"])
        assert again.spec == spec
        assert again.canonical() == formats.parse(body, spec).transcript
        assert again.metadata == demo_dataset.transcripts.get(external_id=external_id).metadata
    # A fixpoint: the re-imported dataset exports to the very same lines.
    assert export_text(copy, spec=spec) == exported


def test_an_edit_the_spec_cannot_say_is_exported_as_a_loss(dataset, curator):
    transcript = create_transcript(
        dataset, text=conversation("chatml"), spec="chatml", author=curator
    )
    messages = transcript.canonical().messages
    messages[1].channel = "final"
    transcript = save_transcript(transcript, expected_version=1, author=curator, messages=messages)

    exported = export_transcript(transcript)

    assert exported.text == transcript.source_text
    assert exported.losses == [
        {"message_index": 1, "field": "channel", "detail": "not representable in chatml"}
    ]
    export = export_dataset(dataset)
    "".join(export)
    assert export.loss_count == 1
    assert export.losses[0]["transcript"] == transcript.pk


def test_messages_format_is_the_chat_dataset_shape(demo_dataset):
    rows = [json.loads(line) for line in export_text(demo_dataset, format="messages").splitlines()]
    assert len(rows) == len(readable_specs())
    for row in rows:
        # the gpt-oss system message of a Harmony source, as settings (docs/formats.md)
        assert set(row) <= {"messages", "tools", "reasoning_effort", "current_date"}
        assert all(isinstance(m["role"], str) for m in row["messages"])
    assert any("tools" in row for row in rows)


def test_status_filter_and_deleted_transcripts(dataset, curator):
    approved = create_transcript(dataset, text=conversation(), author=curator, external_id="ok")
    Transcript.objects.filter(pk=approved.pk).update(status=Status.APPROVED)
    create_transcript(dataset, text=conversation(), author=curator, external_id="draft")
    gone = create_transcript(dataset, text=conversation(), author=curator, external_id="gone")
    Transcript.objects.filter(pk=gone.pk).update(status=Status.APPROVED)
    delete_transcript(gone, author=curator, expected_version=1)

    lines = [json.loads(line) for line in export_text(dataset, statuses=["approved"]).splitlines()]

    assert [line["id"] for line in lines] == ["ok"]
    assert [json.loads(x)["id"] for x in export_text(dataset).splitlines()] == ["ok", "draft"]


def test_end_user_audience_drops_hidden_messages(dataset, curator):
    create_transcript(dataset, text=demo_texts()["harmony"], spec="harmony", author=curator)
    rows = [
        json.loads(line)
        for line in export_text(dataset, format="messages", audience="end_user").splitlines()
    ]
    roles = {m["role"] for m in rows[0]["messages"]}
    assert "system" not in roles and "developer" not in roles and "tool" not in roles
    assert all("reasoning" not in m and "reasoning_content" not in m for m in rows[0]["messages"])
    line = json.loads(export_text(dataset, spec="openchatml-2.2", audience="end_user"))
    assert "<|channel|>analysis" not in line["text"]


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"spec": "nope"}, "unknown-spec"),
        ({"statuses": ["done"]}, "invalid-request"),
        ({"format": "csv"}, "invalid-request"),
    ],
)
def test_bad_options_get_a_clear_error(dataset, options, code):
    with pytest.raises(InvalidContent) as caught:
        export_dataset(dataset, **options)
    assert caught.value.code == code


def test_export_queries_are_per_chunk(dataset, curator, django_assert_max_num_queries):
    for n in range(25):
        create_transcript(dataset, text=conversation(), author=curator, external_id=str(n))
    with django_assert_max_num_queries(2 * 3 + 1):  # a rows query and a messages query per chunk
        assert len(export_text(dataset, spec="chatml", chunk_size=10).splitlines()) == 25


def bulk_transcripts(dataset: Dataset, count: int, *, first: int = 0) -> None:
    """``count`` stored transcripts of ~1.3 KB each, written straight to the tables (fast)."""
    text = conversation(turns=1) + "<|start|>user<|message|>" + "x" * 1200 + "<|end|>\n"
    parsed = formats.parse(text, "openchatml-2.2").transcript
    batch = 5000
    for start in range(first, first + count, batch):
        rows = Transcript.objects.bulk_create(
            Transcript(
                dataset=dataset, spec="openchatml-2.2", source_text=text, external_id=f"t{n}"
            )
            for n in range(start, min(start + batch, first + count))
        )
        Message.objects.bulk_create(
            Message.from_canonical(message, index=index, transcript=row)
            for row in rows
            for index, message in enumerate(parsed.messages)
        )


def export_peak(dataset: Dataset, **options) -> tuple[int, int, int]:
    """(lines, bytes, peak traced memory) of streaming an export of ``dataset``."""
    gc.collect()
    tracemalloc.start()
    try:
        lines = written = 0
        for line in export_dataset(dataset, chunk_size=500, **options):
            written += len(line)
            lines += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return lines, written, peak


def test_export_of_20000_transcripts_streams_in_constant_memory(dataset):
    bulk_transcripts(dataset, 20_000)

    lines, written, peak = export_peak(dataset)

    assert lines == 20_000
    # Holding the lines alone would take `written` bytes (more, as str objects); the stream
    # holds about one chunk of rows.
    assert written > 25_000_000
    assert peak < 6_000_000, f"peak {peak / 1e6:.1f} MB for {written / 1e6:.1f} MB exported"


def test_converting_export_memory_does_not_grow_with_the_dataset(dataset):
    """Conversion needs the messages: they are fetched per chunk and let go of after it."""
    bulk_transcripts(dataset, 1000)
    _, _, small_peak = export_peak(dataset, spec="chatml")
    bulk_transcripts(dataset, 3000, first=1000)

    lines, written, peak = export_peak(dataset, spec="chatml")

    assert lines == 4000
    assert peak < 8_000_000
    assert peak < small_peak * 1.3 < written, (small_peak, peak, written)


def test_export_writes_to_a_file_like_object(dataset, curator):
    create_transcript(dataset, text=conversation(), author=curator)
    out = io.StringIO()
    out.writelines(export_dataset(dataset))
    assert json.loads(out.getvalue())["text"] == conversation()


# --- audit regressions -----------------------------------------------------------------------

JSON_LINES_TRANSCRIPT = (
    '{"role": "user", "content": "What is 2 + 2?"}\n'
    '{"role": "assistant", "channel": "final", "content": "4.", "end": "return"}\n'
)
BROKEN_JSON = '{"messages": [{"role": "user", "content": "hi"},]}'  # a trailing comma


def test_json_spec_texts_that_are_not_one_document_export_as_text(dataset, curator):
    # A JSON Lines transcript, and a draft imported with broken JSON: neither is one JSON
    # value, so the line carries the text, which re-imports as the same transcript.
    create_transcript(
        dataset, text=JSON_LINES_TRANSCRIPT, spec="openchatml-json", author=curator, external_id="l"
    )
    draft = create_transcript(
        dataset, text=BROKEN_JSON, spec="openai-messages", author=curator, external_id="b"
    )
    assert draft.error_count and draft.canonical().messages

    lines = [json.loads(line) for line in export_dataset(dataset)]

    assert [(line["id"], line["text"]) for line in lines] == [
        ("l", JSON_LINES_TRANSCRIPT),
        ("b", BROKEN_JSON),
    ]
    copy = by_id(reimport(export_text(dataset)))
    for original in Transcript.objects.filter(dataset=dataset).with_messages():
        again = copy[original.external_id]
        assert again.canonical().to_dict() == original.canonical().to_dict()
        assert again.source_text == original.source_text


def test_chat_rows_have_only_messages_and_tools(dataset, curator):
    create_transcript(dataset, text=BROKEN_JSON, spec="openai-messages", author=curator)
    create_transcript(
        dataset,
        text='[{"role": "user", "content": "a bare array"}]',
        spec="openai-messages",
        author=curator,
    )
    create_transcript(dataset, text=demo_texts()["openai-messages"], author=curator)
    # Its generation settings become a top-level reasoning_effort in openai-messages.
    create_transcript(dataset, text=demo_texts()["openchatml-2.2"], author=curator)

    export = export_dataset(dataset, format="messages")
    rows = [json.loads(line) for line in export]

    assert rows[0] == {"messages": [{"role": "user", "content": "hi"}]}
    assert rows[1] == {"messages": [{"role": "user", "content": "a bare array"}]}
    assert set(rows[2]) == {"messages", "tools"}
    assert set(rows[3]) <= {"messages", "tools"}
    dropped = {loss["field"] for loss in export.losses if loss["message_index"] is None}
    assert "attrs.reasoning_effort" in dropped
