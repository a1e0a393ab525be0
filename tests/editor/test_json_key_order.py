"""JSON kept in the order written (``editor.db.compact_json.OrderedJSONField``): a tool's
schema, message attrs and metadata come back with their keys where the writer put them, on
SQLite and on PostgreSQL (whose ``jsonb`` would sort them, shortest first)."""

from __future__ import annotations

import json

import pytest

from editor.exporting import export_dataset
from editor.importing import import_transcripts
from editor.models import Transcript
from editor.storage.create import create_transcript

pytestmark = pytest.mark.django_db

# Keys deliberately not in jsonb's order (by length, then bytes).
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
}
CHAT = {
    "messages": [
        {"role": "user", "content": "Rain in Paris?"},
        {"role": "assistant", "content": "Let me look.", "zeta_note": "z", "alpha": 1},
    ],
    "tools": [TOOL],
}
METADATA = {"source_url": "https://example.test/1", "id": "x", "annotated_by": ["a"]}


def test_tools_attrs_and_metadata_come_back_in_the_written_order(dataset, curator):
    created = create_transcript(
        dataset, author=curator, text=json.dumps(CHAT), spec="openai-messages", metadata=METADATA
    )
    stored = Transcript.objects.get(pk=created.pk)
    canonical = stored.canonical()
    assert json.dumps(canonical.attrs["tools"]) == json.dumps(CHAT["tools"])
    assert list(canonical.messages[1].attrs["json"]) == ["zeta_note", "alpha"]
    assert list(stored.metadata) == list(METADATA)


def test_a_converted_export_writes_the_tools_as_the_transcript_has_them(dataset, curator):
    body = json.dumps({"id": "w", "spec": "openai-messages", "text": json.dumps(CHAT)})
    import_transcripts((body + "\n").encode(), dataset=dataset, author=curator, name="w.jsonl")
    (line,) = export_dataset(dataset, format="messages")
    assert json.dumps(json.loads(line)["tools"]) == json.dumps(CHAT["tools"])
