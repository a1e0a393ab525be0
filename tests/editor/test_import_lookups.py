"""An all-or-nothing import into an empty dataset looks no id up (``Importer._creates_only``),
and an id someone gives a transcript meanwhile still fails it; other imports look ids up."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from editor.importing import ImportRejected, import_transcripts, run
from editor.importing.batches import Importer
from editor.models import Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db


def jsonl(count: int) -> bytes:
    return "".join(
        json.dumps({"id": f"t{n}", "spec": "openchatml-2.2", "text": conversation()}) + "\n"
        for n in range(count)
    ).encode()


def id_lookups(queries) -> list[str]:
    return [
        q["sql"]
        for q in queries
        if q["sql"].startswith("SELECT") and '"external_id" IN (\'' in q["sql"]
    ]


@pytest.fixture(params=["one transaction", "staged"])
def writing(request, monkeypatch):
    monkeypatch.setattr(run, "one_writer_at_a_time", lambda: request.param == "staged")
    return request.param


def test_an_import_into_an_empty_dataset_looks_no_id_up(dataset, curator, writing):
    with CaptureQueriesContext(connection) as queries:
        report = import_transcripts(
            jsonl(6), dataset=dataset, author=curator, name="c.jsonl", batch_size=2
        )

    assert report.counts["created"] == 6
    assert id_lookups(queries) == []


def test_an_import_into_a_dataset_with_transcripts_looks_them_up_and_updates(
    dataset, curator, writing
):
    existing = create_transcript(dataset, author=curator, text=conversation(), external_id="t1")

    with CaptureQueriesContext(connection) as queries:
        report = import_transcripts(
            jsonl(4), dataset=dataset, author=curator, name="c.jsonl", batch_size=2
        )

    assert id_lookups(queries)
    assert report.counts["created"] == 3 and report.failed == 0
    assert report.items[1].transcript_id == existing.pk
    assert Transcript.objects.filter(dataset=dataset).count() == 4


def test_an_id_given_to_a_transcript_meanwhile_still_fails_the_import(
    dataset, curator, writing, monkeypatch
):
    write = Importer.write_ready

    def someone_creates_t3_after_the_first_batch(self, ready):
        write(self, ready)
        if not Transcript.all_objects.filter(external_id="t3").exists():
            create_transcript(dataset, author=curator, text=conversation(), external_id="t3")

    monkeypatch.setattr(Importer, "write_ready", someone_creates_t3_after_the_first_batch)

    with pytest.raises(ImportRejected) as rejected:
        import_transcripts(jsonl(6), dataset=dataset, author=curator, name="c.jsonl", batch_size=2)

    failed = [(item.external_id, item.code) for item in rejected.value.report.failures]
    assert ("t3", "duplicate-external-id") in failed
    # Nothing of the import is left (in one transaction, the test's t3 went with it).
    assert set(Transcript.all_objects.values_list("external_id", flat=True)) <= {"t3"}


def test_a_partial_import_looks_ids_up_even_into_an_empty_dataset(dataset, curator):
    with CaptureQueriesContext(connection) as queries:
        import_transcripts(
            jsonl(4), dataset=dataset, author=curator, name="c.jsonl", batch_size=2, partial=True
        )

    assert len(id_lookups(queries)) == 2
