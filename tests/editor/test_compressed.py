"""Transcripts' source text and revisions' snapshots stored compressed (editor.db.compressed,
migrations 0017 and 0023)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from hypothesis import given
from hypothesis import strategies as st

from editor.db.compressed import MIN_COMPRESSED_LENGTH, ZSTD_MAGIC, pack, unpack, unpack_prefix
from editor.models import Revision, Transcript
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.editor.samples import conversation

# Backslashes (which PostgreSQL's text-to-bytea cast would read as escapes), non-ASCII and a
# line long enough to be compressed.
AWKWARD = "<|start|>user<|message|>C:\\x41\\\\n \\000 naïve 日本語 " + "tides " * 40 + "<|end|>\n"


def stored_bytes(transcript: Transcript) -> bytes:
    with connection.cursor() as cursor:
        cursor.execute("SELECT source_text FROM editor_transcript WHERE id = %s", [transcript.pk])
        (value,) = cursor.fetchone()
    return value if isinstance(value, str) else bytes(value)


@given(st.text())
def test_every_text_comes_back(text):
    assert unpack(pack(text)) == text


@given(st.text(), st.integers(min_value=0, max_value=300), st.integers(min_value=1, max_value=30))
def test_a_prefix_is_the_start_of_the_text(text, characters, repeat):
    """A frame or plain UTF-8, characters of one to four bytes cut anywhere: at least the
    characters asked for (all of a shorter text), and only the text's own."""
    text *= repeat
    prefix = unpack_prefix(pack(text), characters)
    assert text.startswith(prefix)
    assert len(prefix) >= min(characters, len(text))


def test_a_long_text_is_a_smaller_frame_and_a_short_one_its_utf8():
    long = conversation(turns=20)
    assert pack(long).startswith(ZSTD_MAGIC)
    assert len(pack(long)) < len(long.encode()) / 3
    short = "é" * (MIN_COMPRESSED_LENGTH // 4)
    assert pack(short) == short.encode()
    assert pack("") == b""


def test_a_value_written_as_text_reads_back_as_it_is():
    # SQLite keeps a TEXT value in a BLOB column: what a table held before migration 0017.
    assert unpack("<|start|>user<|message|>hi<|end|>") == "<|start|>user<|message|>hi<|end|>"


@pytest.mark.django_db
def test_the_database_holds_the_frame_and_the_model_the_text(dataset, annotator):
    transcript = create_transcript(dataset, author=annotator, text=AWKWARD)
    assert stored_bytes(transcript).startswith(ZSTD_MAGIC)
    assert len(stored_bytes(transcript)) < len(AWKWARD.encode())
    assert Transcript.objects.get(pk=transcript.pk).source_text == AWKWARD
    assert Transcript.objects.values_list("source_text", flat=True).get(pk=transcript.pk) == (
        AWKWARD
    )
    edited = AWKWARD.replace("tides", "waves")
    save_transcript(transcript, expected_version=1, author=annotator, text=edited)
    assert Transcript.objects.get(pk=transcript.pk).source_text == edited


@pytest.mark.django_db(transaction=True)
def test_the_migration_compresses_existing_texts_and_back(dataset, annotator):
    texts = [AWKWARD, "", conversation(turns=1), AWKWARD * 3]
    transcripts = [
        create_transcript(dataset, author=annotator, text=t, spec="openchatml-2.2") for t in texts
    ]
    executor = MigrationExecutor(connection)
    executor.migrate([("editor", "0016_dataset_edits")])
    for transcript, text in zip(transcripts, texts, strict=True):
        assert stored_bytes(transcript) in (text, text.encode())  # plain text again
    executor.loader.build_graph()
    executor.migrate([("editor", "0017_compressed_source_text")])
    for transcript, text in zip(transcripts, texts, strict=True):
        assert stored_bytes(transcript) == pack(text)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    for transcript, text in zip(transcripts, texts, strict=True):
        assert Transcript.objects.get(pk=transcript.pk).source_text == text


def stored_snapshot_bytes(revision: Revision) -> bytes:
    with connection.cursor() as cursor:
        cursor.execute("SELECT snapshot FROM editor_revision WHERE id = %s", [revision.pk])
        (value,) = cursor.fetchone()
    return bytes(value)


@pytest.mark.django_db
def test_an_older_revision_holds_its_state_compressed(dataset, annotator):
    text = conversation(turns=20)
    transcript = create_transcript(dataset, author=annotator, text=text, spec="openchatml-2.2")
    save_transcript(transcript, expected_version=1, author=annotator, text=text + "\n")
    first, newest = Revision.objects.filter(transcript=transcript).order_by("number")
    stored = stored_snapshot_bytes(first)
    assert stored.startswith(ZSTD_MAGIC)
    assert len(stored) < len(text.encode()) / 3
    assert first.snapshot["source_text"] == text
    assert first.full_snapshot["source_text"] == text
    # The newest one's marker, as its JSON: too short to be worth a frame.
    assert stored_snapshot_bytes(newest) == b'{"current":true}'
    assert newest.snapshot == Revision.CURRENT


@pytest.mark.django_db(transaction=True)
def test_the_migration_compresses_existing_snapshots_and_back(dataset, annotator):
    text = AWKWARD * 3
    transcript = create_transcript(dataset, author=annotator, text=text, spec="openchatml-2.2")
    transcript = save_transcript(transcript, expected_version=1, author=annotator, text=AWKWARD)
    before = [r.full_snapshot for r in Revision.objects.order_by("number")]
    executor = MigrationExecutor(connection)
    executor.migrate([("editor", "0022_compact_json")])
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert [r.full_snapshot for r in Revision.objects.order_by("number")] == before
    # The newest revision's marker is found again: the next save stores its copy.
    save_transcript(transcript, expected_version=2, author=annotator, text=text)
    snapshots = [r.full_snapshot["source_text"] for r in Revision.objects.order_by("number")]
    assert snapshots == [text, AWKWARD, text]
