"""JSONL datasets: one transcript a line, validated or converted record by record.

    dataset  = *(record LF)
    record   = [BOM] (document / envelope / blank)
    document = a JSON document of any JSON spec (an object or an array), on one line
    envelope = {"text" | "document", "spec"?, "id"?, "title"?, "metadata"?, "status"?, …}

This module is the one reader of a record, for ``ocm`` and for the importer alike
(``read_record`` for a line, ``read_value`` for a value decoded elsewhere: a file holding one
envelope, an item of a JSON array); docs/formats.md says how an envelope is read. A record's
diagnostics keep the positions of its own transcript text (for a bare document, the line
itself: line 1, the column in the file). A line that is not UTF-8 or not JSON is one
E-PARSE-JSON diagnostic for that record, anything else that is not a transcript (a JSON
scalar, an envelope field of the wrong kind, an unknown spec id) one E-PARSE-SHAPE; the
dataset goes on.

Records are independent, so ``jobs`` worker processes share them: the lines go out in
batches and the reports come back in order. A file whose first line is a single message
(``{"role": …}``) is not a dataset but one openchatml-json transcript written as JSON Lines
(``is_dataset`` says which), as the importer reads it.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import Any, BinaryIO

from .codecs import json_depth, json_support
from .convert import convert
from .detect import classify
from .diagnostics import Diagnostic, Diagnostics
from .parsing import ParseResult, parse, parse_read
from .specs import SPEC_IDS, TEXT_SPECS, is_spec, spec_ids
from .validate import validate_parsed  # here, not per record: workers fork with it

BODY_KEYS = ("text", "document")
TRANSCRIPT_KEYS = (*BODY_KEYS, "messages", "conversations", "thread")
DATASET_SUFFIXES = (".jsonl", ".ndjson")
UTF8_BOM = "\ufeff".encode()
# The envelope's optional fields and the JSON type each must have (null: as if absent).
ENVELOPE_FIELDS = (
    ("spec", str, "a string"),
    ("title", str, "a string"),
    ("metadata", dict, "an object"),
    ("status", str, "a string"),
)
# Why a record holds no transcript, for programs (the importer's item codes).
NOT_UTF8 = "not-utf8"
INVALID_JSON = "invalid-json"
INVALID_ENVELOPE = "invalid-envelope"
UNKNOWN_SPEC = "unknown-spec"
# What a worker is sent at a time: large enough that sending is a small share of the work.
BLOCK_BYTES = 1 << 20  # read from a stream
BATCH_LINES = 512  # lines given one by one


@dataclass(slots=True)
class Record:
    """One line of a dataset, once read: its transcript text and spec, or why it has none."""

    number: int  # 1-based line number in the file
    text: str | None = None
    # The envelope's "spec", else the reader's, else (a bare document) the one its shape shows.
    spec: str | None = None
    external_id: str = ""  # the envelope's "id", or a bare document's top-level "id"
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    status: str = ""  # the envelope's review state, as written (the workflow's to check)
    envelope: dict[str, Any] | None = None  # the envelope's other keys, kept on conversion
    # An envelope that names its spec and has an empty body ("text": "", "document": []): an
    # empty transcript, what an export writes for one whose every message the spec drops.
    empty: bool = False
    problem: Diagnostic | None = None
    reason: str = ""  # the problem's kind for programs: NOT_UTF8, INVALID_JSON…
    document: json_support.Node | None = None  # a bare document, as read


@dataclass(slots=True)
class RecordReport:
    number: int
    spec: str | None
    messages: int
    diagnostics: list[Diagnostic]
    output: str | None = None  # the converted record (convert only)
    losses: list[str] = field(default_factory=list)

    def __reduce__(self):
        # Reports come back from the workers by the thousand: pickled as the tuple of their
        # fields, not a class's state dict (which pickles much slower).
        fields = (self.number, self.spec, self.messages, self.diagnostics, self.output)
        return RecordReport, (*fields, self.losses)


def record_line(line: bytes) -> bytes:
    """A line as its record: without its line end or a leading byte order mark (an encoding
    artefact, not content; files joined with ``cat`` may have one at the start of any line)."""
    return line.rstrip(b"\r\n").removeprefix(UTF8_BOM)


def is_dataset(first_line: bytes) -> bool:
    """False when the first line is one message: the file is then one openchatml-json
    transcript in JSON Lines, not a dataset of transcripts."""
    try:
        value = json_depth.loads(record_line(first_line).decode("utf-8", "replace"))
    except ValueError:
        return True
    return not (
        isinstance(value, dict)
        and isinstance(value.get("role"), str)
        and not any(key in value for key in TRANSCRIPT_KEYS)
    )


def read_record(number: int, raw: bytes, spec: str | None, *, located: bool = True) -> Record:
    """The transcript written on line ``raw`` (a ``record_line``), read by ``read_value``.
    A bare document read ``located=False`` has no positions (``json_support.read_unlocated``)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        message = f"The line is not UTF-8 (invalid byte at column {err.start + 1})"
        return _unreadable(number, "", NOT_UTF8, message)
    try:
        document = (json_support.read_document if located else json_support.read_unlocated)(line)
    except json.JSONDecodeError as walk_err:
        err = json_support.decoder_error(line) or walk_err
        message = f"The line is not valid JSON: {err.msg} (column {err.pos + 1})"
        return _unreadable(number, line, INVALID_JSON, message, err.pos)
    return read_value(line, document.value, spec, number=number, document=document)


def read_value(
    text: str,
    value: Any,
    spec: str | None = None,
    *,
    number: int = 1,
    document: json_support.Node | None = None,
) -> Record:
    """The transcript that ``value``, decoded from ``text``, holds.

    An object with "text" or "document" is an envelope: its body is the transcript, in the
    envelope's "spec", else in ``spec``. Any other object or array is a bare document (its
    ``text`` is the transcript), in ``spec``, else in the spec its shape shows (detected from
    the decoded value: the text is decoded once), and a top-level "id" it has names it. A
    JSON scalar holds no transcript."""
    if isinstance(value, dict) and not value.keys().isdisjoint(BODY_KEYS):
        return _envelope(number, text, value, spec)
    if isinstance(value, dict):
        external_id = _external_id(value.get("id"))
    elif isinstance(value, list):
        external_id = ""
    else:
        message = "expected a JSON object or array: a transcript or an envelope"
        return _unreadable(number, text, INVALID_ENVELOPE, message)
    spec = spec or classify(value)
    return Record(number, text=text, spec=spec, external_id=external_id, document=document)


def _envelope(number: int, text: str, value: dict[str, Any], spec: str | None) -> Record:
    """An envelope's transcript, or the first reason it has none: a field of the wrong type,
    both bodies (one would be lost), a spec id no codec has."""
    if "text" in value and "document" in value:
        return _unreadable(number, text, INVALID_ENVELOPE, 'give "text" or "document", not both')
    if "text" in value:
        body = value["text"]
        if not isinstance(body, str):
            return _unreadable(number, text, INVALID_ENVELOPE, '"text" must be a string')
        empty = not body.strip()
    else:
        body = json.dumps(value["document"], ensure_ascii=False)
        empty = value["document"] in ([], {})
    for key, kind, what in ENVELOPE_FIELDS:
        if value.get(key) is not None and not isinstance(value[key], kind):
            return _unreadable(number, text, INVALID_ENVELOPE, f'"{key}" must be {what}')
    identifier = value.get("id")
    if identifier is not None and (
        isinstance(identifier, bool) or not isinstance(identifier, (str, int))
    ):
        return _unreadable(number, text, INVALID_ENVELOPE, '"id" must be a string or an integer')
    named = value.get("spec")
    if named is not None and not is_spec(named):
        message = f'Unknown spec id {named!r} in "spec"; expected one of: {", ".join(spec_ids())}'
        return _unreadable(number, text, UNKNOWN_SPEC, message)
    return Record(
        number,
        text=body,
        spec=named or spec,
        external_id=_external_id(identifier),
        title=value.get("title") or "",
        metadata=value.get("metadata") or {},
        status=value.get("status") or "",
        envelope={k: v for k, v in value.items() if k not in (*BODY_KEYS, "spec")},
        empty=named is not None and empty,
    )


def _external_id(value: Any) -> str:
    """An "id" as the text it names: a string, or an integer written in decimal."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    return ""


def _unreadable(number: int, text: str, reason: str, message: str, offset: int = 0) -> Record:
    code = "E-PARSE-JSON" if reason in (NOT_UTF8, INVALID_JSON) else "E-PARSE-SHAPE"
    sink = Diagnostics(text)
    sink.add(code, offset, message)
    return Record(number, problem=sink.items[0], reason=reason)


def _parse(record: Record) -> ParseResult:
    if record.document is not None and record.spec in SPEC_IDS:
        return parse_read(record.text, record.document, record.spec)
    return parse(record.text, spec=record.spec)


def validate_record(number: int, line: bytes, spec: str | None) -> RecordReport:
    """Most records of a dataset are clean, and a clean record shows no position: it is
    read without any (``json`` alone, the cost of the walk that locates every message
    saved). A record with a diagnostic is read again, located, for the diagnostics' positions
    (the rules find the same problems whether or not positions are known)."""
    record = read_record(number, line, spec, located=False)
    report = _validated(record)
    if report.diagnostics and record.document is not None:
        report = _validated(read_record(number, line, spec))
    return report


def _validated(record: Record) -> RecordReport:
    if record.problem is not None:
        return RecordReport(record.number, None, 0, [record.problem])
    transcript, diagnostics = validate_parsed(record.text, _parse(record))
    return RecordReport(record.number, transcript.spec, len(transcript.messages), diagnostics)


def convert_record(number: int, line: bytes, spec: str | None, to: str) -> RecordReport:
    """The record written in ``to``, on one line: a bare compact document for a JSON spec,
    ``{"text", "spec"}`` for a text spec; an input envelope stays an envelope."""
    record = read_record(number, line, spec)
    if record.problem is not None:
        return RecordReport(number, None, 0, [record.problem])
    transcript, diagnostics = _parse(record)
    report = RecordReport(number, transcript.spec, len(transcript.messages), diagnostics)
    if not transcript.messages:
        return report
    text, losses = convert(transcript, to=to)
    report.losses = [str(loss) for loss in losses]
    if to in TEXT_SPECS:
        value: Any = {**(record.envelope or {}), "text": text, "spec": to}
    elif record.envelope is not None:
        value = {**record.envelope, "document": json.loads(text), "spec": to}
    else:
        value = json.loads(text)
    report.output = json.dumps(value, ensure_ascii=False)
    return report


def numbered_lines(lines: Iterable[bytes], start: int = 1) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines with their numbers (the first is ``start``), as ``record_line``
    gives them."""
    for number, line in enumerate(lines, start=start):
        line = record_line(line)
        if line and not line.isspace():  # no stripped copy of every line to test it
            yield number, line


Block = tuple[int, bytes]  # the number of a block's first line, and its lines, each ending LF


def _stream_blocks(stream: BinaryIO) -> Iterator[Block]:
    """The stream cut into blocks of whole lines of about ``BLOCK_BYTES``: a worker gets one
    ``bytes`` to split rather than an object a line to unpickle, and the process that reads
    the stream does a few C calls a block."""
    number, pending = 1, []  # pending: the start of a line that has not ended yet
    while chunk := stream.read(BLOCK_BYTES):
        cut = chunk.rfind(b"\n") + 1
        if not cut:  # inside a line longer than a block
            pending.append(chunk)
            continue
        block = b"".join([*pending, chunk[:cut]])
        pending = [chunk[cut:]]
        yield number, block
        number += block.count(b"\n")
    if rest := b"".join(pending):
        yield number, rest + b"\n"


def _line_blocks(lines: Iterable[bytes]) -> Iterator[Block]:
    """Blocks of ``BATCH_LINES`` lines given one by one (with or without their LF)."""
    number, iterator = 1, iter(lines)
    while batch := list(islice(iterator, BATCH_LINES)):
        yield number, b"".join(line if line.endswith(b"\n") else line + b"\n" for line in batch)
        number += len(batch)


def _run_block(task: Callable[..., RecordReport], block: Block) -> list[RecordReport]:
    first, lines = block
    return [task(n, line) for n, line in numbered_lines(lines.split(b"\n")[:-1], first)]


FileRange = tuple[str, int, int]  # a file's path, and the offset and length of whole lines


def _file_ranges(stream: BinaryIO) -> Iterator[FileRange]:
    """The file cut into ranges of whole lines of about ``BLOCK_BYTES``, found by reading a
    little past each cut: the workers read the lines themselves, so this process neither
    reads the file nor sends it through a pipe (with two cores, every byte it copies is
    taken from a worker)."""
    path, start, size = stream.name, stream.tell(), os.fstat(stream.fileno()).st_size
    while start < size:
        end = start + BLOCK_BYTES
        if end < size:
            end = _line_end(stream, end)
        end = min(end, size)
        yield path, start, end - start
        start = end


def _line_end(stream: BinaryIO, pos: int) -> int:
    """The offset just after the first LF at or after ``pos`` (the file's end without one)."""
    stream.seek(pos)
    while chunk := stream.read(1 << 16):
        cut = chunk.find(b"\n")
        if cut != -1:
            return pos + cut + 1
        pos += len(chunk)
    return pos


def _run_range(
    task: Callable[..., RecordReport], where: FileRange
) -> tuple[int, list[RecordReport]]:
    """The reports of a range's lines numbered from 1 within it, and its number of lines
    (its reader renumbers them: it alone knows how many lines came before)."""
    path, offset, length = where
    with open(path, "rb") as file:
        file.seek(offset)
        lines = file.read(length)
    if lines and not lines.endswith(b"\n"):  # the file's last line, without its LF
        lines += b"\n"
    return lines.count(b"\n"), _run_block(task, (1, lines))


def _is_regular_file(source: object) -> bool:
    try:
        return source.seekable() and os.path.isfile(source.name)
    except (AttributeError, OSError, TypeError, ValueError):
        return False


def run(
    source: BinaryIO | Iterable[bytes], task: Callable[..., RecordReport], jobs: int = 1
) -> Iterator[RecordReport]:
    """``task(number, line)`` for every non-blank line of ``source`` (a binary stream, or
    its lines), in order, on ``jobs`` processes."""
    blocks = _stream_blocks(source) if hasattr(source, "read") else _line_blocks(source)
    if jobs <= 1:
        for block in blocks:
            yield from _run_block(task, block)
        return
    pool = worker_context().Pool(jobs, initializer=_worker_signals)
    try:
        if _is_regular_file(source):
            before = 0
            for count, reports in pool.imap(partial(_run_range, task), _file_ranges(source)):
                for report in reports:
                    report.number += before
                    yield report
                before += count
        else:
            for reports in pool.imap(partial(_run_block, task), blocks):
                yield from reports
    except BaseException:  # an error, Ctrl-C, or the caller stopped reading
        pool.terminate()
        raise
    else:
        pool.close()  # each worker takes its end-of-work marker and exits by itself
    finally:
        pool.join()


def worker_context() -> multiprocessing.context.BaseContext:
    """How worker processes start.

    Forked from this process (at once, the core already imported) when it runs one thread,
    as the CLI does. A process with other threads (a test run beside a live server, a web
    worker) forks them from a fresh server process instead: a fork copies the locks other
    threads hold at that instant, and a worker needing one waits forever.
    """
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])  # workers fork with the core imported
        return context
    return multiprocessing.get_context("spawn")


def _worker_signals() -> None:
    """A worker dies on SIGTERM (``Pool.terminate``) whatever handler it inherited (a task
    worker running in the same process installs one that only asks it to stop: a test run's
    pool then never ended), and leaves Ctrl-C to the process that started it."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
