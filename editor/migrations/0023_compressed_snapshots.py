"""Revisions' snapshots stored compressed (``editor.db.compressed.CompressedJSONField``).

A revision that is not the newest holds the whole state it saved, source text included: a
transcript of 4 MB edited ten times kept 40 MB of copies. Each is now its compact JSON as a
Zstandard frame. The newest revision's marker (``Revision.CURRENT``) is too short to
compress and is stored as its JSON bytes, which ``storage._write`` compares whole.

As in migration 0017, a new column is filled from the old one in batches, then takes its
name.
"""

from django.db import migrations, models

import editor.db.compact_json
import editor.db.compressed
from editor.migrations._columns import copy_column


def compress_snapshots(apps, schema_editor):
    from editor.db.compressed import CompressedJSONField

    packed = CompressedJSONField()
    connection = schema_editor.connection
    copy_column(
        apps,
        schema_editor,
        "Revision",
        "snapshot",
        "snapshot_packed",
        lambda value: packed.get_db_prep_value(value, connection),
    )


def decompress_snapshots(apps, schema_editor):
    import json

    from editor.db.compact_json import CompactJSONEncoder

    copy_column(
        apps,
        schema_editor,
        "Revision",
        "snapshot_packed",
        "snapshot",
        lambda value: json.dumps(value, cls=CompactJSONEncoder),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0022_compact_json"),
    ]

    operations = [
        migrations.AddField(
            model_name="revision",
            name="snapshot_packed",
            field=editor.db.compressed.CompressedJSONField(default=dict),
            preserve_default=False,
        ),
        migrations.RunPython(compress_snapshots, decompress_snapshots, elidable=False),
        # A default for the old column, in the state only: migrating back adds the column
        # again, to rows that already exist, before filling it.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="revision",
                    name="snapshot",
                    field=models.JSONField(
                        default=dict, encoder=editor.db.compact_json.CompactJSONEncoder
                    ),
                )
            ]
        ),
        migrations.RemoveField(model_name="revision", name="snapshot"),
        migrations.RenameField(
            model_name="revision", old_name="snapshot_packed", new_name="snapshot"
        ),
    ]
