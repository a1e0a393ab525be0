"""An all-or-nothing import written while it is read (``editor.importing.pipeline``): a writer
thread writes the checked batches while the caller's thread reads the next ones, and the
import is still all or nothing, whichever side fails. Run on both databases (on SQLite the
writer stages, on PostgreSQL it writes one transaction)."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import transaction

from editor.errors import InvalidContent
from editor.importing import ImportRejected, import_transcripts, pipeline, staging
from editor.importing.batches import Importer
from editor.models import Dataset, Message, Revision, Transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db(transaction=True)


def jsonl(count: int, prefix: str = "t") -> bytes:
    return "".join(
        json.dumps({"id": f"{prefix}{n}", "spec": "openchatml-2.2", "text": conversation()}) + "\n"
        for n in range(count)
    ).encode()


@pytest.fixture
def writes(monkeypatch):
    """The threads each batch was written on, and how many items had been read by then."""
    seen: list[tuple[str, int]] = []
    write = Importer._write

    def spied(self, batch):
        seen.append((threading.current_thread().name, len(self.report.items)))
        write(self, batch)

    monkeypatch.setattr(Importer, "_write", spied)
    return seen


def nothing_written() -> bool:
    staged = Dataset.objects.filter(slug__startswith=staging.STAGE_PREFIX)
    return not (
        Transcript.all_objects.exists()
        or Message.objects.exists()
        or Revision.objects.exists()
        or staged.exists()
    )


def test_batches_are_written_by_a_writer_thread_while_the_rest_is_read(dataset, curator, writes):
    marked = []

    report = import_transcripts(
        jsonl(40),
        dataset=dataset,
        author=curator,
        name="c.jsonl",
        batch_size=4,
        before_commit=lambda done: marked.append(threading.current_thread().name),
    )

    assert report.committed and report.counts["created"] == 40
    assert {name for name, _ in writes} == {"import-writer"}
    # The first batch was written before the last item was read.
    assert writes[0][1] < 40
    assert marked == ["import-writer"]  # the caller's success commits with the import
    assert Transcript.objects.filter(dataset=dataset).count() == 40
    assert {item.transcript_id for item in report.items} == set(
        Transcript.objects.values_list("pk", flat=True)
    )
    assert len(Message.objects.filter(transcript__dataset=dataset)) == 160


def test_an_item_failing_after_batches_were_written_leaves_nothing(dataset, curator, writes):
    data = jsonl(20) + b"not json\n" + jsonl(3, prefix="u") + b"[1]\n"

    with pytest.raises(ImportRejected) as rejected:
        import_transcripts(data, dataset=dataset, author=curator, name="c.jsonl", batch_size=4)

    assert writes, "the first batches were written before the bad line was read"
    report = rejected.value.report
    assert not report.committed
    failed = [(item.location, item.code) for item in report.failures]
    assert failed == [("c.jsonl:21", "invalid-json"), ("c.jsonl:25", "undetectable-spec")]
    assert {item.action for item in report.items} == {"failed", "skipped"}
    assert nothing_written()


def test_an_error_while_reading_rolls_back_what_the_writer_wrote(
    dataset, curator, writes, monkeypatch
):
    prepare = Importer._prepare

    def breaks_at_item_30(self, candidate, item):
        if len(self.report.items) == 30:
            raise OSError("the upload could not be read")
        return prepare(self, candidate, item)

    monkeypatch.setattr(Importer, "_prepare", breaks_at_item_30)

    with pytest.raises(OSError, match="could not be read"):
        import_transcripts(jsonl(40), dataset=dataset, author=curator, name="c.jsonl", batch_size=4)

    assert writes
    assert nothing_written()


def test_an_error_in_the_writer_stops_the_reading_and_is_raised(dataset, curator, monkeypatch):
    read = []
    prepare = Importer._prepare

    def counted(self, candidate, item):
        read.append(1)
        return prepare(self, candidate, item)

    def refuses(self, batch):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(Importer, "_prepare", counted)
    monkeypatch.setattr(Importer, "_write", refuses)

    with pytest.raises(RuntimeError, match="went away"):
        import_transcripts(
            jsonl(400), dataset=dataset, author=curator, name="c.jsonl", batch_size=4
        )

    assert len(read) < 400  # at most the queue's few batches read past the failure
    assert nothing_written()


def test_a_failure_when_committing_leaves_nothing(dataset, curator):
    def taken_away(report):
        raise RuntimeError("the task was taken away")

    with pytest.raises(RuntimeError, match="taken away"):
        import_transcripts(
            jsonl(12),
            dataset=dataset,
            author=curator,
            name="c.jsonl",
            batch_size=4,
            before_commit=taken_away,
        )

    assert nothing_written()


def test_a_source_without_items_commits_nothing(dataset, curator):
    marked = []

    with pytest.raises(InvalidContent) as refused:
        import_transcripts(
            b"\n\n",
            dataset=dataset,
            author=curator,
            name="empty.jsonl",
            before_commit=marked.append,
        )

    assert refused.value.code == "no-transcripts"
    assert marked == []
    assert nothing_written()


def test_inside_the_callers_transaction_the_import_is_read_then_written_on_its_thread(
    dataset, curator, writes
):
    with transaction.atomic():
        assert not pipeline.available()
        report = import_transcripts(
            jsonl(12), dataset=dataset, author=curator, name="c.jsonl", batch_size=4
        )

    assert report.counts["created"] == 12
    assert {name for name, _ in writes} == {threading.current_thread().name}
    assert all(read == 12 for _, read in writes)  # everything read before the first write
