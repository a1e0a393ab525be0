"""Whether the database lets two transactions write at once, and how a writer that writes
batch after batch lets the others in on the one that does not.

SQLite has one write lock for the whole database: a transaction that writes holds every other
writer (a user's save included) until it commits. PostgreSQL locks rows: writers of other
rows go on. Long writes on SQLite are therefore cut into short transactions where the domain
allows it (an import stages its batches: ``editor.importing.staging``; a dataset is deleted
500 transcripts at a time: ``editor.storage.purge``).

Short transactions back to back are not enough: a writer waiting for SQLite's lock does not
queue for it, it sleeps and tries again (SQLite's busy handler: every 100 ms once it has waited
a quarter of a second), and a batch writer that takes the lock again as soon as it committed
wins nearly every time — a user's save waited 2.3 to 2.7 s behind an import and a delete made of
0.1 s transactions (docs/performance.md). So between two batches such a writer leaves the lock
free for at least a share of the last batch's own time (``PAUSE_SHARE``, ``WriteTurns``): a
waiting writer's try then finds the lock free about one time in six.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connections

# The pause after a batch, as a share of the time the batch held the lock. 0.2: a waiting
# writer's every try succeeds with a chance of 0.2 / 1.2, and fails 19 tries in a row (what
# SQLite's busy handler makes in its first second) about one time in thirty.
PAUSE_SHARE = 0.2


def one_writer_at_a_time(using: str = "default") -> bool:
    return connections[using].vendor == "sqlite"


class WriteTurns:
    """A writer of batch after batch taking turns with the others where the database has one
    write lock (see the module's docstring): before each batch (``with turns.batch():``, the
    batch's transaction inside) it makes sure the lock has been free for ``PAUSE_SHARE`` of
    the last batch's time since that one committed. What the writer did meanwhile counts: an
    import reading and checking its next batch has already left the lock free that long."""

    def __init__(self, using: str = "default"):
        self.waits = one_writer_at_a_time(using)
        self.free_since: float | None = None
        self.owed = 0.0

    @contextmanager
    def batch(self) -> Iterator[None]:
        if self.waits and self.free_since is not None:
            pause = self.owed - (time.perf_counter() - self.free_since)
            if pause > 0:
                time.sleep(pause)
        started = time.perf_counter()
        yield
        self.free_since = time.perf_counter()
        self.owed = PAUSE_SHARE * (self.free_since - started)
