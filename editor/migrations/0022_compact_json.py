"""JSON columns written compactly (``editor.db.compact_json``): only the fields' encoder
changes, which is no change to the database's schema (altering the fields would make SQLite
copy the tables). Rows written before keep their spaces and escapes; both read the same.
"""

from django.db import migrations, models

import editor.db.compact_json


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0021_search_without_positions"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="message",
                    name="attrs",
                    field=models.JSONField(
                        blank=True, default=dict, encoder=editor.db.compact_json.CompactJSONEncoder
                    ),
                ),
                migrations.AlterField(
                    model_name="revision",
                    name="snapshot",
                    field=models.JSONField(encoder=editor.db.compact_json.CompactJSONEncoder),
                ),
                migrations.AlterField(
                    model_name="transcript",
                    name="attrs",
                    field=models.JSONField(
                        blank=True, default=dict, encoder=editor.db.compact_json.CompactJSONEncoder
                    ),
                ),
                migrations.AlterField(
                    model_name="transcript",
                    name="diagnostics",
                    field=models.JSONField(
                        blank=True, default=list, encoder=editor.db.compact_json.CompactJSONEncoder
                    ),
                ),
                migrations.AlterField(
                    model_name="transcript",
                    name="header",
                    field=models.JSONField(
                        blank=True, default=dict, encoder=editor.db.compact_json.CompactJSONEncoder
                    ),
                ),
                migrations.AlterField(
                    model_name="transcript",
                    name="metadata",
                    field=models.JSONField(
                        blank=True, default=dict, encoder=editor.db.compact_json.CompactJSONEncoder
                    ),
                ),
            ],
        ),
    ]
