"""Transcript.has_tool_calls, has_analysis, has_system_prompt: whether any message is of the
kind, kept by editor.storage with the messages it writes (``models.CONTAINS_COLUMNS``), and
filled here for the transcripts that exist, with the same tests written as SQL.

The list filters on these kinds looked into every transcript's messages through an index on
the messages' role and channel: that index was 2 of 31 MB after importing 10,000
transcripts (docs/performance.md), and a filtered page still looked into every transcript
to count them. It goes.
"""

from django.db import migrations, models

FILL = """UPDATE editor_transcript SET
    has_tool_calls = EXISTS (
        SELECT 1 FROM editor_message m WHERE m.transcript_id = editor_transcript.id
        AND m.role = 'assistant'
        AND (m."end" = 'call' OR (m.recipient IS NOT NULL
             AND m.recipient NOT IN ('assistant', 'user', 'all', 'system', 'developer')))
    ),
    has_analysis = EXISTS (
        SELECT 1 FROM editor_message m WHERE m.transcript_id = editor_transcript.id
        AND m.channel = 'analysis'
    ),
    has_system_prompt = EXISTS (
        SELECT 1 FROM editor_message m WHERE m.transcript_id = editor_transcript.id
        AND (m.role IN ('system', 'developer', 'platform') OR substr(m.role, 1, 7) = 'system:')
    )"""


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0018_search_without_column_sizes"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="message",
            name="message_role_channel_idx",
        ),
        migrations.AddField(
            model_name="transcript",
            name="has_analysis",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="transcript",
            name="has_system_prompt",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="transcript",
            name="has_tool_calls",
            field=models.BooleanField(default=False),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop, elidable=True),
    ]
