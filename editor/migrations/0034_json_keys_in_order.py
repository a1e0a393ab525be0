"""A transcript's header, attrs and metadata and each message's attrs keep their keys in the
order written: ``json`` rather than ``jsonb`` on PostgreSQL (``editor.db.compact_json.
OrderedJSONField``). SQLite's columns are text already: nothing changes there, and its
tables are not rebuilt (a rebuild would drop the message table's search triggers)."""

from django.db import migrations

import editor.db.compact_json

COLUMNS = (
    ("editor_message", "attrs"),
    ("editor_transcript", "attrs"),
    ("editor_transcript", "header"),
    ("editor_transcript", "metadata"),
)


def _retype(to: str):
    def retype(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for table, column in COLUMNS:
            schema_editor.execute(
                f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE {to} USING "{column}"::{to}'
            )

    return retype


def _ordered_field():
    return editor.db.compact_json.OrderedJSONField(
        blank=True, default=dict, encoder=editor.db.compact_json.CompactJSONEncoder
    )


class Migration(migrations.Migration):
    dependencies = [("editor", "0033_import_shape")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(model_name=model, name=name, field=_ordered_field())
                for model, name in (
                    ("message", "attrs"),
                    ("transcript", "attrs"),
                    ("transcript", "header"),
                    ("transcript", "metadata"),
                )
            ],
            database_operations=[migrations.RunPython(_retype("json"), _retype("jsonb"))],
        )
    ]
