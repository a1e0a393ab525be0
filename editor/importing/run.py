"""``import_transcripts``: one import, from its source to its report, all or nothing or
partial (the package's docstring says what it reads and what fails an item)."""

from __future__ import annotations

import os
from typing import IO

from django.db import transaction

from editor.db import planner_stats
from editor.db.writers import one_writer_at_a_time
from editor.errors import ImportRejected, InvalidContent, NotAllowed
from editor.importing.batches import Importer, OnConflict
from editor.importing.collector import collector_spared
from editor.importing.preference import SHAPES
from editor.importing.report import ImportReport, ProgressCallback
from editor.importing.sources import Kind, open_source
from editor.importing.staging import write_staged
from editor.models import Dataset, Message, Transcript
from editor.storage.create import BATCH_SIZE

# Transcripts written by one import past which the planner's statistics are refreshed at once.
LARGE_IMPORT = 1_000


def import_transcripts(
    source: str | os.PathLike | IO[bytes] | bytes,
    *,
    dataset: Dataset,
    author=None,
    spec: str | None = None,
    on_conflict: OnConflict | str = OnConflict.UPDATE,
    partial: bool = False,
    kind: Kind | str = Kind.AUTO,
    name: str | None = None,
    progress: ProgressCallback | None = None,
    batch_size: int = BATCH_SIZE,
    before_commit: ProgressCallback | None = None,
    tag: str = "",
    shape: str | None = None,
) -> ImportReport:
    """Import every transcript in ``source`` into ``dataset`` and report on each.

    ``source`` is a path (file or folder), a binary file object (an upload, stdin) or bytes;
    ``name`` is its file name when it is not a path (used to recognise ``.jsonl`` and as the
    external id of a single file). ``spec`` is used for items that do not name theirs
    (detected otherwise). ``author`` None is the system (a management command); a user must
    be able to edit the dataset. ``progress`` is called with the report after each batch.

    All or nothing, each batch is written as soon as it is read and checked (one batch in
    memory at a time, whatever the size of the source), all in one transaction that the
    first failed item rolls back (reading goes on, to report every bad item). On SQLite,
    whose one write lock would hold every other writer for the whole import, the new
    transcripts are written batch by batch, each in a short transaction, into a stage nobody
    sees and moved into the dataset in one last transaction (``staging``); ``progress`` is
    called between those transactions. ``before_commit`` is called inside that transaction
    once everything is written, with the report: what it writes commits with the import, and
    what it raises rolls the import back (a task records its success with the data it
    describes). A partial import calls it inside each batch's transaction instead, with the
    report so far (a task records what is committed as it is committed, so that what it kept
    is known if its worker dies). ``tag`` is added to the notes of the revisions it writes (``imported
    (import 12)``), so the transcripts an import wrote can be found by it. ``shape``: None
    recognises preference rows by their keys; ``preference`` / ``hh`` reads every row as
    one, ``transcripts`` none (``editor.importing.preference``).

    Raises ``ImportRejected`` (all-or-nothing mode, some item unreadable: nothing written)
    and ``NotAllowed``; otherwise returns the report.
    """
    if author is not None and not dataset.can_edit(author):
        raise NotAllowed("You may not import into this dataset.")
    try:
        on_conflict = OnConflict(on_conflict)
        kind = Kind(kind)
    except ValueError as error:
        raise InvalidContent(str(error), code="invalid-request") from None
    if shape is not None and shape not in SHAPES:
        raise InvalidContent(
            f"Unknown import shape {shape!r}; expected one of: {', '.join(SHAPES)}.",
            code="invalid-request",
        )
    report = ImportReport(partial=partial)
    importer = Importer(dataset, author, on_conflict, partial, report, progress, batch_size, tag)
    with collector_spared(), open_source(source, kind, name, report, spec, shape) as candidates:
        if partial:
            importer.run(candidates, before_commit)
        elif one_writer_at_a_time():
            # Short transactions into a stage, moved in one at the end: a save waits for one
            # batch, not for the whole write (``staging``).
            write_staged(
                importer, candidates, before_commit, lambda: _require_items(report, name, source)
            )
        else:
            with transaction.atomic():
                importer.write_all(candidates)
                if report.failed:
                    report.mark_rolled_back()
                    raise ImportRejected(report)
                _require_items(report, name, source)
                report.committed = True
                if before_commit is not None:
                    before_commit(report)
    _require_items(report, name, source)
    report.committed = True
    if report.counts["created"] + report.counts["updated"] >= LARGE_IMPORT:
        planner_stats.refresh(Transcript, Message)
    if progress is not None:
        progress(report)
    return report


def _require_items(report: ImportReport, name: str | None, source) -> None:
    if not report.items:
        # An empty JSONL file or a folder of hidden files: almost always the wrong path.
        raise InvalidContent(
            f"No transcript found in {name or _describe(source)}.", code="no-transcripts"
        )


def _describe(source) -> str:
    return str(source) if isinstance(source, (str, os.PathLike)) else "the input"
