"""Export a dataset as JSONL, streaming (constant memory).

    python manage.py export_dataset SLUG [--spec S] [--status approved ...] [--out FILE]
        [--format jsonl|messages] [--audience end_user]

Without --spec every transcript keeps its own spec (byte-exact source text). --out writes
to a temporary file renamed into place at the end: an interrupted export leaves no half
file. Conversion losses are summarised on stderr.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from editor import formats
from editor.exporting import Format, export_dataset
from editor.models import Dataset, Status
from editor.storage import StorageError

SHOWN_LOSSES = 10


class Command(BaseCommand):
    help = "Export a dataset as JSONL lines or chat-dataset rows (streaming)."

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="dataset slug")
        parser.add_argument(
            "--spec", choices=formats.SPEC_IDS, help="default: each transcript's own"
        )
        parser.add_argument(
            "--status",
            action="append",
            choices=Status.values,
            default=[],
            help="only transcripts in this review state (repeatable)",
        )
        parser.add_argument("--out", metavar="FILE", help="default: standard output")
        parser.add_argument(
            "--format", choices=[f.value for f in Format], default=Format.JSONL.value
        )
        parser.add_argument("--audience", choices=["end_user"], help="apply the rendering policy")

    def handle(self, *args, dataset, spec, status, out, format, audience, **options):
        try:
            target = Dataset.objects.get(slug=dataset)
        except Dataset.DoesNotExist:
            raise CommandError(f"No dataset with slug {dataset!r}.") from None
        try:
            export = export_dataset(
                target, spec=spec, format=format, statuses=status, audience=audience
            )
            if out:
                _write_atomically(Path(out), export)
            else:
                for line in export:
                    self.stdout.write(line, ending="")
        except StorageError as error:
            raise CommandError(error.message) from None
        self.stderr.write(f"{export.count} transcript(s) exported.")
        if export.loss_count:
            self.stderr.write(f"{export.loss_count} loss(es) in conversion:")
            for loss in export.losses[:SHOWN_LOSSES]:
                where = (
                    "document"
                    if loss["message_index"] is None
                    else f"message {loss['message_index']}"
                )
                self.stderr.write(
                    f"  {loss['transcript']}: {where}: {loss['field']}: {loss['detail']}"
                )
            if export.loss_count > SHOWN_LOSSES:
                self.stderr.write(f"  … and {export.loss_count - SHOWN_LOSSES} more")


def _write_atomically(path: Path, lines) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.writelines(lines)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
