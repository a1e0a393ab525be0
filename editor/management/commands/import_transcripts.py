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

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from editor import formats
from editor.importing import ImportRejected, ImportReport, Kind, OnConflict, import_transcripts
from editor.models import Dataset
from editor.storage import StorageError

SHOWN_FAILURES = 20


class Command(BaseCommand):
    help = "Import transcripts (file, JSONL, zip or folder; - for stdin) into a dataset."

    def add_arguments(self, parser):
        parser.add_argument("path", help="file, folder, zip archive or - for standard input")
        parser.add_argument("--dataset", required=True, help="dataset slug (created if missing)")
        parser.add_argument("--spec", choices=formats.SPEC_IDS, help="spec of items that name none")
        parser.add_argument(
            "--on-conflict",
            choices=[c.value for c in OnConflict],
            default=OnConflict.UPDATE.value,
            help="what to do with an id that is already in the dataset (default: update)",
        )
        parser.add_argument(
            "--partial", action="store_true", help="import the readable items, report the rest"
        )
        parser.add_argument("--kind", choices=[k.value for k in Kind], default=Kind.AUTO.value)
        parser.add_argument("--report", metavar="FILE", help="write the full report as JSON")

    def handle(self, *args, path, dataset, spec, on_conflict, partial, kind, report, **options):
        source = sys.stdin.buffer if path == "-" else path
        with transaction.atomic():
            # Created in the import's transaction: a rejected import leaves no empty dataset.
            target, created = Dataset.objects.get_or_create(
                slug=dataset, defaults={"name": dataset}
            )
            try:
                result = import_transcripts(
                    source,
                    dataset=target,
                    author=None,
                    spec=spec,
                    on_conflict=on_conflict,
                    partial=partial,
                    kind=kind,
                    name="<stdin>" if path == "-" else None,
                    progress=self._progress,
                )
            except ImportRejected as rejected:
                self._finish_progress()
                self._write_report(rejected.report, report)
                self._list_failures(rejected.report)
                raise CommandError(rejected.report.summary()) from None
            except StorageError as error:
                raise CommandError(error.message) from None
        self._finish_progress()
        self._write_report(result, report)
        self._list_failures(result)
        if created:
            self.stdout.write(f"Created dataset {dataset!r}.")
        self.stdout.write(result.summary())

    def _progress(self, report: ImportReport) -> None:
        done = sum(report.counts.values())
        share = f" ({report.bytes_read * 100 // report.bytes_total}%)" if report.bytes_total else ""
        self.stderr.write(f"\r{done} items read{share}", ending="")
        self.stderr.flush()

    def _finish_progress(self) -> None:
        self.stderr.write("")

    def _list_failures(self, report: ImportReport) -> None:
        failures = report.failures
        for item in failures[:SHOWN_FAILURES]:
            self.stderr.write(f"{item.location}: {item.message}")
        if len(failures) > SHOWN_FAILURES:
            self.stderr.write(f"… and {len(failures) - SHOWN_FAILURES} more (see --report)")

    def _write_report(self, report: ImportReport, path: str | None) -> None:
        if path:
            with open(path, "w", encoding="utf-8") as out:
                json.dump(report.to_dict(), out, ensure_ascii=False, indent=1)
