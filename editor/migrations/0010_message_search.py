"""Text search over message content (editor.search), on both databases.

``Message.end_user_text`` (what the end user sees of a message) is filled for the stored
messages; then each database gets its own index over two texts of every message: the whole
content (what editors search) and ``COALESCE(end_user_text, content)`` (what viewers search;
"" for a hidden message).

- PostgreSQL: two GIN expression indexes on ``to_tsvector('simple', …)``, written exactly as
  the ``SearchVector`` expressions of editor.search compile, so the planner uses them.
- SQLite: a contentless FTS5 table ``editor_message_search`` (rowid = the message's id) kept
  in sync by triggers on ``editor_message``: no write path can forget it. Its columns are
  ``end_user_text`` (what the end user sees) and ``hidden_text`` (the whole content, only
  when the end user does not see all of it): most messages are tokenized once, not twice,
  which halves what the index adds to an import (measured: 2.0 s → 1.0 s per 50,000
  messages); viewers search the first column, editors both.
"""

from django.db import migrations, models



def _indexed(row: str) -> str:
    """The two indexed texts of ``row`` (a message): what the end user sees, and the whole
    content when that is not all of it (``end_user_text`` NULL: the end user sees it all)."""
    return (
        f"COALESCE({row}.end_user_text, {row}.content), "
        f"CASE WHEN {row}.end_user_text IS NULL THEN '' ELSE {row}.content END"
    )


SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE editor_message_search USING fts5(
        end_user_text, hidden_text, content='', tokenize='unicode61 remove_diacritics 2'
    )""",
    f"""CREATE TRIGGER editor_message_search_insert AFTER INSERT ON editor_message BEGIN
        INSERT INTO editor_message_search(rowid, end_user_text, hidden_text)
        VALUES (new.id, {_indexed("new")});
    END""",
    # A contentless table forgets a row only when told the values it indexed.
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
    f"""INSERT INTO editor_message_search(rowid, end_user_text, hidden_text)
    SELECT id, {_indexed("editor_message")} FROM editor_message""",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER editor_message_search_update",
    "DROP TRIGGER editor_message_search_delete",
    "DROP TRIGGER editor_message_search_insert",
    "DROP TABLE editor_message_search",
]
POSTGRESQL_FORWARD = [
    """CREATE INDEX message_content_search_idx ON editor_message
    USING gin (to_tsvector('simple'::regconfig, COALESCE(content, '')))""",
    """CREATE INDEX message_end_user_search_idx ON editor_message
    USING gin (to_tsvector('simple'::regconfig, COALESCE(COALESCE(end_user_text, content), '')))""",
]
POSTGRESQL_BACKWARD = [
    "DROP INDEX message_end_user_search_idx",
    "DROP INDEX message_content_search_idx",
]


def fill_end_user_text(apps, schema_editor):
    # The rule as the write path applies it (editor.storage), not a copy that could drift.
    from editor import formats
    from editor.formats.model import SEMANTIC_FIELDS
    from editor.models import Message as CurrentMessage

    Message = apps.get_model("editor", "Message")
    rows = Message.objects.select_related("transcript").only("transcript__spec", *SEMANTIC_FIELDS)
    changed = []
    for row in rows.iterator(chunk_size=2000):
        canonical = formats.Message(**{name: getattr(row, name) for name in SEMANTIC_FIELDS})
        row.end_user_text = CurrentMessage.end_user_text_of(row.transcript.spec, canonical)
        if row.end_user_text is not None:
            changed.append(row)
    Message.objects.bulk_update(changed, ["end_user_text"], batch_size=2000)


def _run(statements):
    def run(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, ()):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0009_transcript_updated_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="end_user_text",
            field=models.TextField(blank=True, null=True),
        ),
        migrations.RunPython(fill_end_user_text, migrations.RunPython.noop),
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRESQL_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRESQL_BACKWARD}),
        ),
    ]
