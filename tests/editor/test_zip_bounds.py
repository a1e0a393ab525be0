"""Zips that lie: a member declaring less than it inflates to, a directory larger than its
end record admits. Each is refused with a code while the process's memory stays bounded,
measured with ``tracemalloc`` (every bytes object Python or zlib allocates is traced).

The archives are built here, byte by byte (``zip_bytes``), so that their headers can say
anything; a member of zeros deflates about 1000 to 1, so a lie of hundreds of megabytes is a
few hundred kilobytes on disk and takes a fraction of a second to build.
"""

from __future__ import annotations

import io
import os
import struct
import time
import tracemalloc
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from editor.errors import InvalidContent
from editor.importing import Action, import_transcripts, limits
from tests.editor.samples import conversation
from tests.editor.test_importing import envelope, jsonl, nothing_written

pytestmark = pytest.mark.django_db

MB = 1024 * 1024


@dataclass
class Member:
    """A zip member as its headers describe it: ``size`` is what it declares it inflates to."""

    name: str
    compressed: bytes
    crc: int
    size: int
    method: int = zipfile.ZIP_DEFLATED
    flags: int = 0  # bit 0: encrypted


def deflated(name: str, data: bytes, *, declared: int | None = None) -> Member:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    compressed = compressor.compress(data) + compressor.flush()
    size = len(data) if declared is None else declared
    return Member(name, compressed, zlib.crc32(data), size)


def stored(name: str, data: bytes, *, declared: int | None = None) -> Member:
    size = len(data) if declared is None else declared
    return Member(name, data, zlib.crc32(data), size, zipfile.ZIP_STORED)


def zeros(name: str, size: int, *, declared: int) -> Member:
    """``size`` zero bytes deflated a megabyte at a time (never held whole), declaring
    ``declared``; its CRC is the true one, so only the size lies."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    block, parts, crc = bytes(MB), [], 0
    for start in range(0, size, MB):
        piece = block[: min(MB, size - start)]
        parts.append(compressor.compress(piece))
        crc = zlib.crc32(piece, crc)
    parts.append(compressor.flush())
    return Member(name, b"".join(parts), crc, declared)


def zip_bytes(
    members: list[Member], *, declared_entries: int | None = None, zip64: bool = False
) -> bytes:
    """A zip of ``members``; its end record declares ``declared_entries`` (the truth by
    default), in a ZIP64 end record when ``zip64``."""
    out, directory = bytearray(), bytearray()
    for member in members:
        name = member.name.encode()
        offset = len(out)
        fields = (
            member.flags,
            member.method,
            0,
            0x21,
            member.crc,
            len(member.compressed),
            member.size,
        )
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, *fields, len(name), 0)
        out += name + member.compressed
        directory += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, *fields, len(name), 0, 0, 0, 0, 0, offset
        )
        directory += name
    entries = len(members) if declared_entries is None else declared_entries
    start = len(out)
    out += directory
    if zip64:
        record_at = len(out)
        out += struct.pack(
            "<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, len(directory), start
        )
        out += struct.pack("<4sLQL", b"PK\x06\x07", 0, record_at, 1)
        out += struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 2**32 - 1, 2**32 - 1, 0)
    else:
        out += struct.pack(
            "<4s4H2LH", b"PK\x05\x06", 0, 0, entries, entries, len(directory), start, 0
        )
    return bytes(out)


@contextmanager
def peak_memory():
    """The largest amount of memory Python held at once inside the block, in bytes."""
    measured = {}
    tracemalloc.start()
    try:
        yield measured
    finally:
        measured["peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def test_the_builder_writes_zips_zipfile_reads():
    data = zip_bytes([deflated("a.txt", b"hello" * 100), stored("b.txt", b"world")])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.read("a.txt") == b"hello" * 100
        assert archive.read("b.txt") == b"world"
    with zipfile.ZipFile(io.BytesIO(zip_bytes([stored("c.txt", b"!")], zip64=True))) as archive:
        assert archive.read("c.txt") == b"!"


# --- a member that lies about its size -------------------------------------------------------


def test_a_member_declaring_900_kb_that_inflates_to_256_mb_is_refused_in_bounded_memory(
    dataset, tmp_path
):
    """The defect: zipfile inflated it whole in one call (1 GiB took a worker from 96 MB to
    2.1 GB), and the declared size kept it under the ratio check's floor."""
    path = tmp_path / "lie.zip"
    path.write_bytes(
        zip_bytes(
            [
                zeros("bomb.txt", 256 * MB, declared=900 * 1024),
                deflated("ok.txt", conversation().encode()),
            ]
        )
    )

    started = time.monotonic()
    with peak_memory() as memory:
        report = import_transcripts(path, dataset=dataset, partial=True)

    assert [(i.location, i.action, i.code) for i in report.items] == [
        ("lie.zip:bomb.txt", Action.FAILED, "suspicious-compression"),
        ("lie.zip:ok.txt", Action.CREATED, ""),
    ]
    assert "inflates" in report.items[0].message
    assert memory["peak"] < 16 * MB, memory
    assert time.monotonic() - started < 10


def test_a_lie_within_the_ratio_stops_at_the_item_limit(dataset, tmp_path, monkeypatch):
    """Text that deflates like text but declares a tenth of its size: read until what
    actually inflated passes one transcript, never further."""
    monkeypatch.setattr(limits, "MAX_TRANSCRIPT_BYTES", 4 * MB)
    text = os.urandom(8 * MB).hex().encode()  # 16 MB deflating about 2 to 1
    path = tmp_path / "lie.zip"
    path.write_bytes(zip_bytes([deflated("big.txt", text, declared=len(text) // 10)]))
    del text

    with peak_memory() as memory:
        report = import_transcripts(path, dataset=dataset, partial=True)

    assert [(i.action, i.code) for i in report.items] == [(Action.FAILED, "too-large")]
    assert memory["peak"] < 12 * MB, memory


def test_a_jsonl_member_that_lies_is_read_line_by_line_and_stops_at_the_ratio(dataset, tmp_path):
    lines = jsonl(*[envelope(str(n)) for n in range(3)])
    bomb_line = zeros("x", 64 * MB, declared=0).compressed  # a line of zeros with no end
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    head = compressor.compress(lines) + compressor.flush(zlib.Z_SYNC_FLUSH)
    # The three lines, then 64 MB of zeros, as one deflate stream declaring only the lines.
    body = head + bomb_line
    member = Member("data.jsonl", body, 0, len(lines))
    path = tmp_path / "lines.zip"
    path.write_bytes(zip_bytes([member]))

    with peak_memory() as memory:
        report = import_transcripts(path, dataset=dataset, partial=True)

    assert [i.action for i in report.items[:3]] == [Action.CREATED] * 3
    assert report.items[-1].code == "suspicious-compression"
    assert memory["peak"] < 16 * MB, memory


def test_members_inflating_past_the_archive_total_fail_from_there_on(
    dataset, tmp_path, monkeypatch
):
    """Each member declares a few bytes and inflates to 3 MB of text: the archive's true total
    passes its limit in the second one, which fails, and the third is not even opened."""
    monkeypatch.setattr(limits, "MAX_ARCHIVE_BYTES", 5 * MB)
    text = os.urandom(3 * MB // 2).hex().encode()
    path = tmp_path / "total.zip"
    path.write_bytes(zip_bytes([deflated(f"{n}.txt", text, declared=100) for n in range(3)]))

    report = import_transcripts(path, dataset=dataset, partial=True)

    assert [(i.location, i.code) for i in report.items] == [
        ("total.zip:0.txt", "unreadable-file"),  # its declared size is wrong: a corrupt member
        ("total.zip:1.txt", "archive-too-large"),
        ("total.zip:2.txt", "archive-too-large"),
    ]
    assert "declares 100 bytes but holds 3145728" in report.items[0].message


def test_a_member_whose_size_or_crc_is_wrong_is_a_failed_item(dataset):
    good = conversation().encode()
    wrong_crc = deflated("crc.txt", good)
    wrong_crc.crc ^= 1
    data = zip_bytes(
        [
            deflated("short.txt", good, declared=len(good) + 5),
            wrong_crc,
            stored("stored.txt", good),
            stored("long.txt", good, declared=len(good) - 1),
        ]
    )

    report = import_transcripts(data, dataset=dataset, name="x.zip", partial=True)

    assert [(i.location, i.code) for i in report.items] == [
        ("x.zip:crc.txt", "unreadable-file"),
        ("x.zip:long.txt", "unreadable-file"),
        ("x.zip:short.txt", "unreadable-file"),
        ("x.zip:stored.txt", ""),
    ]
    assert "Bad CRC-32" in report.items[0].message


def test_an_encrypted_or_bzip2_member_is_a_failed_item(dataset):
    good = conversation().encode()
    bzip2 = Member("b.txt", b"BZh9", zlib.crc32(good), len(good), zipfile.ZIP_BZIP2)
    encrypted = deflated("e.txt", good)
    encrypted.flags = 1
    data = zip_bytes([bzip2, encrypted, deflated("ok.txt", good)])

    report = import_transcripts(data, dataset=dataset, name="x.zip", partial=True)

    assert [(i.code, i.action) for i in report.items] == [
        ("unreadable-file", Action.FAILED),
        ("unreadable-file", Action.FAILED),
        ("", Action.CREATED),
    ]
    assert "only stored and deflated" in report.items[0].message
    assert "encrypted" in report.items[1].message


# --- a directory too large for what its end record admits --------------------------------------


def many_members(count: int) -> list[Member]:
    return [stored(f"{n}.txt", b"") for n in range(count)]


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param({}, id="honest-count"),
        pytest.param({"declared_entries": 10}, id="count-lies"),
        pytest.param({"zip64": True}, id="zip64"),
    ],
)
def test_a_directory_with_too_many_entries_is_refused_before_zipfile_reads_it(
    dataset, tmp_path, monkeypatch, shape
):
    """The defect: zipfile read 3 million entries (1.7 GB, 71 s) before the count was checked.
    Here 60,000 entries against a limit of 1,000: refused from the end record, or by walking
    the entries a megabyte at a time when the end record lies, in a few megabytes."""
    monkeypatch.setattr(limits, "MAX_ARCHIVE_MEMBERS", 1_000)
    path = tmp_path / "many.zip"
    path.write_bytes(zip_bytes(many_members(60_000), **shape))
    opened = []
    real_init = zipfile.ZipFile.__init__
    monkeypatch.setattr(
        zipfile.ZipFile,
        "__init__",
        lambda self, *a, **k: opened.append(a) or real_init(self, *a, **k),
    )

    started = time.monotonic()
    with peak_memory() as memory, pytest.raises(InvalidContent) as caught:
        import_transcripts(path, dataset=dataset)

    assert caught.value.code == "archive-too-large"
    assert "at most 1000 files" in caught.value.message
    assert not opened  # zipfile never read the directory
    assert memory["peak"] < 4 * MB, memory
    assert time.monotonic() - started < 5
    assert nothing_written()


def test_a_directory_over_its_size_limit_is_refused_from_the_end_record(
    dataset, tmp_path, monkeypatch
):
    monkeypatch.setattr(limits, "MAX_DIRECTORY_BYTES", 64 * 1024)
    path = tmp_path / "long-names.zip"
    path.write_bytes(zip_bytes([stored(f"{n:0200}.txt", b"") for n in range(400)]))

    with pytest.raises(InvalidContent) as caught:
        import_transcripts(path, dataset=dataset)

    assert caught.value.code == "archive-too-large"
    assert "a directory of 64 KB" in caught.value.message


def test_a_zip64_archive_within_the_limits_is_read(dataset):
    data = zip_bytes([deflated("a.txt", conversation().encode())], zip64=True)

    report = import_transcripts(data, dataset=dataset, name="x.zip")

    assert report.counts["created"] == 1


def test_the_default_directory_limit_holds_the_most_members_with_long_names():
    assert limits.MAX_DIRECTORY_BYTES >= limits.MAX_ARCHIVE_MEMBERS * (46 + 280)
