"""Reading a JSONL source: one candidate per line, no line ever held past the line limit.

Each line is read by ``editor.formats.jsonl`` (the one reader of the envelope, shared with
``ocm validate``); this module bounds the lines and numbers them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO

from editor.formats import jsonl
from editor.importing import limits, preference
from editor.importing.candidates import Candidate, unreadable
from editor.importing.report import ImportReport


def first_line(stream: IO[bytes]) -> bytes:
    """The first line of ``stream``, read with the line limit (what tells a JSONL source)."""
    return stream.readline(limits.MAX_LINE_BYTES + 1)


def is_message_line(line: bytes) -> bool:
    """A JSON line that is one *message* (``{"role": …}``), not a transcript or an envelope:
    the file is an openchatml-json transcript written as JSON Lines, one message a line."""
    return not jsonl.is_dataset(line)


def bounded_lines(stream: IO[bytes], first: bytes = b"") -> Iterator[bytes | int]:
    """The lines of ``stream`` after ``first`` (its first line, already read with the same
    bound), none read with more than ``MAX_LINE_BYTES`` in memory: a line longer than that
    is skipped piece by piece and given as its length instead."""
    bound = limits.MAX_LINE_BYTES
    line = first or stream.readline(bound + 1)
    while line:
        if len(line) <= bound or line.endswith(b"\n"):
            yield line
        else:
            skipped = len(line)
            while line and not line.endswith(b"\n"):
                line = stream.readline(bound + 1)
                skipped += len(line)
            yield skipped
        line = stream.readline(bound + 1)


def read_jsonl(
    lines: Iterable[bytes | int],
    name: str,
    report: ImportReport,
    spec: str | None,
    shape: str | None = None,
) -> Iterator[Candidate]:
    """One candidate per non-blank line, read in ``spec`` unless it names its own; a line
    that is not UTF-8, not JSON (nested deeper than ``formats.MAX_JSON_DEPTH`` included), not
    a transcript or longer than ``MAX_LINE_BYTES`` is a failed item of its own, and reading
    goes on. A preference row (``editor.importing.preference``: recognised by its keys, or
    every line with ``shape`` preference or hh) is a transcript with its pair; once one is
    seen, every later line is read as a row. A transcript's line is given unread
    (``Candidate.read``): it is decoded where it is parsed."""
    for number, raw in enumerate(lines, start=1):
        location = f"{name}:{number}"
        if isinstance(raw, int):
            report.bytes_read += raw
            yield unreadable(
                location,
                "line-too-long",
                f"line {number} is longer than {limits.amount(limits.MAX_LINE_BYTES)}; "
                "not one transcript",
            )
            continue
        report.bytes_read += len(raw)
        line = jsonl.record_line(raw)
        if not line.strip():
            continue
        if preference.is_row_line(line, shape):
            value = preference.row_value(line)
            if value is not None and preference.wants_rows(value, shape):
                # A file of preference rows: its later lines are rows too, even a bad one.
                shape = shape or preference.PREFERENCE
                yield preference.row_candidate(value, location, number, spec, shape)
                continue
        yield Candidate(location, line=line, number=number, spec=spec)  # read where parsed
