"""An index on a queue's items in their order: a claim walks them from the first until one
has a free place the annotator has not worked on (``queues._first_open_item``). Without it
PostgreSQL read every item of the queue, joined to its transcript, and sorted them: 57–85 ms
a claim in a queue of 10,000 items, 7–20 ms with it (docs/performance.md).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0024_stored_diagnostics"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="queueitem",
            index=models.Index(fields=["queue", "position"], name="queue_item_position_idx"),
        ),
    ]
