"""All or nothing without holding SQLite's write lock for the whole write.

An all-or-nothing import writes everything in one transaction. On SQLite, whose one write
lock serves the whole database (``editor.db.writers``), that kept every other writer — a
user's save — waiting for the whole write phase: seconds for 10,000 transcripts
(docs/performance.md). There the transcripts an import creates are written batch by batch,
each batch its own short transaction as soon as it is read and checked, into a *stage*: a
dataset of its own with no members, its slug ``~importing-<hex>`` (a user's slug cannot start
with ``~``), which ``Dataset.objects.for_user`` leaves out for superusers too: nobody sees it.
Once every batch is written, one transaction makes the import: the updates of existing transcripts, a check that no id
was taken meanwhile, the move of the staged transcripts into the dataset (one UPDATE of
their dataset column: their messages, revisions and search index hang from them and follow),
and the caller's ``before_commit`` (a task marks itself succeeded with its data). A failure
before that commit rolls the last transaction back and purges the stage: nothing of the
import was ever visible in the dataset. Between two batches the lock is free while the next
one is read, checked and made (its rows and their values for the database: ``Importer.ready``),
and at least for a share of the last one's time
(``db.writers.WriteTurns``): a waiting writer does not queue for SQLite's lock, it tries again
now and then, and would otherwise nearly always find the next batch holding it.

A process that dies midway leaves its stage behind. A stage names its owner
(``background.worker_id``: host and pid) and each batch touches it, so ``sweep_abandoned``
(run by every task worker with its recoveries, and before each staged import) purges a stage
whose owner is gone from this host or which no batch has touched for
``OCM_TASK_STALE_AFTER`` seconds.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, InterfaceError, transaction
from django.utils import timezone

from editor import background
from editor.db.writers import WriteTurns
from editor.errors import ImportRejected, InvalidContent
from editor.importing.batches import Importer
from editor.importing.candidates import Candidate
from editor.importing.report import Action, ProgressCallback
from editor.models import Dataset, Transcript
from editor.models.datasets import IMPORT_STAGE_PREFIX
from editor.storage.purge import purge_transcripts

logger = logging.getLogger(__name__)

STAGE_PREFIX = IMPORT_STAGE_PREFIX


def write_staged(
    importer: Importer,
    candidates: Iterable[Candidate],
    before_commit: ProgressCallback | None,
    require_items: Callable[[], None],
) -> None:
    """All or nothing in short transactions (see the module's docstring): each batch staged
    as soon as it is read and checked. ``require_items`` raises when the source held none.

    Raises ``ImportRejected`` when an item failed, in the reading or the writing (an id taken
    meanwhile): then nothing was written."""
    report = importer.report
    sweep_abandoned()
    stage = _open_stage(importer.dataset)
    try:
        importer.stage = stage
        turns = WriteTurns()
        for batch in importer.batches(candidates):
            ready = importer.ready(batch)  # made while the write lock is free
            with turns.batch(), transaction.atomic():
                importer.write_ready(ready)
                Dataset.objects.filter(pk=stage.pk).update(updated_at=timezone.now())
            del ready  # not held while the next batch is read: one batch in memory
        importer.stage = None
        if report.failed:
            report.mark_rolled_back()
            raise ImportRejected(report)
        require_items()
        with transaction.atomic():
            importer.write_deferred()
            _fail_ids_taken_meanwhile(importer, stage)
            if report.failed:
                report.mark_rolled_back()
                raise ImportRejected(report)
            _move(stage, importer.dataset, expected=len(importer.staged_ids))
            report.committed = True
            if before_commit is not None:
                before_commit(report)
    finally:
        importer.stage = None
        _remove_quietly(stage)


def _open_stage(target: Dataset) -> Dataset:
    return Dataset.objects.create(
        name=f"Import into {target.slug} (in progress)",
        slug=f"{STAGE_PREFIX}{uuid.uuid4().hex}",
        description=background.worker_id(),
        default_spec=target.default_spec,
    )


def _fail_ids_taken_meanwhile(importer: Importer, stage: Dataset) -> None:
    """Items staged with an id that another import (or a user) gave a transcript of the
    dataset since they were looked up: they fail, as they would have in one transaction."""
    staged = Transcript.all_objects.filter(dataset=stage).exclude(external_id="")
    taken = set(
        Transcript.all_objects.filter(
            dataset=importer.dataset, external_id__in=staged.values("external_id")
        ).values_list("external_id", flat=True)
    )
    if not taken:
        return
    for item in importer.report.items:
        if item.action == Action.CREATED and item.external_id in taken:
            importer.report.record(
                item,
                Action.FAILED,
                "another import created a transcript with this id meanwhile; retry",
            )
            item.code = "duplicate-external-id"


def _move(stage: Dataset, target: Dataset, expected: int) -> None:
    moved = Transcript.all_objects.filter(dataset=stage).update(dataset=target)
    if moved != expected:
        # Only a sweep that took this import for abandoned can get here: it removed staged
        # transcripts, and what is left must not be published as the whole import.
        raise InvalidContent(
            f"The import's staged transcripts were removed while it ran ({moved} of "
            f"{expected} left): nothing was imported. Start the import again.",
            code="import-interrupted",
        )


def remove_stage(stage: Dataset) -> int:
    """Purge a stage's transcripts (in short batches) and its row; how many were purged."""
    purged = purge_transcripts(Transcript.all_objects.filter(dataset=stage))
    Dataset.objects.filter(pk=stage.pk).delete()
    return purged


def _remove_quietly(stage: Dataset) -> None:
    """The stage goes whatever happened; if the database will not let it now, the sweep
    removes it later (the error that ended the import is the one to report)."""
    try:
        remove_stage(stage)
    except (DatabaseError, InterfaceError) as error:
        logger.warning("Import stage %s left for the sweep: %s", stage.slug, error)
        background.close_broken_connections()


def sweep_abandoned() -> int:
    """Remove the stages whose import died: owner gone from this host, or untouched for
    ``OCM_TASK_STALE_AFTER`` seconds. How many were removed."""
    stale_before = timezone.now() - timedelta(seconds=settings.OCM_TASK_STALE_AFTER)
    removed = 0
    for stage in Dataset.objects.filter(slug__startswith=STAGE_PREFIX):
        if background.process_is_gone(stage.description) or stage.updated_at < stale_before:
            purged = remove_stage(stage)
            logger.warning("Removed abandoned import stage %s (%d transcripts)", stage.slug, purged)
            removed += 1
    return removed


background.register_sweep(sweep_abandoned)
