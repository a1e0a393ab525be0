"""Importing transcripts: one function, ``import_transcripts``, for the UI, the API and the
``import_transcripts`` management command.

What it reads (``kind="auto"`` tells them apart; see docs/storage.md):

* one transcript file: text in any text spec, or one JSON document in any JSON spec, or one
  JSON *envelope* ``{"text" | "document", "spec"?, "id"?, "title"?, "metadata"?}``;
* a JSONL file (``.jsonl`` / ``.ndjson``, or any file whose first line is a whole JSON
  value and which has more lines): one envelope or one bare JSON-spec document per line;
  unless its first line is one message (``{"role": …}``): then it is one openchatml-json
  transcript written as JSON Lines;
* a zip archive or a folder: every file in it is one transcript, except ``.jsonl`` /
  ``.ndjson`` members, which are read line by line.

What fails an item (it is *unreadable*): bytes that are not UTF-8 or cannot be read, an empty
file, a JSONL line that is not JSON or not an object, an envelope field of the wrong type, an
unknown spec id, a spec that is not given and cannot be detected, a parse that yields no
message at all and reports an error (unless an envelope names its spec and has an empty
body: an empty transcript), text the database cannot store (NUL, lone surrogates, over-long
fields), an id seen twice in the same import, an id held by a deleted transcript. A source
with no item at all is an error. A transcript that parses with
errors but yields messages is *readable*: it is imported as a draft with its diagnostics.

All or nothing by default: one transaction; one failed item rolls everything back and
``ImportRejected`` carries the report (every failed item with its line and reason).
``partial=True`` imports every readable item and reports the rest.

Idempotent by external id (the envelope's ``id``, a bare document's top-level ``id``, or a
file's path inside the zip/folder, or its name): an item whose id exists in the dataset
updates it through ``save_transcript`` (a revision) or is skipped, as ``on_conflict`` says;
identical content is skipped without a revision either way. Items without an id are always
created. An envelope's ``status`` is given to new transcripts when the author may curate the
dataset (or is the system); updates never change a status.
"""

from __future__ import annotations

import codecs
import gc
import io
import json
import os
import pickle
import shutil
import tempfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import IO, Any

from django.db import IntegrityError, transaction

from editor import formats
from editor.errors import DomainError, ImportRejected, InvalidContent, NotAllowed
from editor.models import Dataset, RevisionKind, Status, Transcript
from editor.storage.content import TITLE_LENGTH, TranscriptContent, check_storable
from editor.storage.create import BATCH_SIZE, NewTranscript, create_transcripts
from editor.storage.planner_stats import refresh_after_import
from editor.storage.save import save_transcript

JSONL_SUFFIXES = (".jsonl", ".ndjson")
ZIP_MAGIC = b"PK\x03\x04"
# One transcript is read whole; anything bigger than this is not one transcript.
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
# A JSONL line is one transcript too. A longer line is skipped piece by piece, never held whole.
MAX_LINE_BYTES = MAX_TRANSCRIPT_BYTES
# A zip is refused before anything is read from it when its members would inflate to more
# than this in all, or when it has more members than a dataset has transcripts; one member is
# refused unread when it inflates more than MAX_COMPRESSION_RATIO times (text deflates 3 to
# 20 times; a zip bomb 1000 times), unless it is small enough not to matter.
MAX_ARCHIVE_BYTES = 4 * 1024**3
MAX_ARCHIVE_MEMBERS = 200_000
MAX_COMPRESSION_RATIO = 200
RATIO_FREE_BYTES = 1024 * 1024
# A batch is written, and its prepared transcripts let go, after this many characters of source
# text even when it has fewer than ``batch_size`` items: a few huge items must not all be
# held at once.
BATCH_BYTES = 32 * 1024 * 1024
# In all-or-nothing mode reading goes on after a failure (nothing more is written) so that
# the report names every bad item, up to this many.
MAX_REPORTED_FAILURES = 1000
# Keys that make a JSON line a transcript (an envelope or a document), not a single message.
TRANSCRIPT_KEYS = ("text", "document", "messages", "conversations", "thread")
MESSAGE_KEYS = ("role", "from", "token")  # what marks an array item as a message, not a transcript


class OnConflict(StrEnum):
    UPDATE = "update"
    SKIP = "skip"


class Action(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    SKIPPED = "skipped"
    FAILED = "failed"


class Kind(StrEnum):
    AUTO = "auto"
    FILE = "file"
    JSONL = "jsonl"
    ZIP = "zip"
    FOLDER = "folder"


@dataclass(slots=True)
class ImportItem:
    """What happened to one item: where it was, what it became, or why it failed."""

    location: str  # "data.jsonl:12", "batch.zip:chats/a.txt", "sample.txt"
    external_id: str = ""
    spec: str | None = None
    error_count: int = 0
    warning_count: int = 0
    action: str = ""
    message: str = ""
    transcript_id: int | None = None
    code: str = ""  # why a failed item failed, for programs: "invalid-json", "line-too-long"…

    def to_dict(self) -> dict[str, Any]:
        return {
            "location": self.location,
            "external_id": self.external_id,
            "spec": self.spec,
            "error_count": self.error_count,
            "warning_count": self.warning_count,
            "action": self.action,
            "message": self.message,
            "code": self.code,
            "transcript_id": self.transcript_id,
        }


@dataclass
class ImportReport:
    partial: bool = False
    committed: bool = False
    items: list[ImportItem] = field(default_factory=list)
    bytes_read: int = 0
    bytes_total: int | None = None  # None when reading a stream of unknown length
    _counts: Counter = field(default_factory=Counter, repr=False)

    def record(self, item: ImportItem, action: Action, message: str = "") -> None:
        if item.action:
            self._counts[item.action] -= 1
        item.action = action
        item.message = message
        self._counts[action] += 1

    @property
    def counts(self) -> dict[str, int]:
        return {action.value: self._counts[action] for action in Action}

    @property
    def failed(self) -> int:
        return self._counts[Action.FAILED]

    @property
    def failures(self) -> list[ImportItem]:
        return [item for item in self.items if item.action == Action.FAILED]

    def summary(self) -> str:
        counts = self.counts
        if not self.committed:
            return (
                f"nothing imported: {counts['failed']} of {len(self.items)} item(s) could not "
                "be read (all or nothing)."
            )
        state = "imported"
        return (
            f"{state}: {counts['created']} created, {counts['updated']} updated, "
            f"{counts['skipped']} skipped, {counts['failed']} failed"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "partial": self.partial,
            "committed": self.committed,
            "counts": self.counts,
            "bytes_read": self.bytes_read,
            "bytes_total": self.bytes_total,
            "items": [item.to_dict() for item in self.items],
        }


ProgressCallback = Callable[[ImportReport], None]


def import_transcripts(
    source: str | os.PathLike | IO[bytes] | bytes,
    *,
    dataset: Dataset,
    author=None,
    spec: str | None = None,
    on_conflict: OnConflict | str = OnConflict.UPDATE,
    partial: bool = False,
    kind: Kind | str = Kind.AUTO,
    name: str | None = None,
    progress: ProgressCallback | None = None,
    batch_size: int = BATCH_SIZE,
    before_commit: ProgressCallback | None = None,
) -> ImportReport:
    """Import every transcript in ``source`` into ``dataset`` and report on each.

    ``source`` is a path (file or folder), a binary file object (an upload, stdin) or bytes;
    ``name`` is its file name when it is not a path (used to recognise ``.jsonl`` and as the
    external id of a single file). ``spec`` is used for items that do not name theirs
    (detected otherwise). ``author`` None is the system (a management command); a user must
    be able to edit the dataset. ``progress`` is called with the report after each batch.

    All or nothing, the import reads, parses and checks every item first, outside any
    transaction (the prepared items are kept on disk past a size, so memory stays flat), and
    only then writes them all in one transaction: the database's write lock is held for the
    writing alone, not for the reading. ``progress`` is called outside any transaction in
    that first phase. ``before_commit`` is called inside that transaction once everything is
    written, with the report: what it writes commits with the import, and what it raises
    rolls the import back (a task records its success with the data it describes).

    Raises ``ImportRejected`` (all-or-nothing mode, some item unreadable: nothing written)
    and ``NotAllowed``; otherwise returns the report.
    """
    if author is not None and not dataset.can_edit(author):
        raise NotAllowed("You may not import into this dataset.")
    try:
        on_conflict = OnConflict(on_conflict)
        kind = Kind(kind)
    except ValueError as error:
        raise InvalidContent(str(error), code="invalid-request") from None
    report = ImportReport(partial=partial)
    importer = _Importer(dataset, author, spec, on_conflict, partial, report, progress, batch_size)
    with _open_source(source, kind, name, report) as candidates:
        if partial:
            importer.run(candidates)
        else:
            with importer.prepare_all(candidates) as prepared:
                if report.failed:
                    _mark_rolled_back(report)
                    raise ImportRejected(report)
                _require_items(report, name, source)
                with transaction.atomic():
                    importer.write_all(prepared)
                    if report.failed:  # another import took an id meanwhile
                        _mark_rolled_back(report)
                        raise ImportRejected(report)
                    report.committed = True
                    if before_commit is not None:
                        before_commit(report)
    _require_items(report, name, source)
    report.committed = True
    refresh_after_import(report.counts["created"] + report.counts["updated"])
    if progress is not None:
        progress(report)
    return report


def _require_items(report: ImportReport, name: str | None, source) -> None:
    if not report.items:
        # An empty JSONL file or a folder of hidden files: almost always the wrong path.
        raise InvalidContent(
            f"No transcript found in {name or _describe(source)}.", code="no-transcripts"
        )


def _describe(source) -> str:
    return str(source) if isinstance(source, (str, os.PathLike)) else "the input"


def _mark_rolled_back(report: ImportReport) -> None:
    """Every item that did not fail was not written either (rolled back, or never written
    once an item had failed): the report says so instead of leaving it without an action."""
    for item in report.items:
        if item.action != Action.FAILED:
            report.record(
                item, Action.SKIPPED, "not imported: another item failed (all-or-nothing import)"
            )
            item.transcript_id = None


# --- reading ----------------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    """One item as read from the input, before parsing."""

    location: str
    text: str = ""
    spec: str | None = None
    external_id: str = ""
    title: str = ""
    metadata: dict = field(default_factory=dict)
    status: str = ""  # the envelope's review state, applied to new transcripts by curators
    empty_body: bool = False  # an envelope whose text is blank or whose document is [] / {}
    error: str = ""  # why the item could not even be read
    error_code: str = ""
    fallback_title: str = ""  # a file's name, used when nothing better names the item


def _unreadable(location: str, code: str, message: str) -> Candidate:
    return Candidate(location, error=message, error_code=code)


def _too_large(location: str) -> Candidate:
    return _unreadable(
        location, "too-large", f"larger than {_amount(MAX_TRANSCRIPT_BYTES)}; not one transcript"
    )


def _amount(size: int) -> str:
    """``64 MB``, ``64 KB``: a limit as people read it."""
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


@contextmanager
def _open_source(
    source, kind: Kind, name: str | None, report: ImportReport
) -> Iterator[Iterator[Candidate]]:
    """The candidates of ``source``; closes whatever was opened to read them."""
    with ExitStack() as opened:
        yield _candidates(source, kind, name, report, opened)


def _candidates(source, kind: Kind, name: str | None, report: ImportReport, opened: ExitStack):
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir() and kind in (Kind.AUTO, Kind.FOLDER):
            return _read_folder(path, report)
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
        report.bytes_total = getattr(stream, "size", None)
    head = _peek(stream, len(ZIP_MAGIC)) if kind == Kind.AUTO else b""
    if kind == Kind.ZIP or (kind == Kind.AUTO and head.startswith(ZIP_MAGIC)):
        if not stream.seekable():  # stdin: zipfile needs to seek
            spool = opened.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (closed by `opened`)
            shutil.copyfileobj(stream, spool)
            spool.seek(0)
            stream = spool
        try:
            archive = opened.enter_context(zipfile.ZipFile(stream))
        except zipfile.BadZipFile as error:
            raise InvalidContent(
                f"Not a readable zip archive: {error}.", code="bad-archive"
            ) from None
        return _read_zip(archive, name, report)
    first = stream.readline(MAX_LINE_BYTES + 1)
    is_jsonl = kind == Kind.JSONL or (
        kind == Kind.AUTO
        and (name.lower().endswith(JSONL_SUFFIXES) or _looks_like_jsonl(first, stream))
        and not _is_message_line(first)
    )
    if is_jsonl:
        return _read_jsonl(_bounded_lines(stream, first), name or "<stdin>", report)
    rest = stream.read(MAX_TRANSCRIPT_BYTES + 1 - len(first))
    return iter(_file_candidates(first + rest, name, report, external_id=name))


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


def _looks_like_jsonl(first_line: bytes, stream: IO[bytes]) -> bool:
    """A first line that is a whole JSON object followed by more lines: JSONL.

    A pretty-printed JSON document fails the first test, a text transcript both.
    """
    try:
        value = formats.load_json(first_line.decode("utf-8-sig"))
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    return bool(_peek(stream, 1).strip() or (stream.seekable() and _rest_is_not_blank(stream)))


def _is_message_line(line: bytes) -> bool:
    """A JSON line that is one *message* (``{"role": …}``), not a transcript or an envelope:
    the file is an openchatml-json transcript written as JSON Lines, one message a line."""
    try:
        value = formats.load_json(line.decode("utf-8-sig"))
    except ValueError:
        return False
    return (
        isinstance(value, dict)
        and isinstance(value.get("role"), str)
        and not any(key in value for key in TRANSCRIPT_KEYS)
    )


def _rest_is_not_blank(stream: IO[bytes]) -> bool:
    position = stream.tell()
    rest = stream.read(4096)
    stream.seek(position)
    return bool(rest.strip())


def _bounded_lines(stream: IO[bytes], first: bytes = b"") -> Iterator[bytes | int]:
    """The lines of ``stream`` after ``first`` (its first line, already read with the same
    bound), none read with more than ``MAX_LINE_BYTES`` in memory: a line longer than that
    is skipped piece by piece and given as its length instead."""
    line = first or stream.readline(MAX_LINE_BYTES + 1)
    while line:
        if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
            yield line
        else:
            skipped = len(line)
            while line and not line.endswith(b"\n"):
                line = stream.readline(MAX_LINE_BYTES + 1)
                skipped += len(line)
            yield skipped
        line = stream.readline(MAX_LINE_BYTES + 1)


def _read_jsonl(
    lines: Iterable[bytes | int], name: str, report: ImportReport
) -> Iterator[Candidate]:
    """One candidate per non-blank line; a line that is not UTF-8, not JSON (nested deeper
    than ``formats.MAX_JSON_DEPTH`` included) or longer than ``MAX_LINE_BYTES`` is a failed
    item of its own, and reading goes on."""
    for number, raw in enumerate(lines, start=1):
        location = f"{name}:{number}"
        if isinstance(raw, int):
            report.bytes_read += raw
            yield _unreadable(
                location,
                "line-too-long",
                f"line {number} is longer than {_amount(MAX_LINE_BYTES)}; not one transcript",
            )
            continue
        report.bytes_read += len(raw)
        if number == 1:
            raw = raw.removeprefix(codecs.BOM_UTF8)  # an encoding artefact, not content
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            yield _unreadable(
                location, "not-utf8", f"line {number} is not UTF-8 text (byte {error.start})"
            )
            continue
        try:
            value = formats.load_json(line)
        except ValueError as error:
            yield _unreadable(location, "invalid-json", f"line {number} is not valid JSON: {error}")
            continue
        yield _candidate_from_json(value, line, location)


def _candidate_from_json(value: Any, text: str, location: str) -> Candidate:
    """An envelope ``{"text"|"document", …}`` or a bare JSON-spec document."""
    if not isinstance(value, dict):
        return _unreadable(
            location, "invalid-envelope", "expected a JSON object (a transcript or an envelope)"
        )
    if "text" not in value and "document" not in value:
        return Candidate(location, text=text, external_id=_id_of(value.get("id")))
    if "text" in value and "document" in value:
        return _unreadable(location, "invalid-envelope", 'give "text" or "document", not both')
    if "text" in value:
        if not isinstance(value["text"], str):
            return _unreadable(location, "invalid-envelope", '"text" must be a string')
        body = value["text"]
        empty_body = not body.strip()
    else:
        body = json.dumps(value["document"], ensure_ascii=False)
        empty_body = value["document"] in ([], {})
    spec, title, metadata = value.get("spec"), value.get("title", ""), value.get("metadata")
    metadata = {} if metadata is None else metadata
    if spec is not None and not isinstance(spec, str):
        return _unreadable(location, "invalid-envelope", '"spec" must be a string')
    if not isinstance(title, str):
        return _unreadable(location, "invalid-envelope", '"title" must be a string')
    if not isinstance(metadata, dict):
        return _unreadable(location, "invalid-envelope", '"metadata" must be an object')
    if value.get("id") is not None and not _id_of(value["id"]):
        return _unreadable(location, "invalid-envelope", '"id" must be a string or an integer')
    status = value.get("status") or ""
    if status and status not in Status.values:
        return _unreadable(
            location,
            "invalid-envelope",
            f'"status" must be one of {", ".join(Status.values)} (got {status!r})',
        )
    return Candidate(
        location,
        text=body,
        spec=spec,
        external_id=_id_of(value.get("id")),
        title=title,
        metadata=metadata,
        status=status,
        empty_body=empty_body,
    )


def _id_of(value: Any) -> str:
    if isinstance(value, bool):
        return ""
    if isinstance(value, (str, int)):
        return str(value)
    return ""


def _file_candidates(
    data: bytes, location: str, report: ImportReport, *, external_id: str
) -> list[Candidate]:
    """One file holding one transcript (text, a JSON document or an envelope), or a JSON
    array of transcripts: ShareGPT and other chat datasets ship as one array."""
    location = location or "<stdin>"
    report.bytes_read += len(data)
    fallback_title = PurePosixPath(location).stem if external_id else ""
    if len(data) > MAX_TRANSCRIPT_BYTES:
        return [_too_large(location)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return [_unreadable(location, "not-utf8", f"not UTF-8 text (byte {error.start})")]
    text = text.removeprefix("\ufeff")  # a byte order mark is an encoding artefact, not content
    if not text.strip():
        return [_unreadable(location, "empty-file", "the file is empty")]
    if text.lstrip().startswith("["):
        items = _dataset_items(text)
        if items is not None:
            return [
                _candidate_from_json(item, json.dumps(item, ensure_ascii=False), f"{location}[{i}]")
                for i, item in enumerate(items)
            ]
    if text.lstrip().startswith("{"):
        try:
            value = formats.load_json(text)
        except ValueError:
            value = None  # not JSON after all: a text spec, or a JSON spec with errors
        if isinstance(value, dict) and ("text" in value or "document" in value):
            candidate = _candidate_from_json(value, text, location)
            candidate.external_id = candidate.external_id or external_id
            candidate.fallback_title = fallback_title
            return [candidate]
        if isinstance(value, dict):
            external_id = _id_of(value.get("id")) or external_id
    return [Candidate(location, text=text, external_id=external_id, fallback_title=fallback_title)]


def _dataset_items(text: str) -> list[dict] | None:
    """The transcripts of a JSON array whose every item is one (it has a transcript key and
    is not itself a message); None for anything else, e.g. a thread of messages."""
    try:
        value = formats.load_json(text)
    except ValueError:
        return None
    if not isinstance(value, list) or not value:
        return None
    for item in value:
        if not isinstance(item, dict) or not any(key in item for key in TRANSCRIPT_KEYS):
            return None
        if any(key in item for key in MESSAGE_KEYS):
            return None
    return value


def _members(names: Iterable[str]) -> list[str]:
    """Transcript files of an archive or folder, in name order; no hidden or macOS files."""
    return sorted(
        name
        for name in names
        if not name.endswith("/")
        and not name.startswith("__MACOSX/")
        and not any(_is_hidden(part) for part in PurePosixPath(name).parts)
    )


def _is_hidden(part: str) -> bool:
    return part.startswith(".") and part != ".."  # ``..`` is refused, not passed over


def _read_zip(archive: zipfile.ZipFile, name: str, report: ImportReport) -> Iterator[Candidate]:
    """Every member's candidates, in name order. What the central directory says is checked
    before anything is inflated (``zipfile`` never inflates a member past the size it
    declares, so a lie there only shortens the member): the total and the member count
    against the archive limits, each member's name and compression ratio."""
    infos = {info.filename: info for info in archive.infolist()}
    members = _members(infos)
    _check_archive_size(infos[m] for m in members)
    report.bytes_total = sum(infos[m].file_size for m in members)
    for member in members:
        location = f"{name}:{member}" if name else member
        refusal = _refusal(infos[member], location)
        if refusal is not None:
            report.bytes_read += infos[member].file_size
            yield refusal
            continue
        yield from _member_candidates(
            lambda member=member: archive.open(member),
            member,
            location,
            infos[member].file_size,
            report,
        )


def _check_archive_size(infos: Iterable[zipfile.ZipInfo]) -> None:
    count = total = 0
    for info in infos:
        count += 1
        total += info.file_size
    if count > MAX_ARCHIVE_MEMBERS or total > MAX_ARCHIVE_BYTES:
        raise InvalidContent(
            f"This archive holds {count} files of {_amount(total)} in all; at most "
            f"{MAX_ARCHIVE_MEMBERS} files and {_amount(MAX_ARCHIVE_BYTES)} are imported at "
            "once. Split it.",
            code="archive-too-large",
        )


def _refusal(info: zipfile.ZipInfo, location: str) -> Candidate | None:
    """Why a member is not even opened: a name that would leave a folder it were extracted
    to (absolute, a drive, ``..``), or a compression ratio only a zip bomb has."""
    parts = info.filename.replace("\\", "/").split("/")
    if info.filename.startswith(("/", "\\")) or ":" in parts[0] or ".." in parts:
        return _unreadable(
            location, "unsafe-name", "a name that points outside the archive; not imported"
        )
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > RATIO_FREE_BYTES and ratio > MAX_COMPRESSION_RATIO:
        return _unreadable(
            location,
            "suspicious-compression",
            f"inflates {ratio:.0f} times (at most {MAX_COMPRESSION_RATIO}): a zip bomb, not text",
        )
    return None


def _read_folder(folder: Path, report: ImportReport) -> Iterator[Candidate]:
    files = {
        path.relative_to(folder).as_posix(): path for path in folder.rglob("*") if path.is_file()
    }
    members = _members(files)
    sizes = {member: files[member].stat().st_size for member in members}
    report.bytes_total = sum(sizes.values())
    for member in members:
        yield from _member_candidates(
            files[member].open, member, member, sizes[member], report, mode="rb"
        )


# What reading a zip member or a file can raise: a permission, a bad CRC or deflate stream
# (BadZipFile, zlib.error, EOFError), an encrypted member (RuntimeError), an unknown
# compression method (NotImplementedError).
READ_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError)


def _member_candidates(
    open_member: Callable[..., IO[bytes]],
    member: str,
    location: str,
    size: int,
    report: ImportReport,
    **open_options,
) -> Iterator[Candidate]:
    """The candidates of one zip or folder member: the lines of a JSONL member, else the one
    transcript it holds; a member that cannot be read is a failed item, not a crash."""
    try:
        with open_member(**open_options) as stream:
            is_jsonl = member.lower().endswith(JSONL_SUFFIXES)
            first = stream.readline(MAX_LINE_BYTES + 1) if is_jsonl else b""
            if first and not _is_message_line(first):
                yield from _read_jsonl(_bounded_lines(stream, first), location, report)
                return
            if size > MAX_TRANSCRIPT_BYTES:
                report.bytes_read += size
                yield _too_large(location)
                return
            data = first + stream.read()
    except READ_ERRORS as error:
        yield _unreadable(location, "unreadable-file", f"cannot read this file: {error}")
        return
    yield from _file_candidates(data, location, report, external_id=member)


# --- writing ------------------------------------------------------------------------------


class PreparedItems:
    """The batches an all-or-nothing import has read and checked, waiting to be written.

    Kept in memory up to ``IN_MEMORY_BATCHES`` batches, then spilled to a temporary file
    (pickled, batch by batch), so that a 1 GB file does not need 1 GB of prepared objects.
    Items are kept by their place in the report, whose ``ImportItem`` objects the writing
    phase updates.

    The batches kept in memory are frozen out of the cyclic garbage collector's reach
    (``gc.freeze``) until the import ends: every full collection walks every object the
    process holds, and as the kept batches grew, five of them took 0.7 s of a 4.6 s import of
    10,000 transcripts (docs/performance.md). Reference counting still frees what dies.
    """

    IN_MEMORY_BATCHES = 20

    def __init__(self, report: ImportReport):
        self.report = report
        self.batches: list[list[tuple[int, NewTranscript]]] = []
        self.spill: IO[bytes] | None = None
        self.spilled = 0
        self.froze = False

    def add(self, batch: list[tuple[int, ImportItem, NewTranscript]]) -> None:
        kept = [(place, new) for place, _, new in batch]
        if self.spill is None and len(self.batches) < self.IN_MEMORY_BATCHES:
            self.batches.append(kept)
            gc.freeze()
            self.froze = True
            return
        if self.spill is None:
            self.spill = tempfile.TemporaryFile(prefix="ocm-import-")  # noqa: SIM115 (closed by __exit__)
        pickle.dump(kept, self.spill, protocol=pickle.HIGHEST_PROTOCOL)
        self.spilled += 1

    def __iter__(self):
        items = self.report.items
        for kept in self.batches:
            yield [(items[n], new) for n, new in kept]
        if self.spill is not None:
            self.spill.seek(0)
            for _ in range(self.spilled):
                yield [(items[n], new) for n, new in pickle.load(self.spill)]

    def __enter__(self) -> PreparedItems:
        return self

    def __exit__(self, *exc_info) -> None:
        if self.spill is not None:
            self.spill.close()
        if self.froze:  # back within the collector's reach (and whatever froze meanwhile)
            gc.unfreeze()


class _Importer:
    def __init__(self, dataset, author, spec, on_conflict, partial, report, progress, batch_size):
        self.dataset = dataset
        self.author = author
        self.spec = spec
        self.on_conflict = on_conflict
        self.partial = partial
        self.report = report
        self.progress = progress
        self.batch_size = batch_size
        self.seen_ids: dict[str, str] = {}  # external id -> where it was first seen
        # Review states are the workflow's: only whoever may decide them (a curator, or the
        # system behind a management command) carries them over from a file, so that a dataset
        # moved by export and import keeps them. Everyone else's new transcripts are drafts.
        self.keeps_status = author is None or dataset.can_curate(author)

    def run(self, candidates: Iterable[Candidate]) -> None:
        """Partial mode: write each batch as soon as it is read (each in its own transaction)."""
        for batch in self._prepared_batches(candidates):
            self._write([(item, new) for _, item, new in batch])
            self._report_progress()

    def prepare_all(self, candidates: Iterable[Candidate]) -> PreparedItems:
        """All or nothing, first phase: read, parse and check every item; nothing is written.

        Once an item has failed nothing more is kept (it will all be rolled back), but reading
        goes on so that the report names every bad item.
        """
        prepared = PreparedItems(self.report)
        for batch in self._prepared_batches(candidates):
            if not self.report.failed:
                prepared.add(batch)
            self._report_progress()
        return prepared

    def write_all(self, prepared: PreparedItems) -> None:
        """All or nothing, second phase (in the caller's transaction): write every batch."""
        for batch in prepared:
            self._write(batch)

    def _prepared_batches(self, candidates: Iterable[Candidate]):
        """Batches of (place in the report, item, prepared transcript), read and checked."""
        batch: list[tuple[int, ImportItem, NewTranscript]] = []
        batch_bytes = 0
        for candidate in candidates:
            item = ImportItem(candidate.location, external_id=candidate.external_id)
            place = len(self.report.items)
            self.report.items.append(item)
            new = self._prepare(candidate, item)
            rejected = not self.partial and self.report.failed > 0
            if new is None or rejected:
                if rejected and self.report.failed >= MAX_REPORTED_FAILURES:
                    return
                continue
            batch.append((place, item, new))
            batch_bytes += len(candidate.text)
            if len(batch) >= self.batch_size or batch_bytes >= BATCH_BYTES:
                yield batch
                batch = []
                batch_bytes = 0
        if batch and (self.partial or not self.report.failed):
            yield batch

    def _report_progress(self) -> None:
        if self.progress is not None:
            self.progress(self.report)

    def _prepare(self, candidate: Candidate, item: ImportItem) -> NewTranscript | None:
        """Parse and check one item; None (the item marked failed) when it is unreadable."""
        if candidate.error:
            return self._fail(item, candidate.error, candidate.error_code)
        if candidate.external_id:
            first_seen = self.seen_ids.setdefault(candidate.external_id, candidate.location)
            if first_seen != candidate.location:
                return self._fail(
                    item,
                    f"id {candidate.external_id!r} already used at {first_seen}",
                    "duplicate-external-id",
                )
        try:
            content = TranscriptContent.from_text(candidate.text, candidate.spec or self.spec)
            item.spec = content.spec
            item.error_count = content.error_count
            item.warning_count = content.warning_count
            # An envelope that names its spec and has an empty body is an empty transcript:
            # what an export writes for one, or for one whose every message the spec drops.
            if content.is_unreadable() and not (candidate.spec and candidate.empty_body):
                return self._fail(
                    item, f"no message could be read: {content.first_error()}", "no-messages"
                )
            new = NewTranscript(
                content,
                title=candidate.title or _default_title(content, candidate.fallback_title),
                metadata=candidate.metadata,
                external_id=candidate.external_id,
                status=(self.keeps_status and candidate.status) or Status.DRAFT,
            )
            check_storable(
                content, title=new.title, metadata=new.metadata, external_id=new.external_id
            )
        except DomainError as error:
            return self._fail(item, error.message, error.code)
        return new

    def _fail(self, item: ImportItem, message: str, code: str) -> None:
        self.report.record(item, Action.FAILED, message)
        item.code = code

    def _write(self, batch: list[tuple[ImportItem, NewTranscript]]) -> None:
        ids = [new.external_id for _, new in batch if new.external_id]
        existing = {
            t.external_id: t
            for t in Transcript.all_objects.filter(dataset=self.dataset, external_id__in=ids)
            .select_related("dataset")
            .with_messages()
        }
        to_create = []
        for item, new in batch:
            current = existing.get(new.external_id) if new.external_id else None
            if current is None:
                to_create.append((item, new))
            else:
                self._update(item, new, current)
        if to_create:
            self._create(to_create)

    def _create(self, batch: list[tuple[ImportItem, NewTranscript]]) -> None:
        try:
            with transaction.atomic():
                created = create_transcripts(
                    self.dataset,
                    [new for _, new in batch],
                    author=self.author,
                    kind=RevisionKind.IMPORT,
                    note="imported",
                    checked=True,  # by _prepare, item by item
                )
        except IntegrityError:
            # Only a concurrent import of the same ids can get here (ids were looked up).
            for item, _ in batch:
                self._fail(
                    item,
                    "another import created a transcript with this id meanwhile; retry",
                    "duplicate-external-id",
                )
            return
        for (item, _), transcript in zip(batch, created, strict=True):
            self.report.record(item, Action.CREATED)
            item.transcript_id = transcript.pk

    def _update(self, item: ImportItem, new: NewTranscript, current: Transcript) -> None:
        item.transcript_id = current.pk
        if current.is_deleted:
            self._fail(
                item,
                "a deleted transcript has this id; undelete it or give another id",
                "duplicate-external-id",
            )
            return
        if (
            new.content.same_as(current)
            and new.title == current.title
            and new.metadata == current.metadata
        ):
            self.report.record(item, Action.SKIPPED, "unchanged")
            return
        if self.on_conflict == OnConflict.SKIP:
            self.report.record(item, Action.SKIPPED, "exists (on-conflict: skip)")
            return
        try:
            save_transcript(
                current,
                expected_version=current.version,
                author=self.author,
                text=new.content.source_text,
                spec=new.content.spec,
                title=new.title,
                metadata=new.metadata,
                note="re-imported",
                kind=RevisionKind.IMPORT,
            )
        except DomainError as error:
            self._fail(item, error.message, error.code)
            return
        self.report.record(item, Action.UPDATED)


def _default_title(content: TranscriptContent, fallback: str) -> str:
    """The header's title, else the file name, else the first line of the first user message."""
    header_title = content.canonical.header.get("title")
    if isinstance(header_title, str) and header_title.strip():
        return header_title.strip()[:TITLE_LENGTH]
    if fallback:
        return fallback[:TITLE_LENGTH]
    for message in content.canonical.messages:
        if message.role == "user" and message.content.strip():
            first_line = message.content.strip().splitlines()[0]
            return first_line if len(first_line) <= 80 else first_line[:79] + "…"
    return ""
