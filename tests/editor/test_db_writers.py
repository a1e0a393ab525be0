"""``editor.db.writers``: batch writers pause between batches where the database has one write
lock (SQLite), so that a writer waiting for it gets it (docs/performance.md, contention)."""

from __future__ import annotations

import pytest
from django.db import connection

from editor.db import writers
from editor.models import Transcript
from editor.storage import purge
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def pauses(monkeypatch):
    slept = []
    monkeypatch.setattr(writers.time, "sleep", slept.append)
    return slept


def test_a_batch_writer_pauses_a_share_of_its_batch_only_where_writers_wait(pauses):
    writers.let_others_write(0.5)
    expected = [0.5 * writers.PAUSE_SHARE] if connection.vendor == "sqlite" else []
    assert pauses == expected


def test_a_dataset_purge_lets_others_write_after_each_batch(dataset, monkeypatch):
    for n in range(3):
        create_transcript(dataset, author=None, text=conversation(), external_id=f"t{n}")
    after = []
    monkeypatch.setattr(purge, "PURGE_BATCH", 1)
    monkeypatch.setattr(purge, "let_others_write", lambda seconds, using: after.append(seconds))

    assert purge.purge_transcripts(Transcript.all_objects.filter(dataset=dataset)) == 3

    assert len(after) == 3 and all(seconds > 0 for seconds in after)
