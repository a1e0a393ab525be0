"""What an import reads: a path (file or folder), a binary stream or bytes, told apart as one
transcript file, a JSONL file, a zip archive or a folder (docs/storage.md has the order in
which ``Kind.AUTO`` decides), and turned into candidates by the reader of that kind.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from enum import StrEnum
from pathlib import Path
from typing import IO

from editor import formats
from editor.errors import InvalidContent
from editor.formats import jsonl
from editor.importing import limits
from editor.importing.archives import check_directory, read_folder, read_zip
from editor.importing.candidates import Candidate, file_candidates
from editor.importing.lines import bounded_lines, first_line, is_message_line, read_jsonl
from editor.importing.parquet import MAGIC as PARQUET_MAGIC
from editor.importing.parquet import read_parquet
from editor.importing.preference import array_candidates
from editor.importing.report import ImportReport

ZIP_MAGIC = b"PK\x03\x04"


class Kind(StrEnum):
    AUTO = "auto"
    FILE = "file"
    JSONL = "jsonl"
    ZIP = "zip"
    FOLDER = "folder"


@contextmanager
def open_source(
    source,
    kind: Kind,
    name: str | None,
    report: ImportReport,
    spec: str | None,
    shape: str | None = None,
) -> Iterator[Iterator[Candidate]]:
    """The candidates of ``source``, each read in ``spec`` unless it names its own; closes
    whatever was opened to read them. ``shape`` (``editor.importing.preference``) reads the
    rows of a JSONL or JSON array file as preference rows (or never: ``transcripts``)."""
    with ExitStack() as opened:
        yield _candidates(source, kind, name, report, spec, opened, shape)


def _candidates(
    source,
    kind: Kind,
    name: str | None,
    report: ImportReport,
    spec: str | None,
    opened: ExitStack,
    shape: str | None = None,
) -> Iterator[Candidate]:
    if isinstance(source, bytes):
        report.bytes_total = len(source)
        source = io.BytesIO(source)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir() and kind in (Kind.AUTO, Kind.FOLDER):
            return read_folder(path, report, spec)
        if not path.is_file():
            raise InvalidContent(f"{path} is neither a file nor a folder.", code="not-found")
        name = name or path.name
        try:
            stream = opened.enter_context(path.open("rb"))
        except OSError as error:
            raise InvalidContent(
                f"Cannot read {path}: {error.strerror or error}.", code="unreadable-file"
            ) from None
        report.bytes_total = path.stat().st_size
    else:
        stream = source
        name = name or _file_name(stream)
        if report.bytes_total is None:
            report.bytes_total = getattr(stream, "size", None)
    head = _peek(stream, len(ZIP_MAGIC)) if kind == Kind.AUTO else b""
    if kind == Kind.ZIP or (kind == Kind.AUTO and head.startswith(ZIP_MAGIC)):
        return read_zip(_open_zip(stream, opened), name, report, spec)
    if kind == Kind.AUTO and head.startswith(PARQUET_MAGIC):
        return read_parquet(_seekable(stream, opened), name or "<stdin>", report, spec, shape)
    first = first_line(stream)
    is_jsonl = kind == Kind.JSONL or (
        kind == Kind.AUTO
        and (name.lower().endswith(jsonl.DATASET_SUFFIXES) or _looks_like_jsonl(first, stream))
        and not is_message_line(first)
    )
    if is_jsonl:
        return read_jsonl(bounded_lines(stream, first), name or "<stdin>", report, spec, shape)
    rest = stream.read(limits.MAX_TRANSCRIPT_BYTES + 1 - len(first))
    if len(first + rest) <= limits.MAX_TRANSCRIPT_BYTES:
        rows = array_candidates(first + rest, name or "<stdin>", spec, shape)
        if rows is not None:
            report.bytes_read += len(first + rest)
            return iter(rows)
    return iter(file_candidates(first + rest, name, report, external_id=name, spec=spec))


def _seekable(stream: IO[bytes], opened: ExitStack) -> IO[bytes]:
    """``stream``, or a copy of it on disk when it cannot seek (stdin): zip archives and
    Parquet files are read from their end."""
    if stream.seekable():
        return stream
    spool = opened.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (closed by `opened`)
    shutil.copyfileobj(stream, spool)
    spool.seek(0)
    return spool


def _open_zip(stream: IO[bytes], opened: ExitStack) -> zipfile.ZipFile:
    stream = _seekable(stream, opened)  # zipfile needs to seek
    check_directory(stream)  # before zipfile reads the directory whole
    try:
        return opened.enter_context(zipfile.ZipFile(stream))
    except zipfile.BadZipFile as error:
        raise InvalidContent(f"Not a readable zip archive: {error}.", code="bad-archive") from None


def _file_name(stream: IO[bytes]) -> str:
    """The file name of an open stream, "" when it has none: ``sys.stdin.buffer`` is named
    ``<stdin>`` and a file opened from a descriptor by a number; neither names a transcript,
    and using them as its id would make every piped transcript overwrite the previous one."""
    name = getattr(stream, "name", "")
    if not isinstance(name, str) or name.startswith("<"):
        return ""
    return os.path.basename(name)


def _peek(stream: IO[bytes], size: int) -> bytes:
    if hasattr(stream, "peek"):
        return stream.peek(size)[:size]
    if stream.seekable():
        position = stream.tell()
        head = stream.read(size)
        stream.seek(position)
        return head
    return b""


def _looks_like_jsonl(line: bytes, stream: IO[bytes]) -> bool:
    """A first line that is a whole JSON object followed by more lines: JSONL.

    A pretty-printed JSON document fails the first test, a text transcript both.
    """
    try:
        value = formats.load_json(line.decode("utf-8-sig"))
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    return bool(_peek(stream, 1).strip() or (stream.seekable() and _rest_is_not_blank(stream)))


def _rest_is_not_blank(stream: IO[bytes]) -> bool:
    position = stream.tell()
    rest = stream.read(4096)
    stream.seek(position)
    return bool(rest.strip())
