"""Planner statistics after a large import.

A search right after a big import was slow on PostgreSQL: the message table had no
statistics yet, so the planner rechecked ``to_tsvector`` on every row instead of using the
GIN index (1.5 s against 1.5 ms once analysed; docs/performance.md). Autovacuum gets there
eventually; an import of many transcripts asks for it at once. SQLite gets ``PRAGMA
optimize``, which analyses what changed enough to matter.
"""

from __future__ import annotations

import logging

from django.db import OperationalError, connection

from editor.models import Message, Transcript

logger = logging.getLogger(__name__)

# Transcripts written by one import before the statistics are refreshed.
LARGE_IMPORT = 1_000


def refresh_after_import(written: int) -> None:
    """Best effort, after the import has committed: a refresh that cannot run now (the
    database busy with other writers past its timeout) is logged, and the import still
    succeeds; autovacuum or the next large import will do it."""
    if written < LARGE_IMPORT:
        return
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                tables = ", ".join(
                    connection.ops.quote_name(model._meta.db_table)
                    for model in (Transcript, Message)
                )
                cursor.execute(f"ANALYZE {tables}")
            elif connection.vendor == "sqlite":
                cursor.execute("PRAGMA optimize")
    except OperationalError as error:
        logger.warning("Planner statistics not refreshed after an import: %s", error)
