"""SQLite: messages enter the search index in one statement per insert, not by a trigger.

The insert trigger of migration 0010 ran a program for every message row: 2.1 of 2.7 s to
insert 100,000 messages, against 0.2 s for one ``INSERT … SELECT`` after them (measured,
docs/performance.md). ``editor.storage`` inserts every message row and then calls
``MessageQuerySet.add_to_search_index``; the update and delete triggers stay (they take out
what was indexed). Nothing changes on PostgreSQL, whose GIN indexes follow the rows.
"""

from django.db import migrations

INSERT_TRIGGER = """CREATE TRIGGER editor_message_search_insert AFTER INSERT ON editor_message BEGIN
    INSERT INTO editor_message_search(rowid, end_user_text, hidden_text)
    VALUES (new.id, COALESCE(new.end_user_text, new.content),
            CASE WHEN new.end_user_text IS NULL THEN '' ELSE new.content END);
END"""


def _on_sqlite(statement: str):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0014_sort_indexes"),
    ]

    operations = [
        migrations.RunPython(
            _on_sqlite("DROP TRIGGER editor_message_search_insert"),
            _on_sqlite(INSERT_TRIGGER),
        ),
    ]
