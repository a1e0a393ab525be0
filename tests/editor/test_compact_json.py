"""JSON columns written compactly (editor.compact_json)."""

import json

import pytest
from django.db import connection

from editor.compact_json import CompactJSONEncoder
from editor.models import Transcript
from editor.storage import create_transcript

METADATA = {"source": "Пример", "tags": ["日本語", "a b"], "n": 1, "quote": 'say "hi"\n'}


def test_no_spaces_and_no_escapes_of_non_ascii_text():
    text = json.dumps(METADATA, cls=CompactJSONEncoder)
    assert text == '{"source":"Пример","tags":["日本語","a b"],"n":1,"quote":"say \\"hi\\"\\n"}'
    assert json.loads(text) == METADATA


@pytest.mark.django_db
def test_a_stored_value_is_compact_and_reads_back(dataset, annotator):
    transcript = create_transcript(
        dataset,
        author=annotator,
        text="<|im_start|>user\nHi<|im_end|>\n",
        spec="openchatml-2.2",
        metadata=METADATA,
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT metadata, diagnostics FROM editor_transcript WHERE id = %s", [transcript.pk]
        )
        metadata, diagnostics = cursor.fetchone()
    if connection.vendor == "sqlite":  # PostgreSQL's jsonb keeps no text to look at
        assert metadata == json.dumps(METADATA, cls=CompactJSONEncoder)
        assert diagnostics.startswith('[{"code":')
    assert Transcript.objects.get(pk=transcript.pk).metadata == METADATA


@pytest.mark.django_db
def test_values_written_before_read_the_same(dataset, annotator):
    transcript = create_transcript(
        dataset, author=annotator, text="<|im_start|>user\nHi<|im_end|>\n", spec="openchatml-2.2"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE editor_transcript SET metadata = %s WHERE id = %s",
            [json.dumps(METADATA), transcript.pk],  # spaces, \\u escapes
        )
    assert Transcript.objects.get(pk=transcript.pk).metadata == METADATA
