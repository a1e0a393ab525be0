"""Reading a zip archive or a folder: every file in it is one transcript, except JSONL
members, read line by line.

A zip is checked before anything is inflated (``limits``): its central directory's size and
member count from its end record, before ``zipfile`` reads the directory; then the total and
each member's name and compression ratio as the directory declares them. What it declares may
lie, so a member is inflated here, in bounded pieces, and reading stops as soon as what
actually inflated passes a bound (``MemberStream``). A member that cannot be read is a failed
item, not a crash.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from editor.errors import InvalidContent
from editor.formats import jsonl
from editor.importing import limits
from editor.importing.candidates import Candidate, file_candidates, too_large, unreadable
from editor.importing.lines import bounded_lines, first_line, is_message_line, read_jsonl
from editor.importing.report import ImportReport

# What reading a zip member or a file can raise: a permission, a bad CRC or deflate stream
# (BadZipFile, zlib.error, EOFError), an encrypted member (RuntimeError), an unknown
# compression method (NotImplementedError).
READ_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError)

# The records of the zip format read here (APPNOTE.TXT 4.3.7, 4.3.12, 4.3.14-16).
END_RECORD = struct.Struct(
    "<4s4H2LH"
)  # signature, disks, entries here, entries, size, offset, comment
ZIP64_LOCATOR = struct.Struct("<4sLQL")  # signature, disk, offset of the ZIP64 end record, disks
ZIP64_END_RECORD = struct.Struct(
    "<4sQ2H2L4Q"
)  # signature, size, versions, disks, entries…, size, offset
DIRECTORY_ENTRY = struct.Struct("<4s24x3H12x")  # signature, lengths of name, extra field, comment
LOCAL_HEADER = struct.Struct("<4s22x2H")  # signature, lengths of name and extra field
END_SIGNATURE, ZIP64_LOCATOR_SIGNATURE = b"PK\x05\x06", b"PK\x06\x07"
ZIP64_END_SIGNATURE, ENTRY_SIGNATURE, LOCAL_SIGNATURE = b"PK\x06\x06", b"PK\x01\x02", b"PK\x03\x04"
MAX_COMMENT = 0xFFFF
# How much is read from the archive, or inflated, at once.
CHUNK_BYTES = 1024 * 1024


class MemberRefused(Exception):
    """A member passed a bound while it inflated: it fails with ``code``, unread further."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass
class Inflation:
    """What the members of one archive actually inflated to, in all, so far."""

    total: int = 0

    @property
    def exhausted(self) -> bool:
        return self.total > limits.MAX_ARCHIVE_BYTES


def check_directory(stream: IO[bytes]) -> None:
    """Refuse ``archive-too-large`` when the central directory lists more members than
    ``MAX_ARCHIVE_MEMBERS`` or is larger than ``MAX_DIRECTORY_BYTES``, read from the end record
    (ZIP64's too) and by walking the directory's entries a piece at a time: ``zipfile`` reads
    the directory whole and makes an object of every entry before anyone can count them, and
    the end record's count may lie. Something that is not a zip is left to ``zipfile`` to
    refuse."""
    position = stream.tell()
    directory = _directory_of(stream)
    stream.seek(position)
    if directory is None:
        return
    declared, size, start = directory
    if declared > limits.MAX_ARCHIVE_MEMBERS or size > limits.MAX_DIRECTORY_BYTES:
        raise _directory_too_large(declared, size)
    entries = _count_entries(stream, start, size, stop_after=limits.MAX_ARCHIVE_MEMBERS)
    stream.seek(position)
    if entries > limits.MAX_ARCHIVE_MEMBERS:
        raise _directory_too_large(entries, size, at_least=True)


def _directory_too_large(entries: int, size: int, *, at_least: bool = False) -> InvalidContent:
    more = "more than " if at_least else ""
    return InvalidContent(
        f"This archive lists {more}{entries} files in a directory of {limits.amount(size)}; at "
        f"most {limits.MAX_ARCHIVE_MEMBERS} files (a directory of "
        f"{limits.amount(limits.MAX_DIRECTORY_BYTES)}) are imported at once. Split it.",
        code="archive-too-large",
    )


def _directory_of(stream: IO[bytes]) -> tuple[int, int, int] | None:
    """(entries, size, start) of the central directory, as its end record says, found as
    ``zipfile`` finds it: in the last 22 bytes, else in the last 64 KiB + 22 (a comment)."""
    stream.seek(0, io.SEEK_END)
    length = stream.tell()
    tail_start = max(0, length - MAX_COMMENT - END_RECORD.size)
    stream.seek(tail_start)
    tail = stream.read(length - tail_start)
    found = tail.rfind(END_SIGNATURE)
    if found < 0 or len(tail) - found < END_RECORD.size:
        return None
    _, _, _, _, entries, size, _, _ = END_RECORD.unpack_from(tail, found)
    end_record = tail_start + found
    zip64 = _zip64_record(stream, end_record)
    if zip64 is not None:
        entries, size, end_record = zip64
    start = end_record - size
    return (entries, size, start) if start >= 0 else None


def _zip64_record(stream: IO[bytes], end_record: int) -> tuple[int, int, int] | None:
    """(entries, size, where it is) of the ZIP64 end record just before the locator that
    precedes the end record, if there is one (where ``zipfile`` looks for it)."""
    locator_at = end_record - ZIP64_LOCATOR.size
    record_at = locator_at - ZIP64_END_RECORD.size
    if record_at < 0:
        return None
    stream.seek(record_at)
    data = stream.read(ZIP64_END_RECORD.size + ZIP64_LOCATOR.size)
    if len(data) < ZIP64_END_RECORD.size + ZIP64_LOCATOR.size:
        return None
    if ZIP64_LOCATOR.unpack_from(data, ZIP64_END_RECORD.size)[0] != ZIP64_LOCATOR_SIGNATURE:
        return None
    signature, *_, entries, size, _ = ZIP64_END_RECORD.unpack_from(data)
    if signature != ZIP64_END_SIGNATURE:
        return None
    return entries, size, record_at


def _count_entries(stream: IO[bytes], start: int, size: int, *, stop_after: int) -> int:
    """The entries the directory holds (stopping past ``stop_after``), read a piece at a time."""
    position, end, count = start, start + size, 0
    chunk, chunk_start = b"", start
    while position < end and count <= stop_after:
        offset = position - chunk_start
        if offset + DIRECTORY_ENTRY.size > len(chunk):
            stream.seek(position)
            chunk, chunk_start, offset = stream.read(min(CHUNK_BYTES, end - position)), position, 0
            if len(chunk) < DIRECTORY_ENTRY.size:
                break  # truncated: zipfile says so
        signature, name, extra, comment = DIRECTORY_ENTRY.unpack_from(chunk, offset)
        if signature != ENTRY_SIGNATURE:
            break  # not an entry: zipfile says so
        position += DIRECTORY_ENTRY.size + name + extra + comment
        count += 1
    return count


def read_zip(
    archive: zipfile.ZipFile, name: str, report: ImportReport, spec: str | None
) -> Iterator[Candidate]:
    """Every member's candidates, in name order. What the central directory says is checked
    before anything is inflated: the total and the member count against the archive limits,
    each member's name and compression ratio. Then each member is inflated by a
    ``MemberStream``, which holds the same bounds on what it actually inflates to."""
    infos = {info.filename: info for info in archive.infolist()}
    members = transcript_files(infos)
    check_archive_size(infos[m] for m in members)
    report.bytes_total = sum(infos[m].file_size for m in members)
    inflation = Inflation()
    for member in members:
        info = infos[member]
        location = f"{name}:{member}" if name else member
        refusal = refusal_of(info, location) or _past_the_total(inflation, location)
        if refusal is not None:
            report.bytes_read += info.file_size
            yield refusal
            continue
        yield from member_candidates(
            lambda info=info: MemberStream.open(archive, info, inflation),
            member,
            location,
            info.file_size,
            report,
            spec,
        )


def _past_the_total(inflation: Inflation, location: str) -> Candidate | None:
    if not inflation.exhausted:
        return None
    return unreadable(location, "archive-too-large", _past_the_total_message())


def _past_the_total_message() -> str:
    return (
        f"the archive inflates past {limits.amount(limits.MAX_ARCHIVE_BYTES)} in all (as "
        "its members actually inflate): this member and the ones after it are not imported"
    )


def read_folder(folder: Path, report: ImportReport, spec: str | None) -> Iterator[Candidate]:
    """Every file's candidates, in path order (hidden files left out)."""
    files = {
        path.relative_to(folder).as_posix(): path for path in folder.rglob("*") if path.is_file()
    }
    members = transcript_files(files)
    sizes = {member: files[member].stat().st_size for member in members}
    report.bytes_total = sum(sizes.values())
    for member in members:
        yield from member_candidates(
            files[member].open, member, member, sizes[member], report, spec, mode="rb"
        )


def transcript_files(names: Iterable[str]) -> list[str]:
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


def check_archive_size(infos: Iterable[zipfile.ZipInfo]) -> None:
    """The members' count and their declared total against the archive limits (the
    directory's size and its true count were checked before ``zipfile`` read it:
    ``check_directory``)."""
    count = total = 0
    for info in infos:
        count += 1
        total += info.file_size
    if count > limits.MAX_ARCHIVE_MEMBERS or total > limits.MAX_ARCHIVE_BYTES:
        raise InvalidContent(
            f"This archive holds {count} files of {limits.amount(total)} in all; at most "
            f"{limits.MAX_ARCHIVE_MEMBERS} files and {limits.amount(limits.MAX_ARCHIVE_BYTES)} "
            "are imported at once. Split it.",
            code="archive-too-large",
        )


def refusal_of(info: zipfile.ZipInfo, location: str) -> Candidate | None:
    """Why a member is not even opened: a name that would leave a folder it were extracted
    to (absolute, a drive, ``..``), or a compression ratio only a zip bomb has."""
    parts = info.filename.replace("\\", "/").split("/")
    if info.filename.startswith(("/", "\\")) or ":" in parts[0] or ".." in parts:
        return unreadable(
            location, "unsafe-name", "a name that points outside the archive; not imported"
        )
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > limits.RATIO_FREE_BYTES and ratio > limits.MAX_COMPRESSION_RATIO:
        return unreadable(location, "suspicious-compression", _ratio_message(ratio))
    return None


def member_candidates(
    open_member: Callable[..., IO[bytes]],
    member: str,
    location: str,
    size: int,
    report: ImportReport,
    spec: str | None,
    **open_options,
) -> Iterator[Candidate]:
    """The candidates of one zip or folder member: the lines of a JSONL member, else the one
    transcript it holds; a member that cannot be read, or passes a bound as it inflates, is a
    failed item, not a crash. ``size`` is what the member declares: never more than
    ``MAX_TRANSCRIPT_BYTES`` of a transcript is read, whatever it declares."""
    try:
        with open_member(**open_options) as stream:
            is_jsonl = member.lower().endswith(jsonl.DATASET_SUFFIXES)
            first = first_line(stream) if is_jsonl else b""
            if first and not is_message_line(first):
                yield from read_jsonl(bounded_lines(stream, first), location, report, spec)
                return
            if size > limits.MAX_TRANSCRIPT_BYTES:
                report.bytes_read += size
                yield too_large(location)
                return
            data = _read_at_most(stream, limits.MAX_TRANSCRIPT_BYTES + 1, first)
    except MemberRefused as refused:
        yield unreadable(location, refused.code, refused.message)
        return
    except READ_ERRORS as error:
        yield unreadable(location, "unreadable-file", f"cannot read this file: {error}")
        return
    yield from file_candidates(data, location, report, external_id=member, spec=spec)


def _read_at_most(stream: IO[bytes], size: int, start: bytes = b"") -> bytearray:
    """``start`` and what follows it in ``stream``, up to ``size`` bytes in all, gathered a
    piece at a time: a member is held as large as it turns out to be, never as large as it
    may be."""
    data = bytearray(start)
    while len(data) < size:
        piece = stream.read(min(CHUNK_BYTES, size - len(data)))
        if not piece:
            break
        data += piece
    return data


class MemberStream(io.RawIOBase):
    """One zip member's bytes as they actually inflate, whatever its header declares.

    ``zipfile`` trusts the declared size: a member that declares 900 KB and inflates to 1 GB
    is inflated whole in one call (and then cut to 900 KB). Here a stored or deflated member
    is read from the archive a piece at a time and inflated at most as much as is asked for,
    and reading stops with ``MemberRefused`` as soon as what inflated passes the compression
    ratio (``suspicious-compression``, counted on the bytes actually read and inflated) or
    the archive's total (``archive-too-large``); its size and CRC are checked at its end, as
    ``zipfile`` does. The reader on top bounds how much it asks for (a line, a transcript).
    Other compression methods (bzip2, LZMA) inflate without a bound in ``zipfile`` and are
    not read.
    """

    METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)

    @classmethod
    def open(cls, archive: zipfile.ZipFile, info: zipfile.ZipInfo, inflation: Inflation):
        return io.BufferedReader(cls(archive.fp, info, inflation), CHUNK_BYTES)

    def __init__(self, source: IO[bytes], info: zipfile.ZipInfo, inflation: Inflation):
        super().__init__()
        if info.flag_bits & 0x1:
            raise RuntimeError("the member is encrypted")
        if info.compress_type not in self.METHODS:
            raise NotImplementedError(
                f"compressed with method {info.compress_type} (only stored and deflated "
                "members are read: zip it again with the usual compression)"
            )
        self.source, self.info, self.inflation = source, info, inflation
        self.position = self._data_offset()
        self.compressed_left = info.compress_size
        self.decompressor = (
            zlib.decompressobj(-zlib.MAX_WBITS)
            if info.compress_type == zipfile.ZIP_DEFLATED
            else None
        )
        self.consumed = self.inflated = self.crc = 0
        self.ended = False

    def _data_offset(self) -> int:
        self.source.seek(self.info.header_offset)
        header = self.source.read(LOCAL_HEADER.size)
        if len(header) < LOCAL_HEADER.size:
            raise zipfile.BadZipFile("truncated file header")
        signature, name_length, extra_length = LOCAL_HEADER.unpack(header)
        if signature != LOCAL_SIGNATURE:
            raise zipfile.BadZipFile("bad magic number for file header")
        return self.info.header_offset + LOCAL_HEADER.size + name_length + extra_length

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._inflate(min(len(buffer), CHUNK_BYTES))
        buffer[: len(data)] = data
        return len(data)

    def _inflate(self, wanted: int) -> bytes:
        while not self.ended and wanted > 0:
            if self.decompressor is None:
                data = self._read_compressed(wanted)
                self.consumed += len(data)
                self.ended = not data
            else:
                pending = self.decompressor.unconsumed_tail or self._read_compressed(CHUNK_BYTES)
                data = self.decompressor.decompress(pending, wanted)
                self.consumed += len(pending) - len(self.decompressor.unconsumed_tail)
                self.ended = self.decompressor.eof
                if not pending and not data and not self.ended:
                    raise EOFError("the member's compressed data ends early")
            self._account(data)
            if self.ended:
                self._check_end()
            if data:
                return data
        return b""

    def _read_compressed(self, wanted: int) -> bytes:
        size = min(wanted, self.compressed_left)
        if size <= 0:
            return b""
        self.source.seek(self.position)
        data = self.source.read(size)
        self.position += len(data)
        self.compressed_left -= len(data)
        return data

    def _account(self, data: bytes) -> None:
        self.inflated += len(data)
        self.inflation.total += len(data)
        self.crc = zlib.crc32(data, self.crc)
        ratio = self.inflated / max(self.consumed, 1)
        if self.inflated > limits.RATIO_FREE_BYTES and ratio > limits.MAX_COMPRESSION_RATIO:
            raise MemberRefused("suspicious-compression", _ratio_message(ratio))
        if self.inflation.exhausted:
            raise MemberRefused("archive-too-large", _past_the_total_message())

    def _check_end(self) -> None:
        if self.inflated != self.info.file_size:
            raise zipfile.BadZipFile(
                f"declares {self.info.file_size} bytes but holds {self.inflated}"
            )
        if self.crc != self.info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {self.info.filename!r}")


def _ratio_message(ratio: float) -> str:
    return (
        f"inflates {ratio:.0f} times (at most {limits.MAX_COMPRESSION_RATIO}): a zip bomb, not text"
    )
