"""A page of a text search over a dataset's transcripts (``search_page``), and its snippets:
a short, escaped excerpt around the first hit of each listed transcript, cut from the same
text the search looked in (``MessageQuerySet.containing``), so a viewer's snippet never shows
what the end user may not see."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.core.paginator import Page, Paginator
from django.db.models import BinaryField, Case, F, OuterRef, Subquery, When, Window
from django.db.models.functions import Cast, RowNumber
from django.utils.functional import cached_property
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from editor import search
from editor.db.compressed import unpack_prefix
from editor.db.message_text import content_at
from editor.models import Message, Transcript, TranscriptQuerySet
from editor.search.words import SEARCH_WORD_CHARACTER, search_words, searched_text

# Characters of context shown on each side of the first hit.
SNIPPET_CONTEXT = 60

# Matching messages read first: when there are no more, their transcripts are the answer.
PROBE_MATCHES = 1_000
# Transcripts, first in the page's order, looked into to tell how many transcripts match.
SAMPLE_TRANSCRIPTS = 100
# Lists up to this long are counted exactly by looking into each transcript (SQLite: about
# 0.1 ms each); past it a search with many matches shows an estimate.
EXACT_COUNT_LIMIT = 2_000
# Transcripts a page may look into one by one (``probed_for``) rather than computing every
# match: on SQLite each costs 0.1-0.2 ms, and every match of a word in all of 100,000
# transcripts 1-4 s (docs/performance.md, Text search).
WALK_BUDGET = 1_000


def search_page(
    rows: TranscriptQuerySet, text: str, search_hidden: bool, number, per_page: int
) -> Page:
    """Page ``number`` of ``rows`` (filtered and sorted) keeping those with a message that
    contains ``text``, each with its ``snippet``: the same transcripts as
    ``rows.containing(text, …)``, found the cheapest way for their number.

    - At most ``PROBE_MATCHES`` matching messages (read first, in no order): the page
      filters on their transcripts' ids, counted exactly.
    - More, in a list of at most ``EXACT_COUNT_LIMIT`` transcripts: each one is looked into
      (``probed_for``), the page's in order until it is full, all of them for the count.
    - More, and enough of the list's first transcripts match that the page is found by
      looking into at most ``WALK_BUDGET`` transcripts in order: the sorted transcripts are
      looked into one by one until the page is full, and the count is an estimate
      (``EstimatedPaginator``): counting exactly means finding every match.
    - Otherwise every match is found (``containing``), counted exactly.
    """
    if not search_words(text):  # nothing searchable in it: no match
        return Paginator(rows.none(), per_page).get_page(number)
    first = _first_matches(rows.db, text, search_hidden)
    if len(first) <= PROBE_MATCHES:
        page = Paginator(rows.filter(pk__in=_transcripts_of(first)), per_page).get_page(number)
        found = _snippets_among([message_id for _, message_id in first], page, text, search_hidden)
    else:
        page = _page_of_many(rows, text, search_hidden, number, per_page)
        found = snippets([transcript.pk for transcript in page], text, search_hidden)
    for transcript in page:
        transcript.snippet = found.get(transcript.pk)
    return page


def rows_containing(
    rows: TranscriptQuerySet, text: str, search_hidden: bool, rows_needed: int
) -> TranscriptQuerySet:
    """``rows.containing(text, …)`` in the form that gives its first ``rows_needed`` rows
    fastest and is still counted in the time of every match (for lists that count exactly,
    such as the API's), chosen as ``search_page`` chooses. On SQLite the walk's form is not
    one of them: counted, it looks into every transcript, far slower than going through every
    match; PostgreSQL counts either form through every match."""
    if not search_words(text):
        return rows.none()
    first = _first_matches(rows.db, text, search_hidden)
    if len(first) <= PROBE_MATCHES:
        return rows.filter(pk__in=_transcripts_of(first))
    if not search.backend(rows.db).counts_probes_cheaply:
        return rows.containing(text, search_hidden)
    probed = rows.probed_for(text, search_hidden)
    share, whole = _sampled_share(rows, probed)
    if whole or _walk_fits(share, rows_needed):
        return probed
    return rows.containing(text, search_hidden)


def _page_of_many(rows, text: str, search_hidden: bool, number, per_page: int) -> Page:
    probed = rows.probed_for(text, search_hidden)
    total = rows.count()
    if total <= EXACT_COUNT_LIMIT:  # looking into each one, even to count them, is cheap
        return Paginator(probed, per_page).get_page(number)
    share, _ = _sampled_share(rows, probed)
    number = _page_number(number)
    if _walk_fits(share, number * per_page):
        page = EstimatedPaginator(probed, per_page, share * total).page(number)
        if page.object_list or number == 1:
            return page
    return Paginator(rows.containing(text, search_hidden), per_page).get_page(number)


def _transcripts_of(matches: list[tuple[int, int]]) -> list[int]:
    return sorted({transcript_id for transcript_id, _ in matches})


def _walk_fits(share: float, rows_needed: int) -> bool:
    """Whether ``rows_needed`` rows (and one more, to know if another page follows) are
    expected within ``WALK_BUDGET`` transcripts looked into, ``share`` of them matching."""
    return share > 0 and (rows_needed + 1) / share <= WALK_BUDGET


def _sampled_share(rows, probed) -> tuple[float, bool]:
    """The share of the first ``SAMPLE_TRANSCRIPTS`` of ``rows`` (in their order) that
    ``probed`` keeps, and whether those were all of ``rows``."""
    sample = list(rows.values_list("pk", flat=True)[:SAMPLE_TRANSCRIPTS])
    if not sample:
        return 0.0, True
    kept = probed.filter(pk__in=sample).count()
    return kept / len(sample), len(sample) < SAMPLE_TRANSCRIPTS


def _first_matches(db: str, text: str, search_hidden: bool) -> list[tuple[int, int]]:
    """``(transcript id, message id)`` of up to ``PROBE_MATCHES`` + 1 messages containing
    ``text``, in no particular order."""
    messages = Message.objects.using(db)
    return search.backend(db).first_matches(messages, text, search_hidden, PROBE_MATCHES + 1)


def _page_number(number) -> int:
    try:
        return max(1, int(number))
    except (TypeError, ValueError):
        return 1


class EstimatedPaginator(Paginator):
    """Pages of a list too long to count: ``count`` is an estimate (two significant
    digits), and a page is read with one row more to know whether another follows."""

    estimated = True

    def __init__(self, object_list, per_page: int, estimate: float):
        super().__init__(object_list, per_page)
        self.estimate = estimate
        self.known = 0  # rows seen to exist: the estimate never says fewer

    @cached_property
    def count(self) -> int:
        return max(self.known, int(float(f"{self.estimate:.2g}")))

    def page(self, number: int) -> Page:
        start = (number - 1) * self.per_page
        rows = list(self.object_list[start : start + self.per_page + 1])
        self.known = max(self.known, start + len(rows))
        return EstimatedPage(rows[: self.per_page], number, self, more=len(rows) > self.per_page)


class EstimatedPage(Page):
    def __init__(self, object_list, number: int, paginator: EstimatedPaginator, more: bool):
        super().__init__(object_list, number, paginator)
        self.more = more

    def has_next(self) -> bool:
        return self.more

    def next_page_number(self) -> int:
        return self.number + 1

    def previous_page_number(self) -> int:
        return self.number - 1

    def end_index(self) -> int:
        return self.start_index() + len(self.object_list) - 1


def snippets(transcript_ids: Iterable[int], query: str, search_hidden: bool) -> dict[int, str]:
    """``{transcript id: snippet HTML}`` for the transcripts of a page of a search with
    many matches (one query)."""
    hit = _hit_pattern(query)
    ids = list(transcript_ids)
    if hit is None or not ids:
        return {}
    # Each transcript's messages in order until the first that matches: where matches are
    # common (the only case this is called for) it is among the first few. Reading the
    # page's matches instead reads every match of a long transcript on PostgreSQL, and on
    # SQLite every match of the table first (FTS5 cannot be asked for the matches of a few
    # transcripts).
    first_match = (
        Message.objects.filter(transcript=OuterRef("pk"))
        .probed_for(query, search_hidden)
        .order_by("index")
        .values("pk")[:1]
    )
    found = Transcript.objects.filter(pk__in=ids).annotate(match=Subquery(first_match))
    return _snippets_of(found.values("match"), hit, search_hidden)


def _snippets_among(message_ids: list[int], page: Page, query: str, search_hidden: bool):
    """Snippets of the page's transcripts from ``message_ids``, every message that matches:
    no search needed, only their texts."""
    hit = _hit_pattern(query)
    transcripts = [transcript.pk for transcript in page]
    if hit is None or not transcripts:
        return {}
    matches = Message.objects.filter(pk__in=message_ids, transcript_id__in=transcripts)
    return _first_hits(matches, hit, search_hidden)


def _first_hits(matches, hit: re.Pattern, search_hidden: bool) -> dict[int, str]:
    """The snippet of the first of ``matches`` (matching messages) in each transcript: each
    match looked at once, by a window function (a correlated "first match of this
    transcript" searches the transcript again for every match)."""
    firsts = (
        matches.annotate(
            place=Window(RowNumber(), partition_by=F("transcript_id"), order_by=F("index").asc())
        )
        .filter(place=1)
        .values("pk")
    )
    return _snippets_of(firsts, hit, search_hidden)


def _snippets_of(message_ids, hit: re.Pattern, search_hidden: bool) -> dict[int, str]:
    """``{transcript id: snippet}`` of the messages ``message_ids`` (a subquery: one query in
    all), from the text that was searched in each. A content the row says where to find in
    its transcript's source text (``editor.db.message_text``) is read from as much of that text
    as it needs: a snippet of a 10,000-message transcript does not decompress all of it."""
    rows = Message.objects.filter(pk__in=message_ids).values_list(
        "transcript_id",
        "end_user_text",
        "stored_content",
        "content_start",
        "content_end",
        "content_escaped",
        Case(
            When(content_start__isnull=False, then=Cast("transcript__source_text", BinaryField())),
            default=None,
        ),
    )
    found = {}
    for transcript_id, end_user_text, stored, start, end, escaped, source in rows:
        content = (
            stored if start is None else content_at(unpack_prefix(source, end), start, end, escaped)
        )
        text = searched_text(content, end_user_text, search_hidden)
        found[transcript_id] = _snippet(text, hit)
    return found


def _hit_pattern(query: str) -> re.Pattern | None:
    words = search_words(query)
    if not words:
        return None
    return re.compile(
        "|".join(
            rf"(?<!{SEARCH_WORD_CHARACTER}){re.escape(word)}(?!{SEARCH_WORD_CHARACTER})"
            for word in sorted(words, key=len, reverse=True)
        ),
        re.IGNORECASE,
    )


def _snippet(text: str, hit: re.Pattern) -> SafeString:
    """``text`` around the first ``hit``, escaped, the hit in ``<mark>``."""
    match = hit.search(text)
    if match is None:  # found by PostgreSQL's parser where this pattern sees no word
        return escape(text[: 2 * SNIPPET_CONTEXT])
    start = max(0, match.start() - SNIPPET_CONTEXT)
    end = min(len(text), match.end() + SNIPPET_CONTEXT)
    # Safe: every piece of the text is escaped above; only the <mark> tags are ours.
    return mark_safe(
        ("…" if start else "")
        + escape(text[start : match.start()])
        + f"<mark>{escape(match.group())}</mark>"
        + escape(text[match.end() : end])
        + ("…" if end < len(text) else "")
    )
