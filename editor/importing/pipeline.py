"""Writing an all-or-nothing import while it is still being read.

Reading, parsing and checking an item is Python's work; writing a batch is about half the
database's (SQLite's own C code, a PostgreSQL server answering a COPY) and, on SQLite, a pause
that lets other writers in (``db.writers.let_others_write``). Neither needs Python's lock, so
a writer thread writes the batches already checked while the calling thread reads the next
ones: the import takes about the longer of the two, not their sum (docs/performance.md, "An
import as the user waits for it").

The writer thread has its own database connection, so it is used only where the caller is not
in a transaction of its own (whose uncommitted rows the writer's connection could not see):
the task worker and the management command are not; a caller inside ``transaction.atomic``
(a test case, a view's request) reads first and writes after, on its own thread.

All or nothing still: the writer's ``write`` gets the batches as an iterable and decides
everything (one transaction, or a stage); once an item has failed no more batches come, and
``write`` fails the import when the reading is over. Whatever the reading raises reaches the
writer as ``ReadingFailed`` inside its transaction, which then rolls back; whatever the writer
raises stops the reading and is raised to the caller.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator

from django.db import connections, transaction

# Checked batches waiting for the writer: enough that neither side waits for the other's
# jitter, few enough that memory stays a few batches.
DEPTH = 3

Batch = list  # [(ImportItem, NewTranscript)]


class ReadingFailed(Exception):
    """Raised inside the writer (its transaction rolls back) when the reading ended in an
    error; the caller raises the reading's own error."""


_END = object()
_ABORT = object()


def available(using: str = "default") -> bool:
    """Whether a writer thread may write this import (the caller holds no transaction)."""
    return not transaction.get_connection(using).in_atomic_block


def write_while_reading(batches: Iterable[Batch], write: Callable[[Iterable[Batch]], None]):
    """Run ``write`` on a writer thread over ``batches``, read on this thread."""
    writer = _Writer(write)
    writer.start()
    try:
        for batch in batches:
            writer.send(batch)
    except BaseException:
        writer.stop(_ABORT)
        raise
    writer.stop(_END)
    if writer.error is not None:
        raise writer.error


class _Writer(threading.Thread):
    def __init__(self, write: Callable[[Iterable[Batch]], None]):
        super().__init__(name="import-writer", daemon=True)
        self._write = write
        self._queue: queue.Queue = queue.Queue(maxsize=DEPTH)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._write(self._incoming())
        except BaseException as error:  # handed to the reading thread, which raises it
            self.error = error
        finally:
            connections.close_all()  # this thread's own connections

    def _incoming(self) -> Iterator[Batch]:
        while (batch := self._queue.get()) is not _END:
            if batch is _ABORT:
                raise ReadingFailed
            yield batch

    def send(self, batch: Batch) -> None:
        """Queue a batch; raises the writer's error if it has stopped (nothing more to read)."""
        while True:
            if self.error is not None or not self.is_alive():
                raise self.error or RuntimeError("the import's writer stopped")
            try:
                self._queue.put(batch, timeout=0.5)
                return
            except queue.Full:
                continue

    def stop(self, last: object) -> None:
        """Tell the writer the reading is over (``_END``) or failed (``_ABORT``), and wait."""
        while self.is_alive():
            try:
                self._queue.put(last, timeout=0.5)
                break
            except queue.Full:
                continue
        self.join()
