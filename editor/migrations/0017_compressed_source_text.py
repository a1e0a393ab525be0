"""Transcripts' source text stored compressed (editor.compressed): most of a database's size.

A new column is filled from the old one in batches, then takes its name: changing the
column's type in place would cast text to bytes in SQL, and PostgreSQL's text-to-bytea cast
reads backslashes as escapes.
"""

from django.db import migrations

import editor.compressed

BATCH = 1000


def compress_sources(apps, schema_editor):
    from editor.compressed import pack

    transcripts = apps.get_model("editor", "Transcript")._base_manager.using(
        schema_editor.connection.alias
    )
    last = 0
    while batch := list(
        transcripts.filter(pk__gt=last).order_by("pk").values_list("pk", "source_text")[:BATCH]
    ):
        _write(schema_editor, "source_packed", [(pack(text), pk) for pk, text in batch])
        last = batch[-1][0]


def decompress_sources(apps, schema_editor):
    transcripts = apps.get_model("editor", "Transcript")._base_manager.using(
        schema_editor.connection.alias
    )
    last = 0
    while batch := list(
        transcripts.filter(pk__gt=last).order_by("pk").values_list("pk", "source_packed")[:BATCH]
    ):
        _write(schema_editor, "source_text", [(text, pk) for pk, text in batch])
        last = batch[-1][0]


def _write(schema_editor, column: str, rows: list[tuple]) -> None:
    connection = schema_editor.connection
    if column == "source_packed":
        rows = [(connection.Database.Binary(value), pk) for value, pk in rows]
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE editor_transcript SET {connection.ops.quote_name(column)} = %s WHERE id = %s",
            rows,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0016_dataset_edits"),
    ]

    operations = [
        migrations.AddField(
            model_name="transcript",
            name="source_packed",
            field=editor.compressed.CompressedTextField(blank=True),
        ),
        migrations.RunPython(compress_sources, decompress_sources, elidable=False),
        migrations.RemoveField(model_name="transcript", name="source_text"),
        migrations.RenameField(
            model_name="transcript", old_name="source_packed", new_name="source_text"
        ),
    ]
