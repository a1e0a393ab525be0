"""SQLite: two search tables of one column each, keeping no token positions (``detail=none``).

Positions and columns served phrase, NEAR and column queries. This search makes none: a query
is its words, each looked for alone (``models.fts_query``; a word is one token,
``models.SEARCH_WORD_CHARACTER``), all of them in one message's text. So the one table of two
columns (what the end user sees; the whole content where that differs) becomes two tables:
``editor_message_search`` holds what the end user sees of every message, and
``editor_message_content_search`` the whole content of the messages whose end user sees only
part of it or none. A search of everything looks in both (``MessageQuerySet.containing``).
After importing 10,000 transcripts the search data was 3.8 MB with positions, 2.4 MB with
columns only, and is 0.9 MB now (docs/performance.md). The triggers that take rows out are
made again for the two tables; PostgreSQL has nothing of the kind.
"""

from django.db import migrations

from editor.migrations import _search_table

FORWARD = [
    *_search_table.DROP_TRIGGERS,
    "DROP TABLE editor_message_search",
    *_search_table.SPLIT_TABLES,
    *_search_table.SPLIT_FILL,
    *_search_table.SPLIT_TRIGGERS,
]
BACKWARD = [
    *_search_table.DROP_TRIGGERS,
    "DROP TABLE editor_message_content_search",
    "DROP TABLE editor_message_search",
    _search_table.create(column_sizes=False),
    _search_table.FILL,
    *_search_table.TWO_COLUMN_TRIGGERS,
]


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0020_fewer_indexes"),
    ]

    operations = [
        migrations.RunPython(
            _search_table.on_sqlite(FORWARD), _search_table.on_sqlite(BACKWARD)
        ),
    ]
