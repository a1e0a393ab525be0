"""``editor.db.writers``: batch writers pause between batches where the database has one write
lock (SQLite), so that a writer waiting for it gets it (docs/performance.md, contention)."""

from __future__ import annotations

import pytest

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


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(writers.time, "perf_counter", clock)
    return clock


def test_batch_writers_leave_the_lock_free_a_share_of_the_last_batch(pauses, clock, monkeypatch):
    monkeypatch.setattr(writers, "one_writer_at_a_time", lambda using="default": True)
    turns = writers.WriteTurns()
    with turns.batch():  # the first batch waits for nothing
        clock.now += 1.0
    with turns.batch():  # straight after: the whole share of the first
        clock.now += 0.5
    clock.now += 0.08  # the lock free meanwhile (an import reads its next batch)
    with turns.batch():  # what is left of the share of the second
        clock.now += 0.5
    clock.now += 1.0  # longer than the share
    with turns.batch():
        pass

    assert pauses == pytest.approx([1.0 * writers.PAUSE_SHARE, 0.5 * writers.PAUSE_SHARE - 0.08])


def test_batch_writers_never_pause_where_writers_do_not_wait(pauses, clock, monkeypatch):
    monkeypatch.setattr(writers, "one_writer_at_a_time", lambda using="default": False)
    turns = writers.WriteTurns()
    for _ in range(3):
        with turns.batch():
            clock.now += 1.0
    assert pauses == []


def test_a_dataset_purge_takes_turns_with_other_writers_between_batches(
    dataset, pauses, monkeypatch
):
    for n in range(3):
        create_transcript(dataset, author=None, text=conversation(), external_id=f"t{n}")
    monkeypatch.setattr(purge, "PURGE_BATCH", 1)
    monkeypatch.setattr(writers, "one_writer_at_a_time", lambda using="default": True)

    assert purge.purge_transcripts(Transcript.all_objects.filter(dataset=dataset)) == 3

    # Before each batch but the first: the three transcripts' second and third, then the
    # batch that finds nothing left.
    assert len(pauses) == 3 and all(seconds > 0 for seconds in pauses)
