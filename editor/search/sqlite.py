"""SQLite's search: the FTS5 table ``editor_message_search`` (kept by ``sqlite_index``),
looked into with a query of the user's words only."""

from __future__ import annotations

from django.db import connections
from django.db.models import BooleanField, F, Func, QuerySet, Value
from django.db.models.expressions import RawSQL

from editor.search import sqlite_index
from editor.search.sqlite_index import TABLE
from editor.search.words import search_words


def fts_query(query: str, search_hidden: bool) -> str:
    """The FTS5 query of SQLite's search table for the words of ``query``: all of them, in
    what the end user sees or, with ``search_hidden``, anywhere in the content (its two
    columns together are the whole content; migration 0010)."""
    columns = "{end_user_text hidden_text}" if search_hidden else "end_user_text"
    # Every word as an FTS5 string (a search word holds no double quote to escape).
    return " AND ".join(f'{columns} : "{word}"' for word in search_words(query))


class RowMatches(Func):
    """Does the message whose id is the first argument match the FTS5 query (the second)?
    One lookup in the search table by rowid: joined to the messages without the rowid, SQLite
    runs the whole full-text query again for every transcript looked into."""

    output_field = BooleanField()

    def as_sql(self, compiler, connection, **extra_context):
        message, query = self.get_source_expressions()
        message_sql, message_params = compiler.compile(message)
        query_sql, query_params = compiler.compile(query)
        sql = (
            f"EXISTS (SELECT 1 FROM {TABLE}"
            f" WHERE {TABLE}.rowid = {message_sql}"
            f" AND {TABLE} MATCH {query_sql})"
        )
        return sql, (*message_params, *query_params)


class SqliteSearch:
    writes_own_index = True
    # Counted, the walk looks into every transcript: far slower than every match.
    counts_probes_cheaply = False

    add = staticmethod(sqlite_index.add)
    remove = staticmethod(sqlite_index.remove)
    add_stored = staticmethod(sqlite_index.add_stored)
    remove_stored = staticmethod(sqlite_index.remove_stored)

    def containing(self, messages: QuerySet, query: str, search_hidden: bool) -> QuerySet:
        if not search_words(query):
            return messages.none()
        return messages.filter(
            pk__in=RawSQL(
                f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH %s",
                (fts_query(query, search_hidden),),
            )
        )

    def probed_for(self, messages: QuerySet, query: str, search_hidden: bool) -> QuerySet:
        if not search_words(query):
            return messages.none()
        return messages.filter(RowMatches(F("pk"), Value(fts_query(query, search_hidden))))

    def transcript_ids(self, messages: QuerySet) -> QuerySet:
        # SQLite computes an ``IN`` subquery first: nothing to fence.
        return messages.order_by().values("transcript_id")

    def first_matches(
        self, messages: QuerySet, query: str, search_hidden: bool, limit: int
    ) -> list[tuple[int, int]]:
        """The search table's rowids in its own order, each looked up once: through
        ``containing`` (``id IN (…)``) SQLite would first read every match."""
        table = messages.model._meta.db_table
        with connections[messages.db].cursor() as cursor:
            cursor.execute(
                f"SELECT probed.transcript_id, probed.id FROM {TABLE}"
                f" CROSS JOIN {table} AS probed ON probed.id = {TABLE}.rowid"
                f" WHERE {TABLE} MATCH %s LIMIT %s",
                (fts_query(query, search_hidden), limit),
            )
            return cursor.fetchall()


BACKEND = SqliteSearch()
