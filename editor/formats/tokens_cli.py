"""``ocm tokens FILE (--encoding E | --tokenizer tokenizer.json) [--spec S] [--json]``:
the tokens of a transcript per message, per channel and in all (``editor.formats.tokens``).

Text output: one line per message (index, role, channel, tokens), then the framing between
messages and the total. Exit 0, 1 when the input has errors (counts still printed), 2 when
the tokenizer cannot be loaded (the message says how to provide it).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from .diagnostics import has_errors
from .parsing import parse
from .tokens import ENCODINGS, TokenizerUnavailable, huggingface_tokenizer, tiktoken_encoding
from .tokens import token_counts as count_tokens

OK, FAILED, UNUSABLE = 0, 1, 2


def add_options(command: argparse.ArgumentParser) -> None:
    which = command.add_mutually_exclusive_group(required=True)
    which.add_argument("--encoding", choices=ENCODINGS, help="a tiktoken encoding")
    which.add_argument(
        "--tokenizer", metavar="TOKENIZER_JSON", help="a Hugging Face tokenizer.json file"
    )
    command.add_argument("--json", action="store_true", help="the counts as one JSON object")


def cmd_tokens(args: argparse.Namespace, out, err, *, read: Callable[[str], str]) -> int:
    """Count ``args.file``; ``read`` reads a path (``-``: standard input) as the other
    commands do."""
    text = read(args.file)
    try:
        if args.encoding:
            tokenizer = tiktoken_encoding(args.encoding)
        else:
            tokenizer = huggingface_tokenizer(read(args.tokenizer), name=args.tokenizer)
    except TokenizerUnavailable as problem:
        err.write(f"ocm: {problem}\n")
        return UNUSABLE
    transcript, diagnostics = parse(text, spec=args.spec)
    for diagnostic in diagnostics:
        err.write(
            f"{args.file}:{diagnostic.line}:{diagnostic.column}: {diagnostic.severity} "
            f"{diagnostic.code}: {diagnostic.message}\n"
        )
    counts = count_tokens(transcript, tokenizer)
    if args.json:
        out.write(json.dumps(counts.to_dict(), ensure_ascii=False) + "\n")
    else:
        for message in counts.messages:
            out.write(
                f"{message.index}\t{message.role}\t{message.channel or '-'}\t{message.tokens}\n"
            )
        out.write(f"framing\t{counts.framing}\n")
        out.write(f"total\t{counts.total}\n")
    return FAILED if has_errors(diagnostics) else OK
