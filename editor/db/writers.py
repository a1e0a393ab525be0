"""Whether the database lets two transactions write at once.

SQLite has one write lock for the whole database: a transaction that writes holds every other
writer (a user's save included) until it commits. PostgreSQL locks rows: writers of other
rows go on. Long writes on SQLite are therefore cut into short transactions where the domain
allows it (an import stages its batches: ``editor.importing.staging``)."""

from __future__ import annotations

from django.db import connections


def one_writer_at_a_time(using: str = "default") -> bool:
    return connections[using].vendor == "sqlite"
