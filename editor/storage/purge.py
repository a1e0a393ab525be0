"""Deleting for good, set-based: what the app itself never does to one transcript (it hides
them, ``save.delete_transcript``) but a curator does to a whole dataset.

Django's cascade reads every related row into Python before deleting it (33 s for a dataset of
11,000 transcripts, holding SQLite's write lock all along). Here the rows under transcripts go
in a few ``DELETE … WHERE transcript_id IN (…)`` statements per batch, each batch its own short
transaction with a pause between two on SQLite (``db.writers.WriteTurns``), so another writer
never waits long; what is left of a dataset (members, schemas,
queues, tasks: a few rows) then goes through the cascade, which keeps the deletion complete
whatever model is added later.
"""

from __future__ import annotations

from django.db import transaction

from editor.db.writers import WriteTurns
from editor.models import (
    Alternative,
    Annotation,
    Message,
    ModelRequest,
    PreferencePair,
    QueueAssignment,
    QueueItem,
    Revision,
    Suggestion,
    Transcript,
)
from editor.storage.message_rows import unindex

# Transcripts per transaction: ~0.1 s of writing each on SQLite (docs/performance.md).
PURGE_BATCH = 500

# Every model whose rows hang from a transcript, children first. The cascade of
# ``Transcript.delete`` would find them; a test checks this list against it.
ROWS_OF_TRANSCRIPTS = (
    (QueueAssignment, "item__transcript__in"),
    (QueueItem, "transcript__in"),
    (Annotation, "transcript__in"),
    (Suggestion, "transcript__in"),
    (ModelRequest, "transcript__in"),
    (PreferencePair, "transcript__in"),  # before Revision: a pair points at its revision
    (Alternative, "transcript__in"),
    (Message, "transcript__in"),
    (Revision, "transcript__in"),
)


def purge_transcripts(transcripts, *, using: str = "default") -> int:
    """Delete the transcripts of the queryset ``transcripts`` (soft-deleted ones included, if
    it holds them) and everything under them, a batch at a time; the number deleted."""
    deleted = 0
    turns = WriteTurns(using)
    while True:
        with turns.batch(), transaction.atomic(using=using):
            batch = list(transcripts.using(using).only("pk", "spec", "source_text")[:PURGE_BATCH])
            if not batch:
                return deleted
            ids = [transcript.pk for transcript in batch]
            unindex(using, batch)  # the one thing the cascade's signals would have done
            for model, lookup in ROWS_OF_TRANSCRIPTS:
                model.objects.using(using).filter(**{lookup: ids})._raw_delete(using)
            Transcript.all_objects.using(using).filter(pk__in=ids)._raw_delete(using)
            deleted += len(ids)
