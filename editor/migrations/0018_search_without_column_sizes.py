"""SQLite: the FTS5 search table without its column sizes (``columnsize=0``).

FTS5 keeps every row's token count per column for ranking (``bm25``), which no search here
does: matches are filtered, never ranked (editor.search). That table was 1.1 of 47.9 MB
after importing 10,000 transcripts, and a write per message inserted
(docs/performance.md). The table is made again and refilled from the message rows, as
migration 0010 filled it; the triggers of 0010 name the table, not its options, and stay.
PostgreSQL has nothing of the kind.
"""

from django.db import migrations

from editor.migrations import _search_table

FORWARD = [
    "DROP TABLE editor_message_search",
    _search_table.create(column_sizes=False),
    _search_table.FILL,
]
BACKWARD = [
    "DROP TABLE editor_message_search",
    _search_table.create(column_sizes=True),
    _search_table.FILL,
]


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0017_compressed_source_text"),
    ]

    operations = [
        migrations.RunPython(_search_table.on_sqlite(FORWARD), _search_table.on_sqlite(BACKWARD)),
    ]
