"""The raw-source page of a very long transcript: a read-only window of its text, not the
whole of it (docs/performance.md, "Huge transcripts").

A source up to ``SOURCE_EDITOR_MAX_CHARS`` is edited whole in the page (a textarea over its
highlighting). A longer one was answered as one page holding it twice (the textarea and the
highlighted copy, a mark per control token): 106 MB of HTML for a 19.5 MB transcript. It is
shown instead ``SOURCE_WINDOW_CHARS`` at a time, highlighted, with links to the windows
before and after it; it is edited message by message on the transcript page, or replaced
whole through the API.

A window of a token-text spec begins and ends at message-start tokens
(``formats.stream.message_cuts``), where no control token, escape or literal block is cut,
so its highlighting is the whole text's; a JSON document's windows end at line ends. Only a
single message (or line) longer than a window is cut inside.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from editor.formats.stream import message_cuts

SOURCE_EDITOR_MAX_CHARS = 500_000
SOURCE_WINDOW_CHARS = 100_000


@dataclass(frozen=True)
class SourceWindow:
    text: str  # source[start:end]
    start: int
    end: int
    length: int  # of the whole source, in characters
    first_line: int  # the line number of the window's first line
    line_count: int  # lines of the whole source
    previous: int | None  # where the window before this one starts (None: this is the first)

    @property
    def next(self) -> int | None:
        return self.end if self.end < self.length else None

    @property
    def last_line(self) -> int:
        """The number of the window's last line (a line end closing the window opens none)."""
        return self.first_line + self.text.count("\n", 0, max(len(self.text) - 1, 0))

    @property
    def line_numbers(self) -> range:
        return range(self.first_line, self.last_line + 1)


def is_windowed(source: str) -> bool:
    """Whether the source page shows ``source`` a window at a time (read-only)."""
    return len(source) > SOURCE_EDITOR_MAX_CHARS


def source_window(
    source: str, spec: str, *, at: int | None = None, line: int | None = None
) -> SourceWindow:
    """The window of ``source`` that starts at offset ``at`` (as a window's ``next`` or
    ``previous`` gives it), or the one holding line ``line`` (a diagnostic's), else the
    first one."""
    cuts = _Cuts(source, spec)
    if at is not None:
        start = min(max(at, 0), len(source))
    elif line is not None and line > 1:
        start = cuts.at_or_before(_line_offset(source, line))
    else:
        start = 0
    end = cuts.window_end(start)
    previous = None if start == 0 else cuts.window_start_before(start)
    return SourceWindow(
        text=source[start:end],
        start=start,
        end=end,
        length=len(source),
        first_line=source.count("\n", 0, start) + 1,
        line_count=source.count("\n") + 1,
        previous=previous,
    )


def _line_offset(source: str, line: int) -> int:
    """Where line ``line`` (from 1) begins; the end of the text past its last line."""
    at = 0
    for _ in range(line - 1):
        found = source.find("\n", at)
        if found == -1:
            return len(source)
        at = found + 1
    return at


class _Cuts:
    """Where a window may begin or end: message starts (token-text specs), else line starts."""

    def __init__(self, source: str, spec: str):
        self.source = source
        try:
            self.starts: list[int] | None = [0, *message_cuts(source, spec)]
        except ValueError:  # a JSON document: no message-start token
            self.starts = None

    def at_or_before(self, offset: int) -> int:
        if self.starts is None:
            return self.source.rfind("\n", 0, offset) + 1 if offset else 0
        return self.starts[max(bisect_right(self.starts, offset) - 1, 0)]

    def at_or_after(self, offset: int) -> int:
        if self.starts is None:
            if offset == 0:
                return 0
            found = self.source.find("\n", offset - 1)  # a line starts after each line end
            return found + 1 if found != -1 else len(self.source)
        index = bisect_left(self.starts, offset)
        return self.starts[index] if index < len(self.starts) else len(self.source)

    def window_end(self, start: int) -> int:
        limit = start + SOURCE_WINDOW_CHARS
        if limit >= len(self.source):
            return len(self.source)
        cut = self.at_or_before(limit)
        return cut if cut > start else limit  # one message (line) longer than a window

    def window_start_before(self, start: int) -> int:
        earliest = max(start - SOURCE_WINDOW_CHARS, 0)
        cut = self.at_or_after(earliest)
        return cut if cut < start else earliest
