"""Staged all-or-nothing imports (``editor.importing.staging``): the batches commit one by one
into a stage nobody sees, so that another writer waits for one batch rather than the whole
write (SQLite's one write lock), and the import is still all or nothing.

The tests force staging on whatever database they run on (on PostgreSQL imports are not
staged: its writers do not wait for each other), so they pass on both."""

from __future__ import annotations

import json
import socket
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from editor.db.writers import one_writer_at_a_time
from editor.importing import ImportRejected, import_transcripts, run, staging
from editor.importing.batches import Importer
from editor.models import Dataset, Message, Revision, Transcript
from editor.storage.create import create_transcript
from editor.storage.purge import purge_transcripts
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db(transaction=True)


def jsonl(count: int, start: int = 0) -> bytes:
    return "".join(
        json.dumps({"id": f"t{n}", "spec": "openchatml-2.2", "text": conversation()}) + "\n"
        for n in range(start, start + count)
    ).encode()


@pytest.fixture(autouse=True)
def staged(monkeypatch):
    monkeypatch.setattr(run, "one_writer_at_a_time", lambda: True)


@pytest.fixture
def after_each_batch(monkeypatch):
    """Calls the functions appended to the list it returns after each staged batch."""
    calls = []
    write_ready = Importer.write_ready

    def spied(self, ready):
        write_ready(self, ready)
        for call in calls:
            call(self)

    monkeypatch.setattr(Importer, "write_ready", spied)
    return calls


def stages():
    return Dataset.objects.filter(slug__startswith=staging.STAGE_PREFIX)


def test_sqlite_is_the_database_whose_writers_wait_for_each_other():
    assert one_writer_at_a_time() == (connection.vendor == "sqlite")


def test_each_batch_commits_apart_and_nobody_sees_it_before_the_end(
    dataset, curator, after_each_batch, monkeypatch, django_user_model
):
    commits = []
    commit = connection.commit
    monkeypatch.setattr(connection, "commit", lambda: (commits.append(1), commit())[1])
    admin = django_user_model.objects.create_superuser("admin")
    seen = []
    after_each_batch.append(
        lambda importer: seen.append(
            (
                Transcript.objects.filter(dataset=dataset).count(),
                set(Dataset.objects.for_user(curator)) | set(Dataset.objects.for_user(admin)),
            )
        )
    )

    report = import_transcripts(
        jsonl(10), dataset=dataset, author=curator, name="chats.jsonl", batch_size=2
    )

    assert report.committed and report.counts["created"] == 10
    # The dataset showed nothing; the stage was listed to nobody, not even a superuser.
    assert seen == [(0, {dataset})] * 5
    assert len(commits) >= 5 + 1  # five batches, then the move
    assert Transcript.objects.filter(dataset=dataset).count() == 10
    assert Message.objects.filter(transcript__dataset=dataset).count() == 40
    assert {item.transcript_id for item in report.items} == set(
        Transcript.objects.values_list("pk", flat=True)
    )
    assert not stages().exists()


def test_a_failure_at_the_end_leaves_nothing_anywhere(dataset, curator):
    def refuse(report):
        raise RuntimeError("the task was taken away")

    with pytest.raises(RuntimeError):
        import_transcripts(
            jsonl(6),
            dataset=dataset,
            author=curator,
            name="c.jsonl",
            batch_size=2,
            before_commit=refuse,
        )

    assert not Transcript.all_objects.exists()
    assert not Message.objects.exists() and not Revision.objects.exists()
    assert not stages().exists()


def test_an_id_taken_while_the_import_was_staged_fails_it_whole(dataset, curator, after_each_batch):
    def someone_creates_t1(importer):
        if not Transcript.objects.filter(dataset=dataset, external_id="t1").exists():
            create_transcript(dataset, author=curator, text=conversation(), external_id="t1")

    after_each_batch.append(someone_creates_t1)

    with pytest.raises(ImportRejected) as rejected:
        import_transcripts(jsonl(4), dataset=dataset, author=curator, name="c.jsonl", batch_size=2)

    report = rejected.value.report
    assert not report.committed
    failed = [item for item in report.items if item.action == "failed"]
    assert [(item.external_id, item.code) for item in failed] == [("t1", "duplicate-external-id")]
    assert list(Transcript.all_objects.values_list("external_id", flat=True)) == ["t1"]
    assert not stages().exists()


def test_updates_wait_for_the_last_transaction_and_start_from_what_is_there_then(
    dataset, curator, after_each_batch
):
    existing = create_transcript(dataset, author=curator, text=conversation(), external_id="t0")
    changed = conversation().replace("Question", "Query", 1)
    data = (
        json.dumps({"id": "t0", "spec": "openchatml-2.2", "text": changed}) + "\n"
    ).encode() + jsonl(3, start=1)

    def someone_renames_t0(importer):
        Transcript.objects.filter(pk=existing.pk).update(title="Renamed meanwhile")

    after_each_batch.append(someone_renames_t0)
    report = import_transcripts(data, dataset=dataset, author=curator, name="c.jsonl", batch_size=2)

    assert report.counts == {"created": 3, "updated": 1, "skipped": 0, "failed": 0}
    existing.refresh_from_db()
    assert existing.source_text == changed and existing.version == 2
    assert existing.revisions.count() == 2
    assert Transcript.objects.filter(dataset=dataset).count() == 4
    assert not stages().exists()


def test_a_stage_whose_import_died_is_swept_and_a_live_one_is_kept(dataset, curator):
    host = socket.gethostname()
    dead = staging._open_stage(dataset)
    Dataset.objects.filter(pk=dead.pk).update(description=f"{host}:999999999")
    create_transcript(dead, author=None, text=conversation(), external_id="a")
    stale = staging._open_stage(dataset)  # this process: alive, but untouched for too long
    create_transcript(stale, author=None, text=conversation(), external_id="b")
    Dataset.objects.filter(pk=stale.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    live = staging._open_stage(dataset)
    create_transcript(live, author=None, text=conversation(), external_id="c")

    assert staging.sweep_abandoned() == 2

    assert list(stages()) == [live]
    assert list(Transcript.all_objects.values_list("external_id", flat=True)) == ["c"]
    assert Message.objects.filter(transcript__dataset=live).exists()
    assert Message.objects.count() == Message.objects.filter(transcript__dataset=live).count()


def test_a_stage_emptied_under_a_running_import_fails_it_instead_of_publishing_half(
    dataset, curator, after_each_batch
):
    def swept(importer):  # a sweep that wrongly took the import for dead, after two batches
        staged = Transcript.all_objects.filter(dataset=importer.stage)
        if staged.count() == 4:
            purge_transcripts(staged)

    after_each_batch.append(swept)

    with pytest.raises(Exception, match="staged transcripts were removed"):
        import_transcripts(jsonl(6), dataset=dataset, author=curator, name="c.jsonl", batch_size=2)

    assert not Transcript.all_objects.exists()


def test_the_import_takes_turns_with_other_writers_between_batches(dataset, curator, monkeypatch):
    """Each batch after the first waits, if need be, until the lock has been free a share of
    the last one's time (``db.writers.WriteTurns``)."""
    from editor.db import writers

    turns = []

    class Recorded(writers.WriteTurns):
        def batch(self):
            turns.append(self.owed)
            return super().batch()

    monkeypatch.setattr(staging, "WriteTurns", Recorded)

    import_transcripts(jsonl(6), dataset=dataset, author=curator, name="c.jsonl", batch_size=2)

    assert len(turns) == 3 and turns[0] == 0 and all(owed > 0 for owed in turns[1:])


def test_a_batch_is_made_before_its_transaction_not_while_holding_the_lock(
    dataset, curator, monkeypatch
):
    """The rows of a batch (made, their values prepared for the database) are made with no
    transaction open; only their writing holds SQLite's write lock."""
    from editor.importing import batches

    made_in_a_transaction = []
    make = batches.transcripts_to_create

    def spied(*args, **kwargs):
        made_in_a_transaction.append(connection.in_atomic_block)
        return make(*args, **kwargs)

    monkeypatch.setattr(batches, "transcripts_to_create", spied)

    import_transcripts(jsonl(6), dataset=dataset, author=curator, name="c.jsonl", batch_size=2)

    assert made_in_a_transaction == [False, False, False]
    assert Transcript.objects.filter(dataset=dataset).count() == 6


def test_a_partial_import_makes_its_batches_before_their_transactions_and_takes_turns(
    dataset, curator, monkeypatch
):
    """Partial imports commit batch by batch too: each batch is made with no transaction
    open, and the batches leave the lock to other writers between them as a staged import's
    do (``WriteTurns``: what it waits is 0 on PostgreSQL)."""
    from editor.db import writers
    from editor.importing import batches

    made_in_a_transaction, turns = [], []
    make = batches.transcripts_to_create

    def spied(*args, **kwargs):
        made_in_a_transaction.append(connection.in_atomic_block)
        return make(*args, **kwargs)

    class Recorded(writers.WriteTurns):
        def batch(self):
            turns.append(self.owed)
            return super().batch()

    monkeypatch.setattr(batches, "transcripts_to_create", spied)
    monkeypatch.setattr(batches, "WriteTurns", Recorded)

    report = import_transcripts(
        jsonl(6), dataset=dataset, author=curator, name="c.jsonl", batch_size=2, partial=True
    )

    assert report.counts["created"] == 6
    assert made_in_a_transaction == [False, False, False]
    assert len(turns) == 3 and turns[0] == 0 and all(owed > 0 for owed in turns[1:])
