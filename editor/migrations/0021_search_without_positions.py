"""SQLite: the FTS5 search table without token positions (``detail=column``).

Positions serve phrase and NEAR queries, which this search never makes: a query is its words,
each looked for alone, all of them in the message (``models.fts_query``; a word is one token,
``models.SEARCH_WORD_CHARACTER``). Without them the table was 2.4 instead of 3.8 MB after
importing 10,000 transcripts (docs/performance.md). The table is made again and refilled
from the message rows, as in migration 0018; the triggers name the table, not its options,
and stay. PostgreSQL has nothing of the kind.
"""

from django.db import migrations

from editor.migrations import _search_table

FORWARD = [
    "DROP TABLE editor_message_search",
    _search_table.create(column_sizes=False, positions=False),
    _search_table.FILL,
]
BACKWARD = [
    "DROP TABLE editor_message_search",
    _search_table.create(column_sizes=False),
    _search_table.FILL,
]


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0020_fewer_indexes"),
    ]

    operations = [
        migrations.RunPython(_search_table.on_sqlite(FORWARD), _search_table.on_sqlite(BACKWARD)),
    ]
