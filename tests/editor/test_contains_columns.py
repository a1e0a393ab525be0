"""Transcript.has_tool_calls / has_analysis / has_system_prompt: kept by editor.storage with
the messages it writes, filled by migration 0019 for the transcripts that existed, and what
the list filter ``contains`` reads (``models.CONTAINS_COLUMNS``)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from editor.models import CONTAINS_COLUMNS, Transcript, TranscriptFilter
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript

COLUMNS = [column for column, _ in CONTAINS_COLUMNS.values()]
USER = {"role": "user", "content": "Hi"}

# (a message besides a user's, the columns it makes true)
CASES = [
    ({"role": "assistant", "content": "Hello"}, set()),
    ({"role": "assistant", "content": "{}", "end": "call"}, {"has_tool_calls"}),
    ({"role": "assistant", "content": "{}", "recipient": "functions.lookup"}, {"has_tool_calls"}),
    ({"role": "assistant", "content": "{}", "recipient": "browser.search"}, {"has_tool_calls"}),
    # Addressed to a participant, not a tool.
    ({"role": "assistant", "content": "Hi", "recipient": "user"}, set()),
    ({"role": "assistant", "content": "Hi", "recipient": "all"}, set()),
    # Only the assistant calls.
    ({"role": "user", "content": "{}", "end": "call"}, set()),
    ({"role": "assistant", "content": "Hmm", "channel": "analysis"}, {"has_analysis"}),
    ({"role": "assistant", "content": "Hmm", "channel": "commentary"}, set()),
    ({"role": "system", "content": "Be brief."}, {"has_system_prompt"}),
    ({"role": "developer", "content": "Be brief."}, {"has_system_prompt"}),
    ({"role": "platform", "content": "Be brief."}, {"has_system_prompt"}),
    ({"role": "system:moderation", "content": "Be brief."}, {"has_system_prompt"}),
    # Roles are compared exactly, on SQLite as on PostgreSQL.
    ({"role": "System:moderation", "content": "Be brief."}, set()),
    ({"role": "systems", "content": "Be brief."}, set()),
]


def canonical(*messages: dict) -> dict:
    return {"spec": "openchatml-2.2", "messages": [USER, *messages]}


def stored_columns(transcript: Transcript) -> set[str]:
    row = Transcript.objects.values(*COLUMNS).get(pk=transcript.pk)
    return {column for column in COLUMNS if row[column]}


@pytest.mark.django_db
@pytest.mark.parametrize(("message", "columns"), CASES)
def test_a_created_transcript_says_what_its_messages_are(dataset, annotator, message, columns):
    transcript = create_transcript(dataset, author=annotator, canonical=canonical(message))
    assert stored_columns(transcript) == columns
    wanted = {kind for kind, (column, _) in CONTAINS_COLUMNS.items() if column in columns}
    for kind in CONTAINS_COLUMNS:
        found = Transcript.objects.matching(TranscriptFilter(contains=[kind])).exists()
        assert found == (kind in wanted)


@pytest.mark.django_db
def test_edits_keep_the_columns_true(dataset, annotator):
    call = {"role": "assistant", "content": "{}", "end": "call"}
    transcript = create_transcript(dataset, author=annotator, canonical=canonical(call))
    assert stored_columns(transcript) == {"has_tool_calls"}
    # One message changed in place (the row is updated, not rewritten).
    answer = {"role": "assistant", "content": "{}", "channel": "analysis"}
    transcript = save_transcript(
        transcript, expected_version=1, author=annotator, messages=[USER, answer]
    )
    assert stored_columns(transcript) == {"has_analysis"}
    # A message inserted before the rest.
    system = {"role": "system", "content": "Be brief."}
    transcript = save_transcript(
        transcript, expected_version=2, author=annotator, messages=[system, USER, answer, call]
    )
    assert stored_columns(transcript) == set(COLUMNS)
    transcript = save_transcript(transcript, expected_version=3, author=annotator, messages=[USER])
    assert stored_columns(transcript) == set()


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_columns_from_the_messages(dataset, annotator):
    transcripts = [
        (create_transcript(dataset, author=annotator, canonical=canonical(message)), columns)
        for message, columns in CASES
    ]
    executor = MigrationExecutor(connection)
    executor.migrate([("editor", "0018_search_without_column_sizes")])
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    for transcript, columns in transcripts:
        assert stored_columns(transcript) == columns, transcript.canonical().messages
