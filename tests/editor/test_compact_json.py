"""JSON columns written compactly (editor.db.compact_json)."""

import json

import pytest
from django.db import connection

from editor.db.compact_json import CompactJSONEncoder
from editor.models import Transcript, TranscriptFilter
from editor.storage.create import create_transcript

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


# A warning of the whole document, at its code's own severity; an error of a message, with
# a fix; an information raised to a warning; a code this version does not know.
DIAGNOSTICS = [
    {
        "code": "W-HEADER-MISSING",
        "severity": "warning",
        "message": "No YAML header",
        "line": 1,
        "column": 1,
        "offset": 0,
        "message_index": None,
    },
    {
        "code": "E-STREAM-TRUNCATED",
        "severity": "error",
        "message": "Input ended without a stop token",
        "line": 3,
        "column": 7,
        "offset": 40,
        "message_index": 1,
        "fix": {"title": "Close it", "edits": [{"start": 40, "end": 40, "replacement": "x"}]},
    },
    {
        "code": "I-PARSE-IMPLIED-START",
        "severity": "warning",
        "message": "m",
        "line": None,
        "column": None,
        "offset": None,
        "message_index": 2,
    },
    {"code": "X-FROM-THE-FUTURE", "severity": "info", "message": "m", "line": 2},
]


@pytest.mark.django_db
def test_diagnostics_are_stored_without_what_their_code_says_and_read_back_whole(
    dataset, annotator
):
    transcript = create_transcript(
        dataset, author=annotator, text="<|im_start|>user\nHi<|im_end|>\n", spec="openchatml-2.2"
    )
    Transcript.objects.filter(pk=transcript.pk).update(diagnostics=DIAGNOSTICS)
    read = Transcript.objects.get(pk=transcript.pk).diagnostics
    future = {"column": None, "offset": None, "message_index": None}
    assert read == [*DIAGNOSTICS[:3], {**DIAGNOSTICS[3], **future}]
    assert [list(d) for d in read[:3]] == [list(d) for d in DIAGNOSTICS[:3]]  # keys in order
    assert Transcript.objects.values_list("diagnostics", flat=True).get(pk=transcript.pk) == read
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT diagnostics FROM editor_transcript WHERE id = %s", [transcript.pk]
            )
            (stored,) = cursor.fetchone()
        first, second, third, fourth = json.loads(stored)
        assert first == {"code": "W-HEADER-MISSING", "message": "No YAML header"} | {
            "line": 1,
            "column": 1,
            "offset": 0,
        }
        assert "severity" not in second and second["fix"] == DIAGNOSTICS[1]["fix"]
        assert third["severity"] == "warning" and "line" not in third  # not its code's
        assert fourth["severity"] == "info"  # a code not known: kept as it is
    # The code filter reads the stored form.
    for code in ("W-HEADER-MISSING", "X-FROM-THE-FUTURE"):
        assert Transcript.objects.matching(TranscriptFilter(code=code)).get() == transcript
