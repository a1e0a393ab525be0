"""Writing an import batch by batch: each item parsed and checked, then created, updated or
skipped by its external id. A batch is written as soon as it is read and checked, so that an
import holds one batch in memory whatever its size; all or nothing, the caller's transaction
(or the stage: ``staging``) takes back what was written once an item fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from django.db import IntegrityError, transaction

from editor import tokens
from editor.db.writers import WriteTurns
from editor.errors import DomainError
from editor.importing import limits
from editor.importing.candidates import Candidate
from editor.importing.preference import is_pair, record_imported_pair
from editor.importing.preparing import Prepared, helps, prepared_in_order
from editor.importing.report import Action, ImportItem, ImportReport, ProgressCallback
from editor.models import Dataset, RevisionKind, Transcript
from editor.storage.create import NewTranscript, TranscriptsToCreate, transcripts_to_create
from editor.storage.message_rows import rows_point_into_source
from editor.storage.save import save_transcript

# An item of a batch and the transcript it becomes.
ItemToWrite = tuple[ImportItem, NewTranscript]


@dataclass
class ReadyBatch:
    """A batch made ready to be written: the transcripts to create (their rows made) and the
    existing ones to update."""

    created: list[ItemToWrite] = field(default_factory=list)
    creation: TranscriptsToCreate | None = None
    updated: list[tuple[ImportItem, NewTranscript, Transcript]] = field(default_factory=list)


class OnConflict(StrEnum):
    UPDATE = "update"
    SKIP = "skip"


class Importer:
    """Parses, checks and writes the candidates of one import into ``dataset``, recording
    what became of each in ``report``."""

    def __init__(
        self,
        dataset: Dataset,
        author,
        on_conflict: OnConflict,
        partial: bool,
        report: ImportReport,
        progress: ProgressCallback | None,
        batch_size: int,
        tag: str = "",
    ):
        self.dataset = dataset
        self.author = author
        self.on_conflict = on_conflict
        self.partial = partial
        self.report = report
        self.progress = progress
        self.batch_size = batch_size
        self.notes = revision_notes(tag)
        self.seen_ids: dict[str, str] = {}  # external id -> where it was first seen
        # Review states are the workflow's: only whoever may decide them (a curator, or the
        # system behind a management command) carries them over from a file, so that a dataset
        # moved by export and import keeps them. Everyone else's new transcripts are drafts.
        self.keeps_status = author is None or dataset.can_curate(author)
        # A staged import (``editor.importing.staging``) creates into ``stage`` and keeps its
        # updates of existing transcripts for its last transaction (``deferred``).
        self.stage: Dataset | None = None
        self.deferred: list[ItemToWrite] = []
        self.staged_ids: list[int] = []
        self.empty_at_start: bool | None = None  # ``_creates_only``, decided at the first batch

    def run(
        self, candidates: Iterable[Candidate], before_commit: ProgressCallback | None = None
    ) -> None:
        """Partial mode: write each batch as soon as it is read, each in its own transaction;
        ``before_commit`` is called inside it with the report so far (what it writes commits
        with the batch; what it raises rolls the batch back and ends the import).

        As a staged import does (``editor.importing.staging``), each batch is made ready
        before its transaction and the batches take turns with other writers where the
        database has one write lock (``WriteTurns``). Its ids are looked up before the
        transaction too: an id another writer gives a transcript in between fails at the
        insert (the unique index), its batch reported failed, as it always could on
        PostgreSQL, whose look-up locks nothing."""
        turns = WriteTurns()
        for batch in self.batches(candidates):
            ready = self.ready(batch)
            with turns.batch(), transaction.atomic():
                self.write_ready(ready)
                if before_commit is not None:
                    before_commit(self.report)
            del ready  # not held while the next batch is read: one batch in memory

    def write_all(self, candidates: Iterable[Candidate]) -> None:
        """All or nothing, in the caller's transaction: every batch written as it is read.

        Once an item has failed nothing more is written (the caller rolls it all back), but
        reading goes on so that the report names every bad item.
        """
        for batch in self.batches(candidates):
            self._write(batch)

    def batches(self, candidates: Iterable[Candidate]) -> Iterator[list[ItemToWrite]]:
        """The batches of items read and checked, to be written; progress is reported after
        each one (once the caller wrote it). All or nothing, none after an item failed."""
        for batch in self._prepared_batches(candidates):
            yield batch
            self._report_progress()

    def write_deferred(self) -> None:
        """A staged import's updates, in its last transaction (the stage set aside first):
        looked up again there, so an edit made meanwhile is updated from, not overwritten."""
        deferred, self.deferred = self.deferred, []
        if deferred:
            self._write(deferred)

    def _prepared_batches(self, candidates: Iterable[Candidate]) -> Iterator[list[ItemToWrite]]:
        """Batches of (item, prepared transcript), read and checked."""
        batch: list[ItemToWrite] = []
        batch_bytes = 0
        for candidate, prepared in prepared_in_order(
            candidates, self.keeps_status, helper=self._helped(), spans=rows_point_into_source()
        ):
            item = ImportItem(candidate.location, external_id=prepared.external_id)
            self.report.items.append(item)
            new = self._outcome(item, self._admitted(item, prepared))
            rejected = not self.partial and self.report.failed > 0
            if new is None or rejected:
                if rejected and self.report.failed >= limits.MAX_REPORTED_FAILURES:
                    return
                continue
            batch.append((item, new))
            batch_bytes += candidate.size
            if len(batch) >= self.batch_size or batch_bytes >= limits.BATCH_BYTES:
                yield batch
                batch = []
                batch_bytes = 0
        if batch and (self.partial or not self.report.failed):
            yield batch

    def _admitted(self, item: ImportItem, prepared: Prepared) -> Prepared:
        """What became of ``item``, unless its id was seen before in this import: then it
        fails as a duplicate, whatever its parse said. An item that could not be read takes
        no id."""
        if not (item.external_id and prepared.readable):
            return prepared
        first_seen = self.seen_ids.setdefault(item.external_id, item.location)
        if first_seen == item.location:
            return prepared
        message = f"id {item.external_id!r} already used at {first_seen}"
        return Prepared(item.external_id, failure=(message, "duplicate-external-id"))

    def _helped(self) -> bool:
        """Whether the items are prepared in the helper process (``preparing``)."""
        return helps(self.report.bytes_total, tokens.setting_of(self.dataset.pk) is not None)

    def _report_progress(self) -> None:
        if self.progress is not None:
            self.progress(self.report)

    def _outcome(self, item: ImportItem, prepared: Prepared) -> NewTranscript | None:
        """The transcript to write for ``item``; None (the item marked failed) when it is
        unreadable."""
        item.spec = prepared.spec or None
        item.error_count = prepared.error_count
        item.warning_count = prepared.warning_count
        if prepared.failure is not None:
            return self._fail(item, *prepared.failure)
        return prepared.new

    def _fail(self, item: ImportItem, message: str, code: str) -> None:
        self.report.record(item, Action.FAILED, message)
        item.code = code

    def _write(self, batch: list[ItemToWrite]) -> None:
        self.write_ready(self.ready(batch))

    def ready(self, batch: list[ItemToWrite]) -> ReadyBatch:
        """``batch`` made ready to be written (``write_ready``), which a staged import does
        before the batch's transaction: its ids looked up, its new transcripts' rows made,
        (staged) its updates of existing transcripts kept for ``write_deferred``."""
        ids = [new.external_id for _, new in batch if new.external_id]
        existing = (
            {
                t.external_id: t
                for t in Transcript.all_objects.filter(dataset=self.dataset, external_id__in=ids)
                .select_related("dataset")
                .with_messages()
            }
            if ids and not self._creates_only()
            else {}
        )
        ready = ReadyBatch()
        for item, new in batch:
            current = existing.get(new.external_id) if new.external_id else None
            if current is None:
                ready.created.append((item, new))
            elif self.stage is not None:
                self.deferred.append((item, new))
            else:
                ready.updated.append((item, new, current))
        if ready.created:
            ready.creation = transcripts_to_create(
                self.dataset,
                [new for _, new in ready.created],
                author=self.author,
                kind=RevisionKind.IMPORT,
                note=self.notes[Action.CREATED],
                checked=True,  # by ``prepare``, item by item
                into=self.stage,
            )
        return ready

    def write_ready(self, ready: ReadyBatch) -> None:
        """A batch made ``ready``, written (in the caller's transaction)."""
        for item, new, current in ready.updated:
            self._update(item, new, current)
        if ready.creation is not None:
            self._create(ready.created, ready.creation)

    def _creates_only(self) -> bool:
        """All or nothing into a dataset that held no transcript when the writing began: no
        item can update one, so no batch looks its ids up (on PostgreSQL the look-up, planned
        for the empty dataset, read every row written before it). An id another writer gives
        a transcript meanwhile still fails the import: at its insert (the unique index), or
        at a staged import's last check. A partial import looks up: a conflict would fail
        its whole batch instead of one item."""
        if self.empty_at_start is None:
            self.empty_at_start = not (
                self.partial or Transcript.all_objects.filter(dataset=self.dataset).exists()
            )
        return self.empty_at_start

    def _create(self, batch: list[ItemToWrite], creation: TranscriptsToCreate) -> None:
        try:
            with transaction.atomic():
                if any(is_pair(new) for _, new in batch):
                    created = creation.write()
                    for (_, new), transcript in zip(batch, created, strict=True):
                        record_imported_pair(transcript, new, self.author)
                    pks = [transcript.pk for transcript in created]
                else:
                    pks = creation.write_rows()
        except IntegrityError:
            # Only a concurrent import of the same ids can get here (ids were looked up).
            for item, _ in batch:
                self._fail(
                    item,
                    "another import created a transcript with this id meanwhile; retry",
                    "duplicate-external-id",
                )
            return
        for (item, _), pk in zip(batch, pks, strict=True):
            self.report.record(item, Action.CREATED)
            item.transcript_id = pk
        if self.stage is not None:
            self.staged_ids.extend(pks)

    def _update(self, item: ImportItem, new: NewTranscript, current: Transcript) -> None:
        item.transcript_id = current.pk
        if current.is_deleted:
            self._fail(
                item,
                "a deleted transcript has this id; undelete it or give another id",
                "duplicate-external-id",
            )
            return
        if (
            new.parsed().same_as(current)
            and new.title == current.title
            and new.metadata == current.metadata
        ):
            self.report.record(item, Action.SKIPPED, "unchanged")
            return
        if self.on_conflict == OnConflict.SKIP:
            self.report.record(item, Action.SKIPPED, "exists (on-conflict: skip)")
            return
        try:
            save_transcript(
                current,
                expected_version=current.version,
                author=self.author,
                text=new.parsed().source_text,
                spec=new.parsed().spec,
                title=new.title,
                metadata=new.metadata,
                note=self.notes[Action.UPDATED],
                kind=RevisionKind.IMPORT,
            )
        except DomainError as error:
            self._fail(item, error.message, error.code)
            return
        self.report.record(item, Action.UPDATED)


def revision_notes(tag: str = "") -> dict[str, str]:
    """The notes of the revisions an import writes, by what it did; ``tag`` names the import
    in them (a task's ``import 12``), which is how the transcripts it wrote are found again."""
    notes = {Action.CREATED: "imported", Action.UPDATED: "re-imported"}
    return {action: f"{note} ({tag})" if tag else note for action, note in notes.items()}
