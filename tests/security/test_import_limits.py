"""Hostile imports: archives and files built to exhaust memory, escape a folder or crash a
reader. Each gets a clear error with a code, memory stays bounded, nothing is half-written.

Memory is checked by what the importer asks its source for: a reader that never asks for
more than a bound at once cannot hold more than that bound of one line or member.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from editor.errors import InvalidContent
from editor.importing import Action, ImportRejected, import_transcripts, limits
from editor.models import Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import conversation
from tests.editor.test_importing import envelope, jsonl, nothing_written

pytestmark = pytest.mark.django_db


class WatchedStream(io.BytesIO):
    """A source that remembers the largest piece it was asked for and gave."""

    def __init__(self, data: bytes, name: str):
        super().__init__(data)
        self.name = name
        self.largest = 0

    def _seen(self, piece: bytes) -> bytes:
        self.largest = max(self.largest, len(piece))
        return piece

    def read(self, size=-1):
        return self._seen(super().read(size))

    def read1(self, size=-1):
        return self._seen(super().read1(size))

    def readline(self, size=-1):
        return self._seen(super().readline(size))

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# --- JSONL lines -----------------------------------------------------------------------------


def test_a_jsonl_line_over_the_limit_fails_alone_and_is_never_read_whole(dataset, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 64 * 1024)
    long_line = json.dumps({"id": "long", "spec": "chatml", "text": "x" * 1_000_000})
    source = WatchedStream(jsonl(envelope("a"), long_line, envelope("b")), "data.jsonl")

    report = import_transcripts(source, dataset=dataset, partial=True)

    assert [(i.location, i.action, i.code) for i in report.items] == [
        ("data.jsonl:1", Action.CREATED, ""),
        ("data.jsonl:2", Action.FAILED, "line-too-long"),
        ("data.jsonl:3", Action.CREATED, ""),
    ]
    assert "longer than 64 KB" in report.items[1].message
    assert source.largest <= 64 * 1024 + 1
    assert report.bytes_read == len(source.getvalue())


def test_a_first_line_over_the_limit_is_not_read_whole_either(dataset, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 64 * 1024)
    long_line = json.dumps({"id": "long", "spec": "chatml", "text": "x" * 1_000_000})
    source = WatchedStream(jsonl(long_line, envelope("b")), "data.jsonl")

    with pytest.raises(ImportRejected) as caught:
        import_transcripts(source, dataset=dataset)

    assert caught.value.report.items[0].code == "line-too-long"
    assert source.largest <= 64 * 1024 + 1
    assert nothing_written()


def test_the_line_limit_holds_inside_a_zip(dataset, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 64 * 1024)
    long_line = json.dumps({"id": "long", "spec": "chatml", "text": "x" * 1_000_000})
    data = zip_of({"big.jsonl": jsonl(envelope("a"), long_line)})

    report = import_transcripts(data, dataset=dataset, name="x.zip", partial=True)

    assert [(i.location, i.code) for i in report.items] == [
        ("x.zip:big.jsonl:1", ""),
        ("x.zip:big.jsonl:2", "line-too-long"),
    ]


def test_the_default_line_limit_is_one_transcript():
    assert limits.MAX_LINE_BYTES == limits.MAX_TRANSCRIPT_BYTES


# --- nesting ---------------------------------------------------------------------------------


DEEP_METADATA = json.dumps({"id": "m", "text": conversation(), "metadata": {}}).replace(
    '"metadata": {}', '"metadata": ' + '{"a": ' * 300 + "1" + "}" * 300
)


@pytest.mark.parametrize(
    "data, name, code, reason",
    [
        (b"[" * 100_000, "deep.json", "undetectable-spec", "could not be detected"),
        (b"[" * 100_000 + b"\n" + envelope("b").encode(), "deep.jsonl", "invalid-json", "deeper"),
        (b'{"a":' + b"[" * 100_000 + b"\n", "deep2.jsonl", "invalid-json", "deeper"),
        (jsonl(DEEP_METADATA), "meta.jsonl", "invalid-json", "deeper"),
    ],
    ids=["file", "jsonl-line", "jsonl-line-in-object", "deep-metadata"],
)
def test_deeply_nested_json_is_a_failed_item_not_a_crash(dataset, data, name, code, reason):
    report = import_transcripts(data, dataset=dataset, name=name, partial=True)

    failed = report.items[0]
    assert (failed.action, failed.code) == (Action.FAILED, code)
    assert reason.replace("deeper", "nested deeper than 128 levels") in failed.message
    assert not Transcript.objects.filter(external_id="m").exists()


def test_metadata_nested_deeper_than_json_is_read_is_refused_on_every_write(dataset, curator):
    deep: dict = {}
    for _ in range(200):
        deep = {"a": deep}
    with pytest.raises(InvalidContent) as caught:
        create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", metadata=deep
        )
    assert caught.value.code == "too-deep"
    assert "nested deeper than 128 levels" in caught.value.message
    assert nothing_written()


def test_an_archive_of_deep_json_is_reported_item_by_item(dataset):
    data = zip_of({"deep.json": b"[" * 100_000, "ok.txt": conversation().encode()})

    with pytest.raises(ImportRejected) as caught:
        import_transcripts(data, dataset=dataset, name="x.zip")

    assert [i.action for i in caught.value.report.items] == [Action.FAILED, Action.SKIPPED]
    assert nothing_written()


# --- archives --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "member",
    [
        "../escape.txt",
        "chats/../../escape.txt",
        "/etc/passwd.txt",
        "C:/Windows/x.txt",
        "a\\..\\..\\b.txt",
    ],
)
def test_member_names_that_leave_the_archive_are_refused(dataset, member):
    data = zip_of({member: conversation().encode(), "ok.txt": conversation().encode()})

    report = import_transcripts(data, dataset=dataset, name="x.zip", partial=True)

    by_code = {item.code: item for item in report.items}
    assert by_code["unsafe-name"].action == Action.FAILED
    assert "outside the archive" in by_code["unsafe-name"].message
    assert list(Transcript.objects.values_list("external_id", flat=True)) == ["ok.txt"]


def test_a_member_that_inflates_past_the_ratio_is_refused_unread(dataset, monkeypatch):
    # 64 MB of zeros deflate to 64 KB: 1000 to 1, far beyond any real text (2-20 to 1).
    bomb = b"\0" * (16 * 1024 * 1024)
    data = zip_of({"bomb.txt": bomb, "ok.txt": conversation().encode()})
    opened = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(
        zipfile.ZipFile,
        "open",
        lambda self, name, *a, **k: opened.append(name) or real_open(self, name, *a, **k),
    )

    report = import_transcripts(data, dataset=dataset, name="x.zip", partial=True)

    assert [(i.location, i.action, i.code) for i in report.items] == [
        ("x.zip:bomb.txt", Action.FAILED, "suspicious-compression"),
        ("x.zip:ok.txt", Action.CREATED, ""),
    ]
    assert "bomb.txt" not in opened


def test_small_members_are_not_held_to_the_ratio(dataset):
    # A few KB of one repeated line compress very well and are harmless.
    text = conversation() + "\n" * 0
    repeated = jsonl(*[envelope(str(n), text) for n in range(200)])
    data = zip_of({"many.jsonl": repeated})

    report = import_transcripts(data, dataset=dataset, name="x.zip")

    assert report.counts["created"] == 200


def test_an_archive_that_inflates_past_the_total_is_refused_before_reading(dataset, monkeypatch):
    monkeypatch.setattr(limits, "MAX_ARCHIVE_BYTES", 1024 * 1024)
    data = zip_of({f"{n}.txt": conversation().encode() * 2000 for n in range(10)})

    with pytest.raises(InvalidContent) as caught:
        import_transcripts(data, dataset=dataset, name="x.zip")

    assert caught.value.code == "archive-too-large"
    assert "1 MB" in caught.value.message
    assert nothing_written()


def test_too_many_members_are_refused(dataset, monkeypatch):
    monkeypatch.setattr(limits, "MAX_ARCHIVE_MEMBERS", 5)
    data = zip_of({f"{n}.txt": conversation().encode() for n in range(6)})

    with pytest.raises(InvalidContent) as caught:
        import_transcripts(data, dataset=dataset, name="x.zip")

    assert caught.value.code == "archive-too-large"
    assert nothing_written()


# --- batches ---------------------------------------------------------------------------------


def test_a_batch_is_bounded_by_bytes_as_well_as_by_items(dataset, monkeypatch):
    monkeypatch.setattr(limits, "BATCH_BYTES", 3 * len(conversation()))
    data = jsonl(*[envelope(str(n)) for n in range(10)])
    batches = []

    import_transcripts(
        data,
        dataset=dataset,
        name="x.jsonl",
        partial=True,
        progress=lambda report: batches.append(report.counts["created"]),
    )

    assert batches == [3, 6, 9, 10, 10]  # each batch, then the end
