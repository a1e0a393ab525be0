"""The control-token scanner shared by every ``<|name|>`` text format.

    token    = "<|" NAME "|>"          ; NAME in the format's vocabulary
    escape   = "<" token               ; OpenChatML 2.2 §3: ``<<|start|>`` is the text ``<|start|>``
    literal  = "<|literal|>" *OCTET "<|endliteral|>"   ; opaque: nothing inside is scanned
    unknown  = "<|" NAME "|>"          ; NAME not in the vocabulary: text, reported by callers

A ``<|literal|>`` that is never closed yields an ``UNTERMINATED_LITERAL`` token covering the
opener only, and scanning goes on after it: one missing ``<|endliteral|>`` must not swallow the
rest of the document (callers report it). Literal matching stops from there on, since no
later opener can have a closer either.

One left-to-right pass with a regular expression that cannot backtrack (no nested
quantifiers), plus ``str.find`` to jump over literal blocks, so time is linear in the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

TOKEN_RE = re.compile(r"<(<?)\|([A-Za-z_][A-Za-z0-9_]{0,63})\|>")
LITERAL_OPEN = "<|literal|>"
LITERAL_CLOSE = "<|endliteral|>"
LITERAL_NAMES = frozenset({"literal", "endliteral"})

# Kinds of items the scanner yields besides the vocabulary's own token names.
ESCAPE = "#escape"  # `<<|x|>`: text
UNKNOWN = "#unknown"  # `<|x|>` with x outside the vocabulary: text
LITERAL = "#literal"  # a whole `<|literal|>…<|endliteral|>` block: text
UNTERMINATED_LITERAL = "#unterminated-literal"  # a `<|literal|>` opener with no closer after it


class Token(NamedTuple):
    kind: str  # a vocabulary name (``start``, ``message``, …) or one of the ``#`` kinds
    start: int
    end: int


def token(name: str) -> str:
    return f"<|{name}|>"


def scan(
    src: str,
    vocabulary: frozenset[str],
    *,
    escapes: bool = False,
    literals: bool = False,
    pos: int = 0,
    endpos: int | None = None,
) -> list[Token]:
    """Every control token of ``src[pos:endpos]``, in order; the text between them is implied."""
    stream = TokenStream(src, vocabulary, escapes=escapes, literals=literals, endpos=endpos)
    return list(stream.tokens(pos))


class TokenStream:
    """``scan`` as a lazy iterator that can be restarted at any offset.

    Parsers that slice well-formed text with ``str.find`` fall back to it for the odd part;
    it remembers from where on no literal closer exists, so restarts stay linear in total.
    """

    def __init__(
        self,
        src: str,
        vocabulary: frozenset[str],
        *,
        escapes: bool = False,
        literals: bool = False,
        endpos: int | None = None,
    ):
        self.src = src
        self.vocabulary = vocabulary
        self.escapes = escapes
        self.literals = literals
        self.endpos = len(src) if endpos is None else endpos
        self._no_closer_from = self.endpos + 1  # no LITERAL_CLOSE starts at or after this

    def tokens(self, pos: int = 0) -> Iterator[Token]:
        src = self.src
        vocabulary = self.vocabulary
        escapes = self.escapes
        literals = self.literals
        end_limit = self.endpos
        search = TOKEN_RE.search
        while True:
            match = search(src, pos, end_limit)
            if match is None:
                return
            start, end = match.span()
            escaped, name = match.group(1, 2)
            if escaped:
                if escapes and (name in vocabulary or (literals and name in LITERAL_NAMES)):
                    yield Token(ESCAPE, start, end)
                    pos = end
                    continue
                start += 1  # the first `<` is plain text; the token begins at the second
            if literals and name == "literal":
                close = -1
                if end < self._no_closer_from:
                    close = src.find(LITERAL_CLOSE, end, end_limit)
                if close == -1:
                    self._no_closer_from = min(self._no_closer_from, end)
                    yield Token(UNTERMINATED_LITERAL, start, end)
                    pos = end
                    continue
                yield Token(LITERAL, start, close + len(LITERAL_CLOSE))
                pos = close + len(LITERAL_CLOSE)
                continue
            yield Token(name if name in vocabulary else UNKNOWN, start, end)
            pos = end


def unescape(text: str, vocabulary: frozenset[str]) -> str:
    """The logical text of a 2.2 body: escapes resolved, literal blocks unwrapped."""
    if "<" not in text:
        return text
    parts: list[str] = []
    pos = 0
    for tok in scan(text, vocabulary, escapes=True, literals=True):
        parts.append(text[pos : tok.start])
        raw = text[tok.start : tok.end]
        if tok.kind == ESCAPE:
            parts.append(raw[1:])
        elif tok.kind == LITERAL:
            parts.append(raw[len(LITERAL_OPEN) : -len(LITERAL_CLOSE)])
        elif tok.kind != UNTERMINATED_LITERAL:  # a dangling opener carries no text
            parts.append(raw)
        pos = tok.end
    parts.append(text[pos:])
    return "".join(parts)


def escape(text: str, vocabulary: frozenset[str]) -> str:
    """Write logical text as a 2.2 body: every control token gets the `<<|` escape.

    A body cannot end in `<`: with the terminator after it, `<<|end|>` would read as an
    escape. A trailing run of `<` is therefore written inside a literal block, where the
    scanner looks only for `<|endliteral|>`.
    """
    parts: list[str] = []
    pos = 0
    if "<|" in text:
        for match in TOKEN_RE.finditer(text):
            start, end = match.span()
            if match.group(1):
                start += 1
            if match.group(2) in vocabulary or match.group(2) in LITERAL_NAMES:
                parts.append(text[pos:start])
                parts.append("<" + text[start:end])
                pos = end
    tail = text[pos:]
    body = tail.rstrip("<")
    parts.append(body)
    if len(body) < len(tail):
        parts.append(LITERAL_OPEN + tail[len(body) :] + LITERAL_CLOSE)
    return "".join(parts)
