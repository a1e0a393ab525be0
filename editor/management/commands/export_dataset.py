"""Export a dataset as JSONL, streaming (constant memory).

    python manage.py export_dataset SLUG [--spec S] [--status approved ...] [--out FILE]
        [--format jsonl|messages] [--audience end_user]

Without --spec every transcript keeps its own spec (byte-exact source text). --out writes
to a temporary file renamed into place at the end: an interrupted export leaves no half
file. Conversion losses are summarised on stderr.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from editor import formats
from editor.errors import DomainError
from editor.exporting import MESSAGES_SPEC, Format, export_dataset
from editor.formats.preference import CONVERSATIONAL
from editor.formats.preference import SHAPES as PREFERENCE_SHAPES
from editor.models import Dataset, Status
from editor.pairs import SOURCES as PAIR_SOURCES

SHOWN_LOSSES = 10


class Command(BaseCommand):
    help = (
        "Export the live transcripts of a dataset, one JSON line each, streaming: "
        '{"id", "title", "spec", "status", "metadata", "text"|"document"} lines that '
        "import_transcripts reads back (--format jsonl), or Hugging Face / TRL chat rows "
        '{"messages", "tools"} (--format messages). Conversion losses are listed on stderr.'
    )

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="dataset slug")
        parser.add_argument(
            "--spec",
            choices=formats.SPEC_IDS,
            help="write every transcript in this spec (default: each in its own, byte for byte)",
        )
        parser.add_argument(
            "--status",
            action="append",
            choices=Status.values,
            default=[],
            help="only transcripts in this review state (repeatable; default: all)",
        )
        parser.add_argument(
            "--out",
            metavar="FILE",
            help="write to FILE, replaced only once the export is complete (default: stdout)",
        )
        parser.add_argument(
            "--format",
            choices=[f.value for f in Format],
            default=Format.JSONL.value,
            help="jsonl: re-importable transcript lines; messages: chat-dataset rows in the "
            f"{MESSAGES_SPEC} shape (default: jsonl)",
        )
        parser.add_argument(
            "--audience",
            choices=["end_user"],
            help="apply the rendering policy: only what an end user sees (no system, "
            "reasoning or tool traffic, no header)",
        )
        parser.add_argument(
            "--with-annotations",
            action="store_true",
            help="add each transcript's annotations to its line, placed in the exported "
            "messages and content; a label that cannot follow is reported as a loss",
        )
        parser.add_argument(
            "--preference-shape",
            choices=PREFERENCE_SHAPES,
            default=CONVERSATIONAL,
            help="--format preference: TRL conversational or standard rows, or HH-RLHF text",
        )
        parser.add_argument(
            "--source",
            action="append",
            choices=PAIR_SOURCES,
            dest="sources",
            help="--format preference: pairs from this source (repeatable; default: all)",
        )

    def handle(
        self,
        *args,
        dataset,
        spec,
        status,
        out,
        format,
        audience,
        with_annotations,
        preference_shape=CONVERSATIONAL,
        sources=None,
        **options,
    ):
        if format == Format.MESSAGES and spec not in (None, MESSAGES_SPEC):
            raise CommandError(
                f"--format messages writes {MESSAGES_SPEC} rows; it takes no --spec {spec}."
            )
        try:
            target = Dataset.objects.get(slug=dataset)
        except Dataset.DoesNotExist:
            raise CommandError(f"No dataset with slug {dataset!r}.") from None
        try:
            export = export_dataset(
                target,
                spec=spec,
                format=format,
                statuses=status,
                audience=audience,
                with_annotations=with_annotations,
                preference_shape=preference_shape,
                sources=sources,
            )
            if out:
                _write_atomically(Path(out), export)
            else:
                self._write_to_stdout(export)
        except DomainError as error:
            raise CommandError(error.message) from None
        if format == Format.PREFERENCE:
            left_out = ", ".join(f"{n} {why}" for why, n in export.left_out.items() if n)
            self.stderr.write(f"{export.count} pair(s) exported; left out: {left_out or 'none'}.")
        else:
            self.stderr.write(f"{export.count} transcript(s) exported.")
        if export.loss_count:
            self.stderr.write(f"{export.loss_count} loss(es) in conversion:")
            for loss in export.losses[:SHOWN_LOSSES]:
                where = (
                    "document"
                    if loss.get("message_index") is None
                    else f"message {loss['message_index']}"
                )
                self.stderr.write(
                    f"  {loss['transcript']}: {where}: {loss['field']}: {loss['detail']}"
                )
            if export.loss_count > SHOWN_LOSSES:
                self.stderr.write(f"  … and {export.loss_count - SHOWN_LOSSES} more")

    def _write_to_stdout(self, lines) -> None:
        try:
            for line in lines:
                self.stdout.write(line, ending="")
            self.stdout.flush()
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly, as other command-line tools do.
            # Python would flush stdout again at exit and fail once more: point it at devnull.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(1) from None


def _write_atomically(path: Path, lines) -> None:
    if path.is_dir():
        raise CommandError(f"--out {path} is a directory; name a file.")
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as error:
        raise CommandError(f"Cannot write {path}: {error.strerror or error}.") from None
    try:
        # mkstemp makes the file private (0600); the export gets the usual permissions.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.writelines(lines)
        os.replace(temporary, path)
    except BaseException as error:
        os.unlink(temporary)
        if isinstance(error, OSError):
            raise CommandError(f"Cannot write {path}: {error.strerror or error}.") from None
        raise
