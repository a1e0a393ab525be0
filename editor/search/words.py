"""What a search looks for: the words of a query, as both databases' full-text tokenizers
cut them, and the longest query accepted."""

from __future__ import annotations

import re

# A character of a search word: what both backends' tokenizers keep in a token (letters and
# digits). Not the underscore, which both split words at, nor 21 signs of the New Tai Lue and
# Vedic blocks that Python's Unicode data makes letters and SQLite's unicode61 tokenizer does
# not (tests/editor/test_search.py compares every character with the tokenizer in use).
# Taking only these from the user's query makes any input a valid FTS5 query: no quote,
# star, parenthesis or NEAR of the user's reaches its syntax, and no word is two tokens (a
# phrase, which the search table, keeping no positions, refuses: migration 0021).
SEARCH_WORD_CHARACTER = r"[^\W_\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3]"


SEARCH_WORD_RE = re.compile(SEARCH_WORD_CHARACTER + "+")


# The longest search accepted (in characters): longer is refused with a clear error (4xx).
MAX_SEARCH_LENGTH = 500


def search_words(query: str) -> list[str]:
    return SEARCH_WORD_RE.findall(query)


def searched_text(content: str, end_user_text: str | None, search_hidden: bool) -> str:
    """What a search looks into in a message (``MessageQuerySet.containing``): its
    content, or what the end user sees of it where that differs and hidden parts are not searched."""
    return content if search_hidden or end_user_text is None else end_user_text
