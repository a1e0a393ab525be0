"""Zip archives of every hostile shape, fuzzed: members that lie about their size (less or
more than they inflate to), zip bombs declaring a tenth of a percent of their size, end
records that lie about the member count, ZIP64 end records, entries pointing at the same
data, wrong CRCs, truncated and corrupted bytes. Whatever the archive, the import answers
with a report (every member an item) or refuses it with a code, never crashes, and its
memory stays under a bound measured with ``tracemalloc``.

``make fuzz`` runs it 50 times longer (``tests/budget.py``). The limits are scaled down so
that every bound is met within a few megabytes.
"""

from __future__ import annotations

import io
import tracemalloc
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor.errors import InvalidContent
from editor.importing import import_transcripts, limits
from tests.budget import examples
from tests.editor.samples import conversation
from tests.editor.test_zip_bounds import Member, deflated, stored, zeros, zip_bytes

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=examples(10),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

KB, MB = 1024, 1024 * 1024
REFUSALS = {"archive-too-large", "bad-archive", "no-transcripts"}
# The largest a member may be read at once under the scaled limits below, plus what the
# reader holds beside it: nothing an archive says may take memory past this.
MEMORY_BOUND = 8 * MB


@pytest.fixture(autouse=True)
def small_limits(monkeypatch):
    monkeypatch.setattr(limits, "MAX_TRANSCRIPT_BYTES", 256 * KB)
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 256 * KB)
    monkeypatch.setattr(limits, "RATIO_FREE_BYTES", 64 * KB)
    monkeypatch.setattr(limits, "MAX_ARCHIVE_BYTES", 2 * MB)
    monkeypatch.setattr(limits, "MAX_ARCHIVE_MEMBERS", 40)
    monkeypatch.setattr(limits, "MAX_DIRECTORY_BYTES", 16 * KB)


names = st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8})?\.(txt|json|jsonl)", fullmatch=True)
declared_sizes = st.sampled_from([0, 1, 100, 900 * KB, 300 * KB, 2**32 - 1])
MEMBER_SHAPES = ["honest", "stored", "lies", "bomb", "wrong-crc"]
ARCHIVE_SHAPES = ["overlapping", "many-entries", "count-lies", "zip64", "truncated", "flipped"]


@st.composite
def members(draw, shape: str | None = None) -> Member:
    name = draw(names)
    shape = shape or draw(st.sampled_from(MEMBER_SHAPES))
    text = draw(st.sampled_from([conversation(), "", "x" * 1000, "{\n" * 50])).encode()
    if shape == "honest":
        return deflated(name, text)
    if shape == "stored":
        return stored(name, text, declared=draw(st.none() | declared_sizes))
    if shape == "lies":
        return deflated(name, text * draw(st.integers(1, 300)), declared=draw(declared_sizes))
    if shape == "bomb":
        size = draw(st.sampled_from([128 * KB, 1 * MB, 8 * MB]))
        return zeros(name, size, declared=draw(declared_sizes))
    member = deflated(name, text)
    member.crc ^= draw(st.integers(1, 2**32 - 1))
    return member


@st.composite
def archives(draw, shape: str) -> bytes:
    """An archive of a few members of any shape, one of them (or the archive) of ``shape``."""
    chosen = draw(st.lists(members(), max_size=6))
    chosen.append(draw(members(shape if shape in MEMBER_SHAPES else None)))
    chosen = list({member.name: member for member in chosen}.values())
    if shape == "overlapping" or draw(st.booleans()):  # entries pointing at the same bytes
        first = chosen[0]
        chosen += [
            Member(f"again{n}.txt", first.compressed, first.crc, first.size) for n in range(3)
        ]
    if shape == "many-entries" or draw(st.booleans()):  # past the member or directory limit
        chosen += [stored(f"many/{n}.txt", b"") for n in range(draw(st.integers(1, 300)))]
    lie = st.sampled_from([0, 1, 3, 0xFFFF])
    data = zip_bytes(
        chosen,
        declared_entries=draw(lie if shape == "count-lies" else st.none() | lie),
        zip64=shape == "zip64" or draw(st.booleans()),
    )
    if shape == "truncated":
        data = data[: draw(st.integers(0, len(data)))]
    elif shape == "flipped":
        flipped = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            at = draw(st.integers(0, len(flipped) - 1))
            flipped[at] ^= draw(st.integers(1, 255))
        data = bytes(flipped)
    return data


@pytest.mark.parametrize("shape", MEMBER_SHAPES + ARCHIVE_SHAPES)
@FUZZ
@given(data=st.data())
def test_any_archive_is_reported_or_refused_in_bounded_memory(dataset, shape, data):
    archive = data.draw(archives(shape))
    tracemalloc.start()
    try:
        report = import_transcripts(archive, dataset=dataset, name="fuzz.zip", partial=True)
    except InvalidContent as refused:
        assert refused.code in REFUSALS, refused.message
    else:
        assert report.items
        assert all(item.action for item in report.items)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, peak


def test_the_fuzzed_shapes_are_zips_zipfile_reads():
    """The builder's archives are real zips, so the fuzz does not only test refusals."""
    data = zip_bytes([deflated("a.txt", b"a"), stored("b.txt", b"b")], zip64=True)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["a.txt", "b.txt"]
