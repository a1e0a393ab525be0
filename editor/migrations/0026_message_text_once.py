"""A message row may say where its content is in its transcript's source text instead of
holding a second copy (``editor.db.message_text``; SQLite only, docs/storage.md).

- ``Message.content`` becomes ``stored_content`` in the model, the same column: "" where the
  row has a span (``content_start``, ``content_end``, ``content_escaped``, added here).
- SQLite: the search index's update and delete triggers go. They gave the index the row's
  content, which such a row does not hold; ``editor.storage`` passes the texts instead
  (``editor.search_index``), as it has done for inserts since migration 0015.

The rows already stored on SQLite are turned into spans here, as ``editor.storage`` writes
them (``spans_for`` is ``editor.db.message_text.locate`` as it is at this migration; a span is
right by construction, whatever finds it). The file keeps its size until a ``VACUUM``; the
pages freed are used by what is written next. Backwards, the contents are read from the
source texts into the rows again, then the triggers come back (last, after any table
rebuild of the columns' removal).
"""

import json

from django.db import migrations, models

from editor.migrations import _search_table

BATCH = 500


def _indexed(row: str) -> str:
    return (
        f"COALESCE({row}.end_user_text, {row}.content), "
        f"CASE WHEN {row}.end_user_text IS NULL THEN '' ELSE {row}.content END"
    )


TRIGGERS = [
    f"""CREATE TRIGGER editor_message_search_delete AFTER DELETE ON editor_message BEGIN
        INSERT INTO editor_message_search(editor_message_search, rowid, end_user_text, hidden_text)
        VALUES ('delete', old.id, {_indexed("old")});
    END""",
    f"""CREATE TRIGGER editor_message_search_update
    AFTER UPDATE OF content, end_user_text ON editor_message BEGIN
        INSERT INTO editor_message_search(editor_message_search, rowid, end_user_text, hidden_text)
        VALUES ('delete', old.id, {_indexed("old")});
        INSERT INTO editor_message_search(rowid, end_user_text, hidden_text)
        VALUES (new.id, {_indexed("new")});
    END""",
]
DROP_TRIGGERS = [
    "DROP TRIGGER IF EXISTS editor_message_search_update",
    "DROP TRIGGER IF EXISTS editor_message_search_delete",
]


MIN_SPANNED_LENGTH = 16


def spans_for(source: str, contents: list[str]) -> list[tuple[int, int, bool] | None]:
    spans, position = [], 0
    for content in contents:
        span = None
        if len(content) >= MIN_SPANNED_LENGTH:
            start = source.find(content, position)
            if start >= 0:
                span = (start, start + len(content), False)
            else:
                literals = (json.dumps(content), json.dumps(content, ensure_ascii=False))
                for literal in dict.fromkeys(literals):
                    start = source.find(literal, position)
                    if start >= 0:
                        span = (start, start + len(literal), True)
                        break
        spans.append(span)
        if span is not None:
            position = span[1]
    return spans


def contents_into_spans(apps, schema_editor) -> None:
    """Every stored row whose content is found in its transcript's source text says where."""
    Message = apps.get_model("editor", "Message")
    Transcript = apps.get_model("editor", "Transcript")
    alias = schema_editor.connection.alias
    transcripts = Transcript._base_manager.using(alias).order_by("pk")
    last = 0
    while batch := list(transcripts.filter(pk__gt=last).values_list("pk", "source_text")[:BATCH]):
        last = batch[-1][0]
        contents = {}
        for pk, transcript, content in (
            Message._base_manager.using(alias)
            .filter(transcript_id__in=[pk for pk, _ in batch])
            .order_by("transcript_id", "index")
            .values_list("pk", "transcript_id", "stored_content")
        ):
            contents.setdefault(transcript, []).append((pk, content))
        updates = []
        for transcript, source in batch:
            rows = contents.get(transcript, [])
            spans = spans_for(source, [content for _, content in rows])
            updates += [
                (*span, pk) for (pk, _), span in zip(rows, spans, strict=True) if span is not None
            ]
        with schema_editor.connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE editor_message SET content = '', content_start = %s, content_end = %s,"
                " content_escaped = %s WHERE id = %s",
                updates,
            )


def contents_into_rows(apps, schema_editor) -> None:
    """Every row with a span holds its content again (read from its transcript's source)."""
    Message = apps.get_model("editor", "Message")
    Transcript = apps.get_model("editor", "Transcript")
    messages = Message._base_manager.using(schema_editor.connection.alias)
    spanned = messages.filter(content_start__isnull=False)
    while transcripts := list(spanned.values_list("transcript_id", flat=True).distinct()[:BATCH]):
        sources = dict(
            Transcript._base_manager.using(schema_editor.connection.alias)
            .filter(pk__in=transcripts)
            .values_list("pk", "source_text")
        )
        rows = spanned.filter(transcript_id__in=transcripts).values_list(
            "pk", "transcript_id", "content_start", "content_end", "content_escaped"
        )
        with schema_editor.connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE editor_message SET content = %s, content_start = NULL,"
                " content_end = NULL, content_escaped = NULL WHERE id = %s",
                [
                    (_content_at(sources[transcript], start, end, escaped), pk)
                    for pk, transcript, start, end, escaped in rows
                ],
            )


def _content_at(source: str, start: int, end: int, escaped: bool) -> str:
    text = source[start:end]
    return json.loads(text) if escaped else text


def _noop(apps, schema_editor) -> None:
    pass


def _on_sqlite(run):
    def on_sqlite(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            run(apps, schema_editor)

    return on_sqlite


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0025_queue_item_position_index"),
    ]

    operations = [
        # Backwards this runs last: the triggers are made once the columns are gone.
        migrations.RunPython(_noop, _search_table.on_sqlite(TRIGGERS)),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField("message", "content", "stored_content"),
                migrations.AlterField(
                    model_name="message",
                    name="stored_content",
                    field=models.TextField(blank=True, db_column="content"),
                ),
            ]
        ),
        migrations.AddField(
            model_name="message",
            name="content_start",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="message",
            name="content_end",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="message",
            name="content_escaped",
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.RunPython(
            _search_table.on_sqlite(DROP_TRIGGERS), _on_sqlite(contents_into_rows)
        ),
        migrations.RunPython(_on_sqlite(contents_into_spans), _noop),
    ]
