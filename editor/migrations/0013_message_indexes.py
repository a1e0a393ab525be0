"""Two message indexes that cost more to keep than they gave (docs/performance.md, Storage).

- The index Django made for ``Message.transcript``: ``message_unique_index`` (transcript,
  index) starts with the same column and serves the same lookups. Dropped by name as the
  database lists it; the state's ``AlterField`` alone would make SQLite rebuild the table,
  which drops the search triggers of migration 0010 with it.
- PostgreSQL: what viewers search was a second GIN index over every message's
  ``COALESCE(end_user_text, content)``, tokenizing most messages twice. Now it covers only the
  messages whose visible text differs from their content (``end_user_text`` not NULL); the
  others are found through the content index (``MessageQuerySet.containing``), as SQLite's
  FTS5 table already does.
"""

import django.db.models.deletion
from django.db import migrations, models

FOREIGN_KEY_COLUMN = "transcript_id"

POSTGRESQL_FORWARD = [
    "DROP INDEX message_end_user_search_idx",
    """CREATE INDEX message_end_user_search_idx ON editor_message
    USING gin (to_tsvector('simple'::regconfig, COALESCE(end_user_text, '')))
    WHERE end_user_text IS NOT NULL""",
]
POSTGRESQL_BACKWARD = [
    "DROP INDEX message_end_user_search_idx",
    """CREATE INDEX message_end_user_search_idx ON editor_message
    USING gin (to_tsvector('simple'::regconfig, COALESCE(COALESCE(end_user_text, content), '')))""",
]


def drop_foreign_key_index(apps, schema_editor):
    connection = schema_editor.connection
    table = apps.get_model("editor", "Message")._meta.db_table
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    for name, about in constraints.items():
        if (
            about["index"]
            and about["columns"] == [FOREIGN_KEY_COLUMN]
            and not about["unique"]
            and not about["primary_key"]
        ):
            schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def create_foreign_key_index(apps, schema_editor):
    table = apps.get_model("editor", "Message")._meta.db_table
    schema_editor.execute(
        "CREATE INDEX {} ON {} ({})".format(
            schema_editor.quote_name(f"{table}_{FOREIGN_KEY_COLUMN}"),
            schema_editor.quote_name(table),
            schema_editor.quote_name(FOREIGN_KEY_COLUMN),
        )
    )


def _on_postgresql(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0012_bulk_tasks"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="message",
                    name="transcript",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="messages",
                        to="editor.transcript",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunPython(drop_foreign_key_index, create_foreign_key_index),
            ],
        ),
        migrations.RunPython(
            _on_postgresql(POSTGRESQL_FORWARD), _on_postgresql(POSTGRESQL_BACKWARD)
        ),
    ]
