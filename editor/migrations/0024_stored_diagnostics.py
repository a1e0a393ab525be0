"""Transcripts' diagnostics written without what their codes say already
(``editor.db.compact_json.DiagnosticsField``): a change of the field's Python side only, so of
the state only. Rows written before keep every key and read the same.
"""

from django.db import migrations

import editor.db.compact_json


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0023_compressed_snapshots"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="transcript",
                    name="diagnostics",
                    field=editor.db.compact_json.DiagnosticsField(
                        blank=True, default=list, encoder=editor.db.compact_json.CompactJSONEncoder
                    ),
                ),
            ]
        ),
    ]
