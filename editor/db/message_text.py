"""A message's text kept once: where its content is in its transcript's source text.

Every message's content is also in the transcript's source text, which is stored compressed
(``editor.db.compressed``). A Message row whose content is found there keeps only where
(``Message.content_start`` … ``content_end``) instead of a second, uncompressed copy: the
message text of a transcript is most of a database's size (docs/storage.md, "Message text").

A span is either the content itself, character for character (the token formats:
``<|message|>…<|end|>``), or a JSON string literal whose value is the content (the JSON
formats, where the source holds ``"Line one\\nLine two"``): ``escaped``. Spans are found by
looking for the content (or its JSON literal), never by trusting a parser's idea of where it
was, so each gives the content back exactly; a content not found keeps its copy in the row.
Where a span points does not matter (the same words in a message's header would do), only
that it gives the content back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

# Contents shorter than this stay in their row: a span (two integers and a flag) would take
# about as many bytes, and a source's markup is full of short words a search could hit first.
MIN_SPANNED_LENGTH = 16


class Span(NamedTuple):
    start: int
    end: int
    escaped: bool  # source[start:end] is a JSON string literal of the content


def content_at(source: str, start: int, end: int, escaped: bool) -> str:
    """The content a span of ``source`` holds."""
    text = source[start:end]
    return json.loads(text) if escaped else text


def locate(source: str, contents: Sequence[str]) -> list[Span | None]:
    """Where each of ``contents`` (a transcript's messages' contents, in order) is in
    ``source``, or None where it stays in its row.

    Messages are written in order, so each is looked for after the previous one found: one
    pass over the source. A content found too early (in another message's markup) only makes
    the following ones be looked for further on; they stay in their rows if not found."""
    spans: list[Span | None] = []
    position = 0
    for content in contents:
        span = _find(source, content, position) if len(content) >= MIN_SPANNED_LENGTH else None
        spans.append(span)
        if span is not None:
            position = span.end
    return spans


def _find(source: str, content: str, position: int) -> Span | None:
    start = source.find(content, position)
    if start >= 0:
        return Span(start, start + len(content), False)
    # A JSON source: the content as a string literal, written as most writers escape.
    for literal in dict.fromkeys((json.dumps(content), json.dumps(content, ensure_ascii=False))):
        start = source.find(literal, position)
        if start >= 0:
            return Span(start, start + len(literal), True)
    return None
