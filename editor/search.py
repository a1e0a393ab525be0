"""Snippets of a text search: a short, escaped excerpt around the first hit of each listed
transcript, cut from the same text the search looked in (``MessageQuerySet.containing``), so
a viewer's snippet never shows what the end user may not see."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from editor.models import Message, search_words

# Characters of context shown on each side of the first hit.
SNIPPET_CONTEXT = 60


def snippets(transcript_ids: Iterable[int], query: str, search_hidden: bool) -> dict[int, str]:
    """``{transcript id: snippet HTML}`` for the transcripts of a page (one query)."""
    words = search_words(query)
    ids = list(transcript_ids)
    if not words or not ids:
        return {}
    hit = re.compile(
        "|".join(rf"\b{re.escape(word)}\b" for word in sorted(words, key=len, reverse=True)),
        re.IGNORECASE,
    )
    # Only the first matching message of each transcript is kept, however many match: each
    # matching message is looked at once (a correlated "first match of this transcript"
    # subquery searched the whole transcript again for every match: 150 ms a page).
    rows = (
        Message.objects.filter(transcript_id__in=ids)
        .containing(query, search_hidden)
        .annotate(
            place=Window(RowNumber(), partition_by=F("transcript_id"), order_by=F("index").asc())
        )
        .filter(place=1)
        .searched_text(search_hidden)
        .values_list("transcript_id", "searched_text")
    )
    return {transcript_id: _snippet(text, hit) for transcript_id, text in rows}


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
