"""Deleting a dataset of 11,000 ten-message transcripts for good (issue 34's target: under
2 s, where Django's cascade took 33 s): ``membership.delete_dataset``, timed from the call to
its return, and the longest single write transaction it held (a batch of ``PURGE_BATCH``).

Runs in a child process on a throwaway SQLite database and on PostgreSQL when a server
answers (``bench.databases``).

    .venv/bin/python -m bench.bench_delete
"""

from __future__ import annotations

import time

from bench.databases import on_each_database
from bench.report import main

TRANSCRIPTS = 11_000


def run() -> None:
    on_each_database("bench.bench_delete")


def _child() -> None:
    import django

    django.setup()
    from django.db import connections, transaction

    from bench.fixtures import add_transcripts, bench_dataset, same_content
    from editor import membership

    user, dataset = bench_dataset()
    add_transcripts(dataset, user, TRANSCRIPTS, same_content(10, 180))

    longest = [0.0]
    original = transaction.Atomic.__exit__
    opened: dict[int, float] = {}

    def timed_enter(self, enter=transaction.Atomic.__enter__):
        opened[id(self)] = time.perf_counter()
        return enter(self)

    def timed_exit(self, *args):
        result = original(self, *args)
        longest[0] = max(
            longest[0], time.perf_counter() - opened.pop(id(self), time.perf_counter())
        )
        return result

    transaction.Atomic.__enter__, transaction.Atomic.__exit__ = timed_enter, timed_exit
    started = time.perf_counter()
    deleted = membership.delete_dataset(dataset, author=user)
    took = time.perf_counter() - started
    transaction.Atomic.__exit__ = original
    print(
        f"  delete a dataset of {deleted:,} transcripts: {took:6.2f} s"
        f"   (longest transaction {longest[0] * 1000:.0f} ms)",
        flush=True,
    )
    connections.close_all()


if __name__ == "__main__":
    main(run, _child)
