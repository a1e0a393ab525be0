"""Message and Revision rows are written with executemany (editor.storage._insert_rows): they
must hold exactly what the ORM would have stored, JSON and dates included, on each database."""

from __future__ import annotations

import pytest
from django.utils import timezone

from editor import formats
from editor.models import Message, Revision, RevisionKind
from editor.storage import (
    MESSAGE_COLUMNS,
    NewTranscript,
    TranscriptContent,
    create_transcripts,
    save_transcript,
)

pytestmark = pytest.mark.django_db

MESSAGES = [
    formats.Message("system", "Be brief.", end=None),
    formats.Message(
        "assistant",
        '{"a": 1} — ünïcode, "quotes", back\\slash, \'single\'',
        channel="",  # empty, not missing: stored as "" and read back as ""
        recipient="functions.f",
        name="n",
        call_id="c1",
        intent="status",
        content_type="json",
        constrain="json",
        end="call",
        attrs={"header_attrs": {"x": None, "é": "1"}, "nested": [1, 2.5, True, {"k": []}]},
    ),
    formats.Message("user", ""),
]


def test_every_canonical_field_is_written():
    assert set(Message.CANONICAL_FIELDS) <= set(MESSAGE_COLUMNS)


def test_rows_hold_what_the_orm_would_store(dataset, curator):
    canonical = formats.Transcript(spec="openchatml-2.2", messages=MESSAGES)
    content = TranscriptContent.from_canonical(canonical)
    before = timezone.now()
    (transcript,) = create_transcripts(
        dataset,
        [NewTranscript(content, title="t", metadata={"m": [1]})],
        author=curator,
        kind=RevisionKind.IMPORT,
        note="imported",
    )

    rows = list(Message.objects.filter(transcript=transcript).order_by("index"))
    assert [row.index for row in rows] == [0, 1, 2]
    assert [row.to_canonical() for row in rows] == MESSAGES
    expected = [
        Message.from_canonical(m, index=i, transcript=transcript) for i, m in enumerate(MESSAGES)
    ]
    for row, orm in zip(rows, expected, strict=True):
        for name in ("transcript_id", "index", *Message.CANONICAL_FIELDS):
            assert getattr(row, name) == getattr(orm, name), name
    # JSON is queryable as JSON (not a string holding JSON) on both databases.
    assert Message.objects.filter(transcript=transcript, attrs__nested__3__k=[]).count() == 1

    revision = Revision.objects.get(transcript=transcript)
    assert (revision.number, revision.kind, revision.author, revision.note) == (
        1,
        RevisionKind.IMPORT,
        curator,
        "imported",
    )
    assert before <= revision.created_at <= timezone.now()
    assert revision.canonical() == canonical
    assert revision.snapshot == Revision.CURRENT
    assert revision.full_snapshot["metadata"] == {"m": [1]}


def test_a_save_rewrites_the_rows(dataset, curator):
    canonical = formats.Transcript(spec="openchatml-2.2", messages=MESSAGES)
    (transcript,) = create_transcripts(
        dataset, [NewTranscript(TranscriptContent.from_canonical(canonical))], author=curator
    )
    saved = save_transcript(transcript, expected_version=1, author=curator, messages=MESSAGES[1:])
    rows = Message.objects.filter(transcript=saved).order_by("index")
    assert [row.to_canonical() for row in rows] == MESSAGES[1:]
    assert [row.index for row in rows] == [0, 1]
