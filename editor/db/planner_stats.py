"""Planner statistics refreshed on demand, after a write too large for the database to have
noticed yet.

A search right after a big import is slow on PostgreSQL until the message table has
statistics: the planner rechecks ``to_tsvector`` on every row instead of using the GIN index
(docs/performance.md). Autovacuum gets there eventually; ``refresh`` asks for it at once
(``ANALYZE`` of the tables). SQLite gets ``PRAGMA optimize``, which analyses what changed
enough to matter.
"""

from __future__ import annotations

import logging

from django.db import OperationalError, connection, models

logger = logging.getLogger(__name__)


def refresh(*tables: type[models.Model]) -> None:
    """Best effort: a refresh that cannot run now (the database busy with other writers past
    its timeout) is logged, and the write that asked for it still succeeds; autovacuum or the
    next large write will do it."""
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                names = ", ".join(
                    connection.ops.quote_name(model._meta.db_table) for model in tables
                )
                cursor.execute(f"ANALYZE {names}")
            elif connection.vendor == "sqlite":
                cursor.execute("PRAGMA optimize")
    except OperationalError as error:
        logger.warning("Planner statistics not refreshed: %s", error)
