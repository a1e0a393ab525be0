"""Transcripts' source text stored compressed (editor.db.compressed): most of a database's size.

A new column is filled from the old one in batches, then takes its name: changing the
column's type in place would cast text to bytes in SQL, and PostgreSQL's text-to-bytea cast
reads backslashes as escapes.
"""

from django.db import migrations

import editor.db.compressed
from editor.migrations._columns import copy_column


def compress_sources(apps, schema_editor):
    from editor.db.compressed import pack

    binary = schema_editor.connection.Database.Binary
    copy_column(
        apps, schema_editor, "Transcript", "source_text", "source_packed", lambda t: binary(pack(t))
    )


def decompress_sources(apps, schema_editor):
    copy_column(
        apps, schema_editor, "Transcript", "source_packed", "source_text", lambda text: text
    )


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0016_dataset_edits"),
    ]

    operations = [
        migrations.AddField(
            model_name="transcript",
            name="source_packed",
            field=editor.db.compressed.CompressedTextField(blank=True),
        ),
        migrations.RunPython(compress_sources, decompress_sources, elidable=False),
        migrations.RemoveField(model_name="transcript", name="source_text"),
        migrations.RenameField(
            model_name="transcript", old_name="source_packed", new_name="source_text"
        ),
    ]
