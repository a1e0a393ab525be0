"""Full-text search over message rows: one interface, a backend per database.

``backend(alias)`` gives the search of the database behind a connection alias; the models'
QuerySets (``MessageQuerySet.containing`` …) ask it and never look at the vendor. Each
backend answers three questions about a QuerySet of messages:

* ``containing(messages, query, search_hidden)``: the messages with every word of ``query``,
  in what the end user sees of them or, with ``search_hidden``, anywhere in their content;
* ``probed_for(…)``: the same messages, each looked up in the index one by one (cheap for a
  few messages, where ``containing`` would compute every match first);
* ``transcript_ids(messages)``: their transcripts, for ``pk__in``;
* ``first_matches(messages, query, search_hidden, limit)``: ``(transcript id, message id)`` of
  up to ``limit`` matching messages, the cheapest way (a search page's first probe).

Where the database indexes the message rows itself (PostgreSQL: GIN indexes over their text)
the rows must hold their text, and there is no index for the app to write. Where it does not
(SQLite), the app writes the FTS5 table as it writes message rows (``add``, ``remove`` …,
called by ``editor.storage.message_rows``), and a row may say where its content is in the
transcript's source text instead of holding it (``editor.db.message_text``): that is
``writes_own_index``.

What a query's words are (``search_words``) is the same on every backend, so both databases
find the same transcripts for the same words. ``sqlite_index`` keeps SQLite's FTS5 table as
message rows change; ``editor.listing.search`` builds a page of a search over a dataset.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    writes_own_index: bool
    # Whether counting the probed form (``probed_for``) costs no more than counting every
    # match: where it does not, a list counted exactly is found through every match.
    counts_probes_cheaply: bool

    def containing(self, messages: QuerySet, query: str, search_hidden: bool) -> QuerySet: ...

    def probed_for(self, messages: QuerySet, query: str, search_hidden: bool) -> QuerySet: ...

    def transcript_ids(self, messages: QuerySet): ...

    def first_matches(
        self, messages: QuerySet, query: str, search_hidden: bool, limit: int
    ) -> list[tuple[int, int]]: ...

    # The index as message rows change: ``(message id, content, end_user_text)`` rows, or a
    # transcript's messages by index with their content (``sqlite_index``). No-ops where the
    # database indexes the rows itself.
    def add(self, connection, messages: Iterable[tuple[int, str, str | None]]) -> None: ...

    def remove(self, connection, messages: Iterable[tuple[int, str, str | None]]) -> None: ...

    def add_stored(self, connection, transcript_id: int, contents: dict[int, str]) -> None: ...

    def remove_stored(self, connection, transcript_id: int, contents: dict[int, str]) -> None: ...


def backend(alias: str) -> SearchBackend:
    """The search of the database behind connection ``alias``."""
    return postgresql.BACKEND if connections[alias].vendor == "postgresql" else sqlite.BACKEND
