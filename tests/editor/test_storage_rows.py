"""Transcript, Message and Revision rows are written without the ORM (editor.storage.insert_rows:
many rows an INSERT statement on SQLite, COPY on PostgreSQL): they must hold exactly what the
ORM would have stored, JSON and dates included, on each database, and the search index must
know every message."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from editor import formats
from editor.db import bulk_insert
from editor.models import Message, Revision, RevisionKind, Status, Transcript
from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcripts
from editor.storage.message_rows import MESSAGE_COLUMNS
from editor.storage.save import save_transcript

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
    # The content as stored: the text, or where it is in the source text (editor.db.message_text).
    assert set(Message.STORED_FIELDS) <= set(MESSAGE_COLUMNS)


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
    # The column holds a JSON object, not a JSON string holding the object's text.
    type_of = "json_typeof" if connection.vendor == "postgresql" else "json_type"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {type_of}(attrs) FROM editor_message WHERE transcript_id = %s",
            [transcript.pk],
        )
        assert {kind for (kind,) in cursor.fetchall()} == {"object"}

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


def test_transcript_rows_hold_what_the_orm_would_store(dataset, curator):
    canonical = formats.Transcript(spec="openchatml-2.2", messages=MESSAGES)
    before = timezone.now()
    (made,) = create_transcripts(
        dataset,
        [NewTranscript(TranscriptContent.from_canonical(canonical), title="t", external_id="x")],
        author=curator,
    )
    row = Transcript.objects.get(pk=made.pk)
    assert (row.pk, row.version, row.status, row.title, row.external_id) == (
        made.pk,
        1,
        Status.DRAFT,
        "t",
        "x",
    )
    assert (row.created_by, row.updated_by, row.deleted_at, row.metadata) == (
        curator,
        curator,
        None,
        {},
    )
    assert before <= row.created_at <= timezone.now()
    assert before <= row.updated_at <= timezone.now()
    assert row.canonical() == canonical and row.message_count == len(MESSAGES)
    assert row.diagnostics == made.diagnostics and not made._state.adding


def test_created_transcripts_are_their_rows_and_know_their_objects(
    dataset, curator, django_assert_num_queries
):
    """The instances ``create_transcripts`` returns are made from the values inserted, not
    read back: every column as the row holds it, the dataset and author at hand."""
    canonical = formats.Transcript(spec="openchatml-2.2", messages=MESSAGES)
    (made,) = create_transcripts(
        dataset,
        [NewTranscript(TranscriptContent.from_canonical(canonical), metadata={"k": [1]})],
        author=curator,
    )
    row = Transcript.objects.get(pk=made.pk)
    for field in Transcript._meta.concrete_fields:
        assert getattr(made, field.attname) == getattr(row, field.attname), field.name
    with django_assert_num_queries(0):
        assert (made.dataset, made.created_by, made.updated_by) == (dataset, curator, curator)
    assert made.revisions.get().snapshot == Revision.CURRENT


@pytest.mark.parametrize("per_statement", [1, 3, 500])
def test_many_rows_a_statement_keep_their_order_and_ids(
    dataset, curator, monkeypatch, per_statement
):
    monkeypatch.setattr(bulk_insert, "ROWS_PER_INSERT", per_statement)
    items = [
        NewTranscript(
            TranscriptContent.from_canonical(
                formats.Transcript(
                    spec="openchatml-2.2",
                    messages=[
                        formats.Message("user", f"word{n} tide{n % 3}") for _ in range(n % 4)
                    ],
                )
            ),
            title=f"T{n}",
        )
        for n in range(7)  # neither a multiple of 3 nor of 500: a short last statement
    ]
    made = create_transcripts(dataset, items, author=curator)
    assert [Transcript.objects.get(pk=t.pk).title for t in made] == [f"T{n}" for n in range(7)]
    assert len({t.pk for t in made}) == 7
    for n, transcript in enumerate(made):
        contents = [m.content for m in transcript.messages.order_by("index")]
        assert contents == [f"word{n} tide{n % 3}"] * (n % 4)
    # Every message is in the search index, the last statement's too.
    for word, titles in (("word6", ["T6"]), ("tide2", ["T2", "T5"])):
        found = Message.objects.containing(word, search_hidden=True)
        assert sorted(set(found.values_list("transcript__title", flat=True))) == titles


def test_rows_written_in_bulk_leave_the_ids_ahead_of_them(dataset, curator):
    """PostgreSQL's COPY takes the transcripts' ids from their sequence beforehand: a row the
    ORM adds afterwards, and a second bulk write, must get new ones."""
    canonical = formats.Transcript(spec="openchatml-2.2", messages=MESSAGES)
    content = TranscriptContent.from_canonical(canonical)
    first = create_transcripts(
        dataset, [NewTranscript(content, title=f"a{n}") for n in range(3)], author=curator
    )
    by_orm = Transcript.objects.create(dataset=dataset, title="b", spec="openchatml-2.2")
    second = create_transcripts(dataset, [NewTranscript(content, title="c")], author=curator)
    ids = [t.pk for t in (*first, by_orm, *second)]
    assert ids == sorted(ids) and len(set(ids)) == 5
    bulk = [t.pk for t in (*first, *second)]
    assert Revision.objects.filter(transcript_id__in=bulk).count() == 4
    assert Message.objects.filter(transcript_id__in=bulk).count() == 4 * len(MESSAGES)


def test_a_row_the_database_refuses_is_djangos_error_and_writes_nothing(dataset, curator):
    """The rows' statements bypass Django's cursor on SQLite when no query is recorded: a
    refused row must still raise Django's IntegrityError (the importer catches that one)."""
    content = TranscriptContent.from_canonical(
        formats.Transcript(spec="openchatml-2.2", messages=MESSAGES)
    )
    [made] = create_transcripts(dataset, [NewTranscript(content, title="a")], author=curator)
    row = (made.pk, 0, "user", "again", *[None] * 11, {}, None)  # index 0 is taken
    assert len(row) == len(MESSAGE_COLUMNS)
    with pytest.raises(IntegrityError), transaction.atomic():
        bulk_insert.insert_rows(Message, MESSAGE_COLUMNS, [row])
    assert made.messages.count() == len(MESSAGES)


def test_the_rows_statements_are_recorded_when_queries_are(dataset, curator):
    content = TranscriptContent.from_canonical(
        formats.Transcript(spec="openchatml-2.2", messages=MESSAGES)
    )
    items = [NewTranscript(content, title=f"t{n}") for n in range(3)]
    with CaptureQueriesContext(connection) as queries:
        create_transcripts(dataset, items, author=curator)
    statements = [q["sql"] for q in queries.captured_queries]
    for table in ("editor_transcript", "editor_message", "editor_revision"):
        assert any(
            table in sql and sql.lstrip().upper().startswith(("INSERT", "COPY"))
            for sql in statements
        ), table


def test_the_rows_are_recorded_without_their_values(dataset, curator):
    """Recording a bulk statement quotes none of its values into the record (Django's own
    record of a 500-row statement did, a SELECT QUOTE per 999 values, under ``DEBUG``)."""
    secret = "a content nobody should find in the query log"
    content = TranscriptContent.from_canonical(
        formats.Transcript(
            spec="openchatml-2.2", messages=[formats.Message(role="user", content=secret)]
        )
    )
    with CaptureQueriesContext(connection) as queries:
        create_transcripts(dataset, [NewTranscript(content, title="t")], author=curator)
    inserts = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith(('INSERT INTO "editor_message" (', 'COPY "editor_message" ('))
    ]
    assert inserts and not any(secret in sql for sql in inserts)


@pytest.mark.parametrize("per_statement", [2, 500])
def test_columns_null_in_a_whole_statement_are_stored_null_as_the_others(
    dataset, curator, monkeypatch, per_statement
):
    """On SQLite a column that is NULL in every row of a statement is written NULL in its SQL
    (binding None is slow): rows whose channel, name and end are set or not, alone or
    together in a statement, read back as they were given."""
    monkeypatch.setattr(bulk_insert, "ROWS_PER_INSERT", per_statement)
    messages = [
        formats.Message("user", "plain"),
        formats.Message("user", "plain too"),
        formats.Message("assistant", "final", channel="final", end="<|end|>"),
        formats.Message("tool", "42", name="calculator"),
        formats.Message("user", ""),
    ]
    content = TranscriptContent.from_canonical(
        formats.Transcript(spec="openchatml-2.2", messages=messages)
    )
    [made] = create_transcripts(dataset, [NewTranscript(content, title="t")], author=curator)
    fields = ("role", "content", "channel", "name", "end", "attrs")
    stored = [tuple(getattr(m, f) for f in fields) for m in made.messages.order_by("index")]
    given = [tuple(getattr(m, f) or None for f in fields) for m in content.canonical.messages]
    assert [tuple(v or None for v in row) for row in stored] == given
    assert [row[2:5] for row in stored] == [
        (None, None, "end"),
        (None, None, "end"),
        ("final", None, "<|end|>"),
        (None, "calculator", "end"),
        (None, None, "end"),
    ]


def test_none_and_bool_are_bound_as_sqlite3_would_bind_them():
    """``editor.db.sqlite_binding``: the adapters registered for speed change no value."""
    import sqlite3

    with sqlite3.connect(":memory:") as database:
        database.execute("CREATE TABLE t (a, b, c)")
        database.execute("INSERT INTO t VALUES (?, ?, ?)", (None, True, False))
        row = database.execute("SELECT a, typeof(a), b, typeof(b), c FROM t").fetchone()
    assert row == (None, "null", 1, "integer", 0)
    assert sqlite3.adapters[(type(None), sqlite3.PrepareProtocol)](None) is None
