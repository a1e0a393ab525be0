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

    binary = schema_editor.connection.Database.Binary
    _copy_column(apps, schema_editor, "source_text", "source_packed", lambda t: binary(pack(t)))


def decompress_sources(apps, schema_editor):
    _copy_column(apps, schema_editor, "source_packed", "source_text", lambda text: text)


def _copy_column(apps, schema_editor, read: str, write: str, convert) -> None:
    """Every transcript's ``read`` value, converted, into its ``write`` column, in batches."""
    connection = schema_editor.connection
    transcripts = apps.get_model("editor", "Transcript")._base_manager.using(connection.alias)
    update = (
        f"UPDATE editor_transcript SET {connection.ops.quote_name(write)} = %s WHERE id = %s"
    )
    last = 0
    while batch := list(
        transcripts.filter(pk__gt=last).order_by("pk").values_list("pk", read)[:BATCH]
    ):
        with connection.cursor() as cursor:
            cursor.executemany(update, [(convert(value), pk) for pk, value in batch])
        last = batch[-1][0]


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
