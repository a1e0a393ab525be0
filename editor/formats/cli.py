"""``ocm``: detect, parse, validate, convert and render chat transcripts from the shell.

    ocm detect FILE
    ocm parse FILE [--spec S]                 canonical JSON on stdout
    ocm validate FILE [--spec S]              FILE:line:col: severity CODE: message
    ocm convert FILE --to S [--from S]        text on stdout, losses on stderr
    ocm render FILE [--audience A]

``-`` reads standard input. Exit status: 0 fine, 1 the input has errors (or no spec was
detected), 2 the command could not run (unreadable file, bad arguments, missing feature).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from . import parse, serialize
from .canonical import dumps
from .detect import detect as detect_spec
from .diagnostics import ERROR, Diagnostic, has_errors
from .specs import SPEC_IDS

OK, FAILED, UNUSABLE = 0, 1, 2
AUDIENCES = ("end_user", "annotator", "debug")


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


def counted(number: int, noun: str) -> str:
    """``1 error``, ``2 errors``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def installed_version() -> str:
    try:
        return version("ocm-workbench")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def format_diagnostic(path: str, diagnostic: Diagnostic) -> str:
    return f"{path}:{diagnostic.line}:{diagnostic.column}: {diagnostic.severity} {diagnostic.code}: {diagnostic.message}"


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
    text = read_input(args.file)
    transcript, diagnostics = parse(text, spec=args.spec)
    validator = optional("validate")
    if validator is not None and transcript.spec in SPEC_IDS:
        diagnostics = diagnostics + list(validator.validate(transcript, text=text))
    for diagnostic in diagnostics:
        out.write(format_diagnostic(args.file, diagnostic) + "\n")
    errors = sum(d.severity == ERROR for d in diagnostics)
    err.write(
        f"{args.file}: {transcript.spec}, {counted(len(transcript.messages), 'message')}, "
        f"{counted(errors, 'error')}, {counted(len(diagnostics) - errors, 'other diagnostic')}\n"
    )
    return FAILED if errors else OK


def cmd_convert(args: argparse.Namespace, out, err) -> int:
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


def cmd_render(args: argparse.Namespace, out, err) -> int:
    renderer = optional("render")
    if renderer is None:
        raise CliError("rendering is not available in this installation")
    text = read_input(args.file)
    transcript, diagnostics = parse(text, spec=args.spec)
    for diagnostic in diagnostics:
        err.write(format_diagnostic(args.file, diagnostic) + "\n")
    out.write(renderer.render_text(transcript, args.audience, source_text=text))
    return FAILED if has_errors(diagnostics) else OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ocm", description="Chat transcript specs: detect, parse, validate, convert, render."
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
    command("validate", cmd_validate, "list syntax and validation diagnostics of FILE")
    convert = command(
        "convert", cmd_convert, "write FILE in another spec; losses go to stderr", spec=False
    )
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
        "hidden parts marked, debug the raw source (default: %(default)s)",
    )
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
