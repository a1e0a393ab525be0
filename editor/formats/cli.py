"""``ocm``: detect, parse, validate, convert and render chat transcripts from the shell.

    ocm detect FILE
    ocm parse FILE [--spec S]                 canonical JSON on stdout
    ocm validate FILE [--spec S] [--format text|json]
                                              FILE:line:col: severity CODE: message
    ocm convert FILE --to S [--from S]        text on stdout, losses on stderr
    ocm render FILE [--audience A]
    ocm render FILE --audience training [--convention C] [--json]
                                              what a training run computes loss on
    ocm tokens FILE (--encoding E | --tokenizer tokenizer.json) [--json]
                                              tokens per message, channel and in all
    ocm push FILE --dataset SLUG [--shape S]  import into a server's dataset, print the report
    ocm pull SLUG --to S [--version V] [-o FILE]
                                              a server's dataset in spec S, as JSONL
    ocm status IMPORT_ID                      an import's status and report

``validate`` and ``convert`` also read a JSONL dataset (``--jsonl``, or a ``.jsonl`` /
``.ndjson`` FILE; ``-j N`` uses N processes): one transcript a line, reported by line number
(``FILE:RECORD: line:col: …``), with a summary on stderr; ``convert`` writes one converted
record a line (see ``jsonl``). ``-`` reads standard input.

``push``, ``pull`` and ``status`` talk to a workbench server (``OCM_URL``, with the API token
in ``OCM_TOKEN``) through ``editor.client`` (docs/client.md).

Exit status: 0 fine, 1 the input has errors (or no spec was detected; the import failed, for
``push`` and ``status``), 2 the command could not run (unreadable file, bad arguments,
missing feature, the server unreachable or refusing).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from typing import IO

from . import jsonl, tokens_cli, training
from .canonical import dumps
from .detect import detect as detect_spec
from .diagnostics import ERROR, Diagnostic, has_errors
from .parsing import parse, serialize
from .preference import IMPORT_SHAPES
from .specs import SPEC_IDS

OK, FAILED, UNUSABLE = 0, 1, 2
AUDIENCES = ("end_user", "annotator", "debug", "training")


class CliError(Exception):
    """A problem with the command itself (exit 2), reported without a traceback."""


def optional(module: str):
    """An optional sibling module (validation, conversion, rendering) when it is installed."""
    name = f"editor.formats.{module}"
    return importlib.import_module(name) if importlib.util.find_spec(name) is not None else None


def read_input(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()  # noqa: SIM115
    except OSError as err:
        raise CliError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CliError(f"{path}: not UTF-8 (invalid byte at offset {err.start})") from None


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``1 error``, ``2 errors``; ``1 loss``, ``2 losses``."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def installed_version() -> str:
    try:
        return version("ocm-workbench")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def format_diagnostic(path: str, diagnostic: Diagnostic, record: int | None = None) -> str:
    """``FILE:LINE:COL: severity CODE: message``; a dataset record's diagnostics are
    ``FILE:RECORD: LINE:COL: …`` (the position inside that record's transcript)."""
    where = f"{diagnostic.line}:{diagnostic.column}"
    where = f"{path}:{where}" if record is None else f"{path}:{record}: {where}"
    return f"{where}: {diagnostic.severity} {diagnostic.code}: {diagnostic.message}"


def cmd_detect(args: argparse.Namespace, out, err) -> int:
    spec = detect_spec(read_input(args.file))
    if spec is None:
        err.write(f"{args.file}: no supported spec detected\n")
        return FAILED
    out.write(spec + "\n")
    return OK


def cmd_parse(args: argparse.Namespace, out, err) -> int:
    transcript, diagnostics = parse(read_input(args.file), spec=args.spec)
    out.write(dumps(transcript, diagnostics) + "\n")
    return FAILED if has_errors(diagnostics) else OK


def cmd_validate(args: argparse.Namespace, out, err) -> int:
    if dataset_input(args):
        return validate_dataset(args, out, err)
    validator = optional("validate")
    if validator is None:
        raise CliError("validation is not available in this installation")
    text = read_input(args.file)
    transcript, diagnostics = validator.validate_text(text, args.spec)
    write_diagnostics(args, [(None, d) for d in diagnostics], out)
    errors = sum(d.severity == ERROR for d in diagnostics)
    err.write(
        f"{args.file}: {transcript.spec}, {counted(len(transcript.messages), 'message')}, "
        f"{counted(errors, 'error')}, {counted(len(diagnostics) - errors, 'other diagnostic')}\n"
    )
    return FAILED if errors else OK


def write_diagnostics(
    args: argparse.Namespace, found: Iterable[tuple[int | None, Diagnostic]], out
) -> None:
    """``found`` (record number or None, diagnostic) as compiler lines or one JSON array."""
    if args.format == "text":
        for record, diagnostic in found:
            out.write(format_diagnostic(args.file, diagnostic, record) + "\n")
        return
    out.write("[")
    for i, (record, diagnostic) in enumerate(found):
        item = diagnostic.to_dict()
        item.setdefault("fix", None)
        if record is not None:
            item["record"] = record
        out.write(("," if i else "") + "\n  " + json.dumps(item, ensure_ascii=False))
    out.write("\n]\n")


def dataset_input(args: argparse.Namespace) -> bool:
    """A JSONL dataset: ``--jsonl``, or a .jsonl/.ndjson file that is not one openchatml-json
    transcript written as JSON Lines."""
    if args.jsonl:
        return True
    if not args.file.endswith(jsonl.DATASET_SUFFIXES):
        return False
    with open_input(args.file) as lines:
        first = next(jsonl.numbered_lines(lines), None)
    return first is not None and jsonl.is_dataset(first[1])


def open_input(path: str) -> contextlib.AbstractContextManager[IO[bytes]]:
    try:
        return contextlib.nullcontext(sys.stdin.buffer) if path == "-" else open(path, "rb")
    except OSError as err:
        raise CliError(f"{path}: cannot read: {err.strerror or err}") from None


def dataset_reports(args: argparse.Namespace, task) -> Iterator[jsonl.RecordReport]:
    with open_input(args.file) as lines:
        yield from jsonl.run(lines, task, jobs=args.jobs)


def validate_dataset(args: argparse.Namespace, out, err) -> int:
    totals = Counter()

    def diagnostics() -> Iterator[tuple[int, Diagnostic]]:
        for report in dataset_reports(args, partial(jsonl.validate_record, spec=args.spec)):
            errors = sum(d.severity == ERROR for d in report.diagnostics)
            totals.update(records=1, failed=bool(errors), errors=errors)
            totals.update(others=len(report.diagnostics) - errors)
            for diagnostic in report.diagnostics:
                yield report.number, diagnostic

    write_diagnostics(args, diagnostics(), out)
    err.write(
        f"{args.file}: {counted(totals['records'], 'record')}, "
        f"{totals['failed']} with errors, {counted(totals['errors'], 'error')}, "
        f"{counted(totals['others'], 'other diagnostic')}\n"
    )
    return FAILED if totals["errors"] else OK


def cmd_convert(args: argparse.Namespace, out, err) -> int:
    if dataset_input(args):
        return convert_dataset(args, out, err)
    transcript, diagnostics = parse(read_input(args.file), spec=args.source)
    for diagnostic in diagnostics:
        err.write(format_diagnostic(args.file, diagnostic) + "\n")
    if has_errors(diagnostics) and not transcript.messages:
        return FAILED
    converter = optional("convert")
    if converter is not None:
        text, losses = converter.convert(transcript, to=args.to)
    else:
        text, losses = serialize(transcript, args.to), []
    out.write(text)
    for loss in losses:
        err.write(f"loss: {loss}\n")
    return FAILED if has_errors(diagnostics) else OK


def convert_dataset(args: argparse.Namespace, out, err) -> int:
    """One converted record a line on stdout; diagnostics and losses on stderr, by line."""
    totals = Counter()
    task = partial(jsonl.convert_record, spec=args.source, to=args.to)
    for report in dataset_reports(args, task):
        for diagnostic in report.diagnostics:
            err.write(format_diagnostic(args.file, diagnostic, report.number) + "\n")
        for loss in report.losses:
            err.write(f"{args.file}:{report.number}: loss: {loss}\n")
        if report.output is None:
            totals.update(failed=1)
        else:
            out.write(report.output + "\n")
            totals.update(converted=1, errors=has_errors(report.diagnostics))
        totals.update(losses=len(report.losses))
    err.write(
        f"{args.file}: {counted(totals['converted'], 'record')} converted, "
        f"{totals['failed']} not converted, {counted(totals['losses'], 'loss', 'losses')}\n"
    )
    return FAILED if totals["failed"] or totals["errors"] else OK


def cmd_render(args: argparse.Namespace, out, err) -> int:
    renderer = optional("render")
    if renderer is None:
        raise CliError("rendering is not available in this installation")
    text = read_input(args.file)
    transcript, diagnostics = parse(text, spec=args.spec)
    for diagnostic in diagnostics:
        err.write(format_diagnostic(args.file, diagnostic) + "\n")
    if args.audience == "training":
        out.write(training_output(args, transcript, text, out))
    elif args.convention or args.json:
        raise CliError("--convention and --json go with --audience training")
    else:
        out.write(renderer.render_text(transcript, args.audience, source_text=text))
    return FAILED if has_errors(diagnostics) else OK


def training_output(args: argparse.Namespace, transcript, text: str, out) -> str:
    """``render --audience training``: the mask as JSON, or the marked text (dimmed on a
    terminal)."""
    # A text spec's file is its own serialization: the spans are offsets into FILE.
    if args.json:
        mask = training.training_json(transcript, args.convention, text=text)
        return json.dumps(mask, ensure_ascii=False, indent=2) + "\n"
    terminal = bool(getattr(out, "isatty", lambda: False)())
    return training.render_training_text(transcript, args.convention, terminal=terminal, text=text)


def cmd_remote(args: argparse.Namespace, out, err) -> int:
    # Imported here, not at the top: the spec core's commands stay offline and quick to start
    # without httpx, and the spec core depends on the client only through this function
    # (docs/architecture.md, "The client").
    from editor.client import commands

    return commands.run(args, out, err)


def remote_commands(commands) -> None:
    """``push``, ``pull`` and ``status``: the commands that talk to a server."""
    push = commands.add_parser(
        "push",
        help="import FILE into a dataset on the server and print the import's report",
        description="Upload FILE (a transcript, JSONL or a zip) to the dataset, wait for the "
        "import and print its report. The server is OCM_URL, the API token OCM_TOKEN.",
    )
    push.add_argument("file", metavar="FILE", help="the file to import")
    push.add_argument("--dataset", required=True, metavar="SLUG", help="the dataset's slug")
    push.add_argument("--spec", choices=SPEC_IDS, help="for items that do not name theirs")
    push.add_argument(
        "--on-conflict",
        choices=("update", "skip"),
        default="update",
        help="a transcript whose external id exists already (default: %(default)s)",
    )
    push.add_argument(
        "--partial", action="store_true", help="import the readable items, report the rest"
    )
    push.add_argument(
        "--shape",
        choices=IMPORT_SHAPES,
        help="how rows are read: preference (TRL rows) or hh (HH-RLHF text) pairs, or "
        "transcripts; by default rows with chosen and rejected keys are pairs",
    )
    push.add_argument(
        "--no-wait", action="store_true", help="print the queued import and return at once"
    )
    pull = commands.add_parser(
        "pull",
        help="write a dataset on the server (or one of its versions) as JSONL in spec S",
        description="Stream the dataset's transcripts, converted to spec S, one a line. The "
        "server is OCM_URL, the API token OCM_TOKEN.",
    )
    pull.add_argument("dataset", metavar="SLUG", help="the dataset's slug")
    pull.add_argument("--to", required=True, choices=SPEC_IDS, help="the spec to write")
    pull.add_argument("--version", metavar="V", help="a version of the dataset")
    pull.add_argument(
        "--status",
        action="append",
        choices=("draft", "in_review", "approved", "rejected"),
        help="only transcripts in this review state (repeatable)",
    )
    pull.add_argument(
        "--with-suggestions",
        action="store_true",
        help="add each transcript's judge suggestions, marked as the model's",
    )
    pull.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (default: standard output)"
    )
    status = commands.add_parser(
        "status",
        help="print an import's status and report",
        description="The import's status and report. The server is OCM_URL, the API token "
        "OCM_TOKEN.",
    )
    status.add_argument("import_id", metavar="IMPORT_ID", type=positive, help="the import's id")
    status.add_argument("--json", action="store_true", help="the import as the API answers it")
    for sub in (push, pull, status):
        sub.set_defaults(handler=cmd_remote)


def dataset_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--jsonl",
        action="store_true",
        help="FILE is a JSONL dataset, one transcript (document or envelope) a line "
        "(implied by a .jsonl or .ndjson name)",
    )
    command.add_argument(
        "-j",
        "--jobs",
        type=positive,
        default=1,
        metavar="N",
        help="worker processes for a dataset (default: %(default)s)",
    )


def positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value!r}")
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ocm",
        description="Chat transcript specs: detect, parse, validate, convert, render; push "
        "to, pull from and follow imports on a workbench server.",
    )
    parser.add_argument("--version", action="version", version=f"ocm {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler, help_text: str, spec: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("file", metavar="FILE", help="input file, or - for standard input")
        if spec:
            sub.add_argument(
                "--spec", choices=SPEC_IDS, help="the input's spec (detected when omitted)"
            )
        sub.set_defaults(handler=handler)
        return sub

    command("detect", cmd_detect, "print the spec id of FILE", spec=False)
    command("parse", cmd_parse, "print the canonical JSON of FILE with its diagnostics")
    validate = command("validate", cmd_validate, "list syntax and validation diagnostics of FILE")
    validate.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: FILE:LINE:COL: severity CODE: message lines; json: one array of "
        "diagnostics (default: %(default)s)",
    )
    dataset_options(validate)
    convert = command(
        "convert", cmd_convert, "write FILE in another spec; losses go to stderr", spec=False
    )
    dataset_options(convert)
    convert.add_argument("--to", required=True, choices=SPEC_IDS, help="the spec to write")
    convert.add_argument(
        "--from", dest="source", choices=SPEC_IDS, help="the input's spec (detected when omitted)"
    )
    render = command("render", cmd_render, "print FILE as an audience sees it")
    render.add_argument(
        "--audience",
        choices=AUDIENCES,
        default="end_user",
        help="who reads it: end_user sees what a chat user sees, annotator everything with "
        "hidden parts marked, debug the raw source, training what a training run computes "
        "loss on (default: %(default)s)",
    )
    render.add_argument(
        "--convention",
        choices=training.CONVENTIONS,
        help="with --audience training: which messages are trained (default: gpt_oss for "
        "harmony, all_assistant for the other specs)",
    )
    render.add_argument(
        "--json", action="store_true", help="with --audience training: the mask as JSON"
    )
    tokens = command(
        "tokens",
        partial(tokens_cli.cmd_tokens, read=read_input),
        "count FILE's tokens per message, per channel and in all, as the spec renders it",
    )
    tokens_cli.add_options(tokens)
    remote_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None, out=None, err=None) -> int:
    if out is None:
        # Transcripts are UTF-8 whatever the locale says; a C locale must not crash the output.
        # A lone surrogate (a JSON "\ud800" escape) has no UTF-8 form: it is written as that
        # same escape, which is also what JSON output needs.
        sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")
        sys.stderr.reconfigure(encoding="utf-8", errors="backslashreplace")
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args, out, err)
    except CliError as problem:
        err.write(f"ocm: {problem}\n")
        return UNUSABLE


if __name__ == "__main__":
    sys.exit(main())
