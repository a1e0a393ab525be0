"""Index shapes the models declare (no domain names)."""

from __future__ import annotations

from django.db import models
from django.db.models import (
    Q,
)


def _where_set(table: str, *foreign_keys: str) -> list[models.Index]:
    """Indexes of nullable foreign keys holding only the rows where the key is set: nothing
    looks a NULL up (deleting a user sets its keys to NULL by looking up its id), and most
    rows have none (no one deleted the transcript; an import run from the command line has
    no author)."""
    return [
        models.Index(
            fields=[key], condition=Q(**{f"{key}__isnull": False}), name=f"{table}_{key}_idx"
        )
        for key in foreign_keys
    ]
