"""Incremental parsing of any token-text spec: feed chunks, get each message once it is complete.

    stream  = prologue segment *segment
    segment = message-start … up to the next message-start   ; one message and its gap

A message of a token-text spec runs from its message-start token (``Codec.message_start``)
to the next one, so the stream is cut at those tokens (never inside a YAML header, a literal
block or an escape) and every segment is parsed by the spec's own whole-text parser: the
messages are the same (``==``) as a whole-text parse however the text was chunked. The first
segment also holds the prologue (header, text before the first message).

Each character is searched once (plus a few characters of overlap, for a token split across
chunks) and joined into a segment string at most twice, so the work is linear in the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

from .codecs import header as yaml_header
from .codecs.openchatml2 import DIALECTS, UNCLOSED_TEXT
from .codecs.scanner import LITERAL_CLOSE
from .diagnostics import ERROR, Diagnostic, Diagnostics, Edit, Fix
from .model import Message, Transcript
from .specs import get_codec

TRUNCATED = "E-STREAM-TRUNCATED"
PROMPT = "I-PARSE-COMPLETION-PROMPT"
UNCLOSED = "E-PARSE-UNCLOSED-MESSAGE"
OPEN_END_CODES = frozenset({TRUNCATED, PROMPT})
OVERLAP = 80  # longer than any token (`<<|` + 64-character name + `|>`): a split token is re-found


class StreamParser:
    """``feed(chunk)`` returns the messages completed so far; ``close()`` the rest."""

    def __init__(self, spec: str):
        codec = get_codec(spec)
        if codec.message_start is None:
            raise ValueError(f"{spec} is not a token-text spec; parse it whole")
        self.spec = spec
        self.diagnostics: list[Diagnostic] = []
        self.header: dict = {}
        self._parse = codec.parse
        dialect = DIALECTS.get(spec)
        self._escapes = dialect is not None and dialect.escapes
        self._yaml_header = dialect is not None and dialect.yaml_header
        name = re.escape(codec.message_start[2:-2])
        names = f"{name}|literal" if self._escapes else name
        self._token_re = re.compile(r"<(<?)\|(" + names + r")\|>")
        self._chunks: list[str] = []  # the text from _chunks_at on
        self._chunks_at = 0
        self._total = 0  # characters fed so far
        self._searched = 0  # tokens ending before this offset have been seen
        self._tail = ""  # the last OVERLAP characters fed, for tokens split across chunks
        self._scan_from: int | None = None if self._yaml_header else 0  # the header's end
        self._next_header_try = 0
        self._literal_end: int | None = None  # inside a literal block opened up to here
        self._seen_start = False
        self._segment_at = 0  # where the pending segment begins
        self._cuts: list[int] = []
        self._emitted = 0
        self._lines = 0  # newlines before _segment_at
        self._column = 1  # column of _segment_at
        self._closed = False

    def feed(self, chunk: str) -> list[Message]:
        if self._closed:
            raise ValueError("feed() after close()")
        if not chunk:
            return []
        old_total = self._total
        self._chunks.append(chunk)
        self._total += len(chunk)
        window_at = old_total - len(self._tail)
        window = self._tail + chunk
        self._tail = window[-OVERLAP:]
        if self._scan_from is None:
            if self._total < self._next_header_try:
                return []
            if not self._find_header(final=False):
                self._next_header_try = 2 * self._total
                return []
            window_at = self._chunks_at
            window = "".join(self._chunks)
            self._chunks = [window]
        self._search(window, window_at)
        return self._emit_ready()

    def close(self) -> list[Message]:
        """The messages not yet returned; E-STREAM-TRUNCATED when the text stops inside one."""
        if self._closed:
            return []
        self._closed = True
        if self._scan_from is None:
            self._find_header(final=True)
        messages = self._emit_ready()
        if self._segment_at == self._total and self._emitted:
            return messages
        text = "".join(self._chunks)[self._segment_at - self._chunks_at :]
        self._chunks = []
        parsed, items = self._parse_segment(text)
        last = parsed[-1] if parsed else None
        if last is not None and last.end is None:
            index = self._emitted + len(parsed) - 1
            kept = [d for d in items if not (d.code == PROMPT and d.message_index == index)]
            if not any(d.code == TRUNCATED and d.message_index == index for d in kept):
                sink = Diagnostics(text)
                added = sink.add(
                    TRUNCATED,
                    len(text),
                    "The stream ended inside a message: no stop token",
                    message_index=index,
                )
                kept += self._relocate([added], text, 0)
            items = kept
        self.diagnostics += items
        self._emitted += len(parsed)
        return messages + parsed

    # --- finding cut points -----------------------------------------------------------------

    def _find_header(self, *, final: bool) -> bool:
        text = "".join(self._chunks)
        self._chunks = [text] if text else []
        span = yaml_header.find_header(text, final=final)
        if span is None:
            return False
        self._scan_from = span.end
        return True

    def _search(self, window: str, window_at: int) -> None:
        """Record the message starts in ``window`` (text from offset ``window_at``) not seen yet."""
        pos = max(0, self._scan_from - window_at, self._searched - window_at - OVERLAP)
        while True:
            if self._literal_end is not None:
                close = window.find(LITERAL_CLOSE, max(pos, self._literal_end - window_at))
                if close == -1:
                    break
                pos = close + len(LITERAL_CLOSE)
                self._literal_end = None
                continue
            match = self._token_re.search(window, pos)
            if match is None:
                break
            start, end = match.span()
            pos = end
            if window_at + end <= self._searched:
                continue
            escaped, name = match.group(1, 2)
            if escaped:
                if self._escapes:
                    continue
                start += 1
            if name == "literal":
                self._literal_end = window_at + end
                continue
            if self._seen_start:
                self._cuts.append(window_at + start)
            self._seen_start = True
        self._searched = window_at + len(window)

    # --- parsing segments -------------------------------------------------------------------

    def _emit_ready(self) -> list[Message]:
        if not self._cuts:
            return []
        text = "".join(self._chunks)
        base = self._chunks_at
        out: list[Message] = []
        for cut in self._cuts:
            segment = text[self._segment_at - base : cut - base]
            parsed, items = self._parse_segment(segment)
            if parsed and parsed[-1].end is None:
                items = self._unclosed(items, segment, self._emitted + len(parsed) - 1)
            self.diagnostics += items
            self._emitted += len(parsed)
            self._advance(segment)
            out += parsed
        self._cuts = []
        rest = text[self._segment_at - base :]
        self._chunks = [rest] if rest else []
        self._chunks_at = self._segment_at
        return out

    def _parse_segment(self, text: str) -> tuple[list[Message], list[Diagnostic]]:
        sink = Diagnostics(text)
        transcript: Transcript = self._parse(text, sink)
        if self._segment_at == 0:
            self.header = transcript.header
        for message in transcript.messages:
            if message.source is not None:
                message.source = replace(
                    message.source, start=message.source.start + self._segment_at
                )
        return transcript.messages, self._relocate(sink.items, text, self._emitted)

    def _relocate(self, items: list[Diagnostic], text: str, first_index: int) -> list[Diagnostic]:
        """Positions in the segment ``text`` as positions in the whole stream."""
        out = []
        shift = self._segment_at
        for d in items:
            index = d.message_index
            fix = d.fix
            if fix is not None and shift:
                edits = tuple(
                    Edit(e.start + shift, e.end + shift, e.replacement) for e in fix.edits
                )
                fix = Fix(fix.title, edits)
            out.append(
                replace(
                    d,
                    fix=fix,
                    offset=d.offset + shift,
                    line=d.line + self._lines,
                    column=d.column + self._column - 1 if d.line == 1 else d.column,
                    message_index=None if index is None else index + first_index,
                )
            )
        return out

    def _unclosed(self, items: list[Diagnostic], segment: str, index: int) -> list[Diagnostic]:
        """A message cut off by the next message-start: what the whole-text parser reports."""
        end = self._segment_at + len(segment)
        out = []
        for d in items:
            if d.code in OPEN_END_CODES and d.message_index == index and d.offset == end:
                d = replace(d, code=UNCLOSED, severity=ERROR, message=UNCLOSED_TEXT)
            out.append(d)
        return out

    def _advance(self, segment: str) -> None:
        newlines = segment.count("\n")
        if newlines:
            self._lines += newlines
            self._column = len(segment) - segment.rfind("\n")
        else:
            self._column += len(segment)
        self._segment_at += len(segment)


def iter_messages(chunks: Iterable[str], spec: str) -> Iterator[Message]:
    """Each message of the text made of ``chunks``, as soon as it is complete."""
    parser = StreamParser(spec)
    for chunk in chunks:
        yield from parser.feed(chunk)
    yield from parser.close()


def message_cuts(text: str, spec: str) -> list[int]:
    """The offsets where ``iter_messages`` cuts the whole ``text`` (each message-start token
    after the first), found in one pass without parsing a segment. Where every segment holds
    one message (its count is the message count less one), message ``k`` begins at
    ``cuts[k - 1]``. ValueError for a spec with no message-start token."""
    parser = StreamParser(spec)
    parser._chunks, parser._total = [text], len(text)
    if parser._scan_from is None:
        parser._find_header(final=True)
    parser._search(text, 0)
    return parser._cuts
