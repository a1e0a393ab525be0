"""PostgreSQL's search: GIN indexes over the message rows' text (migrations 0010 and 0013),
kept by the database itself, queried in the web search syntax ("a phrase", -word, or)."""

from __future__ import annotations

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from editor.search.words import search_words

# Text search configuration "simple" (no stemming, no stop words), as SQLite's unicode61
# tokenizer, so that both backends find the same transcripts for the same words.
SEARCH_CONFIG = "simple"


def _not_kept_here(*args) -> None:
    """The database keeps its indexes itself."""


class PostgresSearch:
    writes_own_index = False
    counts_probes_cheaply = True
    add = remove = add_stored = remove_stored = staticmethod(_not_kept_here)

    def containing(self, messages: QuerySet, query: str, search_hidden: bool) -> QuerySet:
        if not search_words(query):
            return messages.none()
        # A PostgreSQL string cannot hold a NUL character (and no word has one).
        query = SearchQuery(
            query.replace("\x00", ""), config=SEARCH_CONFIG, search_type="websearch"
        )
        # On PostgreSQL every row holds its content (``Message.stored_content``).
        found = messages.annotate(
            content_vector=SearchVector("stored_content", config=SEARCH_CONFIG)
        )
        if search_hidden:
            return found.filter(content_vector=query)
        # What the end user sees is the content itself where end_user_text is NULL (most
        # messages): each half of the OR has its own index, and the second one indexes only
        # the few messages whose visible text differs (migration 0013).
        found = found.annotate(end_user_vector=SearchVector("end_user_text", config=SEARCH_CONFIG))
        # The NULL test first: where a row is read rather than found through an index, each
        # message's text is then tokenized once (a Q's keywords are sorted, so two Qs).
        return found.filter(
            (Q(end_user_text__isnull=True) & Q(content_vector=query))
            | (Q(end_user_text__isnull=False) & Q(end_user_vector=query))
        )

    def probed_for(self, messages: QuerySet, query: str, search_hidden: bool) -> QuerySet:
        # The planner chooses between the index and a look into each row itself.
        return self.containing(messages, query, search_hidden)

    def transcript_ids(self, messages: QuerySet):
        """Fenced (``OFFSET 0``) so that the planner cannot turn the subquery into a walk of a
        sorted list's transcripts, searching each one's messages until the page is full: its
        estimate of a search's matches can be wrong by orders of magnitude, and even right the
        walk is slow wherever few transcripts match (docs/performance.md, Text search). Where
        a walk is the fast way, ``pages`` asks for it (``probed_for``)."""
        transcripts = messages.order_by().values("transcript_id")
        if transcripts.query.is_empty():
            return transcripts
        sql, params = transcripts.query.get_compiler(messages.db).as_sql()
        return RawSQL(f"SELECT transcript_id FROM ({sql}) AS matches OFFSET 0", params)

    def first_matches(
        self, messages: QuerySet, query: str, search_hidden: bool, limit: int
    ) -> list[tuple[int, int]]:
        matches = self.containing(messages, query, search_hidden).order_by()
        return list(matches.values_list("transcript_id", "pk")[:limit])


BACKEND = PostgresSearch()
