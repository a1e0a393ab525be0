"""Full-text search over message rows: one interface, a backend per database.

``backend(alias)`` gives the search of the database behind a connection alias; the models'
QuerySets (``MessageQuerySet.containing`` …) ask it and never look at the vendor. Each
backend answers three questions about a QuerySet of messages:

* ``containing(messages, query, search_hidden)``: the messages with every word of ``query``,
  in what the end user sees of them or, with ``search_hidden``, anywhere in their content;
* ``probed_for(…)``: the same messages, each looked up in the index one by one (cheap for a
  few messages, where ``containing`` would compute every match first);
* ``transcript_ids(messages)``: their transcripts, for ``pk__in``.

What a query's words are (``search_words``) is the same on every backend, so both databases
find the same transcripts for the same words. ``pages`` builds a page of a search over a
dataset with its snippets; ``sqlite_index`` keeps SQLite's FTS5 table as message rows change.
"""

from __future__ import annotations

from typing import Protocol

from django.db import connections
from django.db.models import QuerySet

from editor.search import postgresql, sqlite
from editor.search.words import (
    MAX_SEARCH_LENGTH,
    SEARCH_WORD_CHARACTER,
    SEARCH_WORD_RE,
    search_words,
)

__all__ = [
    "MAX_SEARCH_LENGTH",
    "SEARCH_WORD_CHARACTER",
    "SEARCH_WORD_RE",
    "SearchBackend",
    "backend",
    "search_words",
]


class SearchBackend(Protocol):
    def containing(self, messages: QuerySet, query: str, search_hidden: bool) -> QuerySet: ...

    def probed_for(self, messages: QuerySet, query: str, search_hidden: bool) -> QuerySet: ...

    def transcript_ids(self, messages: QuerySet): ...


def backend(alias: str) -> SearchBackend:
    """The search of the database behind connection ``alias``."""
    return postgresql.BACKEND if connections[alias].vendor == "postgresql" else sqlite.BACKEND
