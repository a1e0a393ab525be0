"""Transcript.message_count: a stored column, filled here for the transcripts that exist."""

from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce


def count_messages(apps, schema_editor):
    Transcript = apps.get_model("editor", "Transcript")
    Message = apps.get_model("editor", "Message")
    counts = (
        Message.objects.filter(transcript=OuterRef("pk"))
        .order_by()
        .values("transcript")
        .annotate(count=Count("pk"))
        .values("count")
    )
    # One UPDATE for every row, deleted transcripts included.
    Transcript._base_manager.update(message_count=Coalesce(Subquery(counts), 0))


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0006_labels_annotations"),
    ]

    operations = [
        migrations.AddField(
            model_name="transcript",
            name="message_count",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(count_messages, migrations.RunPython.noop, elidable=True),
    ]
