"""Transcript.message_count: a stored column kept right by every write, read by lists."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from editor.importing import import_transcripts
from editor.models import Transcript
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.editor.samples import conversation
from tests.editor.test_importing import envelope, jsonl

pytestmark = pytest.mark.django_db


def stored_count(transcript: Transcript) -> int:
    return Transcript.objects.values_list("message_count", flat=True).get(pk=transcript.pk)


def test_create_and_save_keep_the_count(dataset, annotator):
    transcript = create_transcript(dataset, author=annotator, text=conversation(turns=2))
    assert stored_count(transcript) == 4
    transcript = save_transcript(
        transcript,
        expected_version=transcript.version,
        author=annotator,
        text=conversation(turns=3),
    )
    assert stored_count(transcript) == 6
    messages = transcript.canonical().messages[:1]
    save_transcript(
        transcript, expected_version=transcript.version, author=annotator, messages=messages
    )
    assert stored_count(transcript) == 1


def test_the_importer_keeps_the_count_on_create_and_update(dataset, curator):
    import_transcripts(jsonl(envelope("a")), dataset=dataset, name="x.jsonl")
    assert Transcript.objects.get(external_id="a").message_count == 4
    changed = jsonl(envelope("a", conversation(turns=5)))
    import_transcripts(changed, dataset=dataset, author=curator, name="x.jsonl")
    assert Transcript.objects.get(external_id="a").message_count == 10


def test_a_list_reads_no_content_and_no_message_rows(dataset, annotator):
    create_transcript(dataset, author=annotator, text=conversation(turns=50))
    with CaptureQueriesContext(connection) as queries:
        [row] = Transcript.objects.filter(dataset=dataset).summaries()
        assert row.message_count == 100
    [query] = queries.captured_queries
    sql = query["sql"]
    for column in ("source_text", "diagnostics", "header", "metadata", "editor_message"):
        assert column not in sql, sql


@pytest.mark.django_db(transaction=True)
def test_the_migration_counts_the_messages_of_existing_transcripts(dataset, annotator):
    transcript = create_transcript(dataset, author=annotator, text=conversation(turns=3))
    Transcript.objects.filter(pk=transcript.pk).update(message_count=0)
    executor = MigrationExecutor(connection)
    executor.migrate([("editor", "0006_labels_annotations")])
    executor.loader.build_graph()
    executor.migrate([("editor", "0007_transcript_message_count")])
    assert stored_count(transcript) == 6
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # later migrations, if any
