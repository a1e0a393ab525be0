"""Fewer indexes, the same lookups (docs/performance.md, footprint):

* ``Transcript.dataset`` and ``Revision.transcript`` lose their indexes of one column: every
  other index of their table begins with that column and serves the same lookups;
* the nullable user keys (``created_by``, ``updated_by``, ``deleted_by``, a revision's
  ``author``) are indexed only where set: nothing looks a NULL up, and most rows have none.

The old indexes are dropped by name: altering the fields would make SQLite copy both tables
for each of them.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# (table, column, the index Django made for the foreign key)
DROPPED = [
    ("editor_revision", "author_id", "editor_revision_author_id_9a53f5f7"),
    ("editor_revision", "transcript_id", "editor_revision_transcript_id_0b247526"),
    ("editor_transcript", "created_by_id", "editor_transcript_created_by_id_212c2619"),
    ("editor_transcript", "dataset_id", "editor_transcript_dataset_id_3cb9f252"),
    ("editor_transcript", "deleted_by_id", "editor_transcript_deleted_by_id_bd721069"),
    ("editor_transcript", "updated_by_id", "editor_transcript_updated_by_id_948a01f6"),
]


def _user_key():
    return models.ForeignKey(
        blank=True,
        db_index=False,
        null=True,
        on_delete=django.db.models.deletion.SET_NULL,
        related_name="+",
        to=settings.AUTH_USER_MODEL,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0019_transcript_contains_columns"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX "{index}"', f'CREATE INDEX "{index}" ON "{table}" ("{column}")'
                )
                for table, column, index in DROPPED
            ],
            state_operations=[
                migrations.AlterField(model_name="revision", name="author", field=_user_key()),
                migrations.AlterField(
                    model_name="revision",
                    name="transcript",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="revisions",
                        to="editor.transcript",
                    ),
                ),
                migrations.AlterField(
                    model_name="transcript", name="created_by", field=_user_key()
                ),
                migrations.AlterField(
                    model_name="transcript",
                    name="dataset",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="transcripts",
                        to="editor.dataset",
                    ),
                ),
                migrations.AlterField(
                    model_name="transcript", name="deleted_by", field=_user_key()
                ),
                migrations.AlterField(
                    model_name="transcript", name="updated_by", field=_user_key()
                ),
            ],
        ),
        migrations.AddIndex(
            model_name="revision",
            index=models.Index(
                condition=models.Q(("author__isnull", False)),
                fields=["author"],
                name="revision_author_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="transcript",
            index=models.Index(
                condition=models.Q(("created_by__isnull", False)),
                fields=["created_by"],
                name="transcript_created_by_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="transcript",
            index=models.Index(
                condition=models.Q(("updated_by__isnull", False)),
                fields=["updated_by"],
                name="transcript_updated_by_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="transcript",
            index=models.Index(
                condition=models.Q(("deleted_by__isnull", False)),
                fields=["deleted_by"],
                name="transcript_deleted_by_idx",
            ),
        ),
    ]
