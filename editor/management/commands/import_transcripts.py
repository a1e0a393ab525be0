"""Import transcripts from a file, a JSONL file, a zip archive or a folder (`-`: stdin).

    python manage.py import_transcripts PATH --dataset SLUG [--spec S]
        [--on-conflict update|skip] [--partial] [--kind auto|file|jsonl|zip|folder]
        [--report report.json]

The dataset is created when it does not exist. Progress goes to stderr, the summary to
stdout. All or nothing unless --partial: an unreadable item fails the command (exit 1) and
nothing is written; the failures are listed with their line and reason.
"""

from __future__ import annotations

import json
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from editor import formats
from editor.errors import DomainError
from editor.importing import ImportRejected, ImportReport, Kind, OnConflict, import_transcripts
from editor.importing.preference import SHAPES as PREFERENCE_SHAPES
from editor.models import Dataset, Transcript, validate_dataset_slug

SHOWN_FAILURES = 20
SLUG_LENGTH = Dataset._meta.get_field("slug").max_length
BAR_WIDTH = 30
LOG_EVERY = 10_000


def plain(text: str) -> str:
    """Progress is not an error: no red on a terminal's stderr."""
    return text


class Command(BaseCommand):
    help = (
        "Import transcripts into a dataset (created if missing) from a transcript file (text or "
        "JSON, spec detected unless --spec), a JSONL file (one transcript or "
        '{"text"|"document", "spec", "id", "title", "metadata"} envelope per line), a zip '
        "archive or a folder; PATH - reads standard input. All or nothing unless --partial. "
        "Items whose id is already in the dataset are updated (a new revision) or skipped; "
        "unchanged ones are always skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="file, folder, zip archive or - for standard input")
        parser.add_argument("--dataset", required=True, help="dataset slug (created if missing)")
        parser.add_argument(
            "--spec",
            choices=formats.SPEC_IDS,
            help="spec of the items that do not name theirs (default: detected per item)",
        )
        parser.add_argument(
            "--on-conflict",
            choices=[c.value for c in OnConflict],
            default=OnConflict.UPDATE.value,
            help="an item whose id is already in the dataset: update it (a new revision) or "
            "skip it (default: update)",
        )
        parser.add_argument(
            "--partial",
            action="store_true",
            help="import the readable items and report the rest (default: import nothing "
            "when any item cannot be read)",
        )
        parser.add_argument(
            "--kind",
            choices=[k.value for k in Kind],
            default=Kind.AUTO.value,
            help="how to read PATH (default: auto: a folder, a zip by its signature, JSONL by "
            "its .jsonl/.ndjson name or its lines, otherwise one transcript)",
        )
        parser.add_argument(
            "--shape",
            choices=PREFERENCE_SHAPES,
            help="rows of a JSONL or JSON array file: preference (TRL rows) or hh (HH-RLHF "
            "text) reads every row as a pair, transcripts never (default: by their keys)",
        )
        parser.add_argument(
            "--report", metavar="FILE", help="write the full report, item by item, as JSON"
        )

    def handle(
        self, *args, path, dataset, spec, on_conflict, partial, kind, report, shape=None, **options
    ):
        self._drawn = False  # a progress bar is on the terminal's current line
        self._last_step = None
        _check_slug(dataset)
        source = sys.stdin.buffer if path == "-" else path
        # Not in a transaction of its own: the import commits as the task worker's do (short
        # transactions on SQLite, so that nobody's save waits for the whole import).
        target, created = Dataset.objects.get_or_create(slug=dataset, defaults={"name": dataset})
        try:
            try:
                result = import_transcripts(
                    source,
                    dataset=target,
                    author=None,
                    spec=spec,
                    on_conflict=on_conflict,
                    partial=partial,
                    kind=kind,
                    progress=self._progress,
                    shape=shape,
                )
            except BaseException:
                if created and not Transcript.all_objects.filter(dataset=target).exists():
                    target.delete()  # a rejected import leaves no empty dataset behind
                raise
        except ImportRejected as rejected:
            self._finish_progress()
            self._write_report(rejected.report, report)
            self._list_failures(rejected.report)
            raise CommandError(
                f"{rejected.report.summary()} --partial imports the readable ones."
            ) from None
        except DomainError as error:
            self._finish_progress()
            raise CommandError(error.message) from None
        self._finish_progress()
        self._write_report(result, report)
        self._list_failures(result)
        if created:
            self.stdout.write(f"Created dataset {dataset!r}.")
        self.stdout.write(result.summary())

    def _progress(self, report: ImportReport) -> None:
        """A bar redrawn in place on a terminal; a line per tenth of the input in a log."""
        done = len(report.items)
        total = report.bytes_total
        percent = report.bytes_read * 100 // total if total else None
        noun = "item" if done == 1 else "items"
        if percent is None:
            line = f"{done} {noun} read"
        else:
            filled = BAR_WIDTH * percent // 100
            line = f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {done} {noun} read ({percent}%)"
        if self.stderr.isatty():
            self.stderr.write(f"\r{line}", style_func=plain, ending="")
            self.stderr.flush()
            self._drawn = True
        else:
            # Without a size (a pipe), a line per LOG_EVERY items.
            step = percent // 10 if percent is not None else done // LOG_EVERY
            if step != self._last_step:
                self._last_step = step
                self.stderr.write(line, style_func=plain)

    def _finish_progress(self) -> None:
        if self._drawn:
            self.stderr.write("", style_func=plain)
            self._drawn = False

    def _list_failures(self, report: ImportReport) -> None:
        failures = report.failures
        for item in failures[:SHOWN_FAILURES]:
            self.stderr.write(f"{item.location}: {item.message}")
        if len(failures) > SHOWN_FAILURES:
            self.stderr.write(f"… and {len(failures) - SHOWN_FAILURES} more (see --report)")

    def _write_report(self, report: ImportReport, path: str | None) -> None:
        if not path:
            return
        try:
            with open(path, "w", encoding="utf-8") as out:
                json.dump(report.to_dict(), out, ensure_ascii=False, indent=1)
        except OSError as error:
            # Raised after the import: say what was done, not only what failed.
            raise CommandError(
                f"Cannot write the report to {path}: {error.strerror or error} ({report.summary()})"
            ) from None


def _check_slug(slug: str) -> None:
    """Refuse a slug the dataset pages could not address (or the database not store)."""
    if len(slug) > SLUG_LENGTH:
        raise CommandError(f"The dataset slug is longer than {SLUG_LENGTH} characters.")
    try:
        validate_dataset_slug(slug)
    except ValidationError as error:
        raise CommandError(f"{slug!r} is not a valid dataset slug: {error.messages[0]}") from None
