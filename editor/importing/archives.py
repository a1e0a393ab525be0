"""Reading a zip archive or a folder: every file in it is one transcript, except JSONL
members, read line by line.

A zip is checked before anything is inflated (``limits``: its total size and member count,
each member's name and compression ratio); a member that cannot be read is a failed item,
not a crash.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
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


def read_zip(
    archive: zipfile.ZipFile, name: str, report: ImportReport, spec: str | None
) -> Iterator[Candidate]:
    """Every member's candidates, in name order. What the central directory says is checked
    before anything is inflated (``zipfile`` never inflates a member past the size it
    declares, so a lie there only shortens the member): the total and the member count
    against the archive limits, each member's name and compression ratio."""
    infos = {info.filename: info for info in archive.infolist()}
    members = transcript_files(infos)
    check_archive_size(infos[m] for m in members)
    report.bytes_total = sum(infos[m].file_size for m in members)
    for member in members:
        location = f"{name}:{member}" if name else member
        refusal = refusal_of(infos[member], location)
        if refusal is not None:
            report.bytes_read += infos[member].file_size
            yield refusal
            continue
        yield from member_candidates(
            lambda member=member: archive.open(member),
            member,
            location,
            infos[member].file_size,
            report,
            spec,
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
        return unreadable(
            location,
            "suspicious-compression",
            f"inflates {ratio:.0f} times (at most {limits.MAX_COMPRESSION_RATIO}): "
            "a zip bomb, not text",
        )
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
    transcript it holds; a member that cannot be read is a failed item, not a crash."""
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
            data = first + stream.read()
    except READ_ERRORS as error:
        yield unreadable(location, "unreadable-file", f"cannot read this file: {error}")
        return
    yield from file_candidates(data, location, report, external_id=member, spec=spec)
