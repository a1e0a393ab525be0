"""``ocm push``, ``ocm pull`` and ``ocm status``: the ``ocm`` commands that talk to a server.

Their arguments are declared with the other commands in ``editor/formats/cli.py``, which
imports this module only when one of them runs (docs/architecture.md says why). The server
and the token come from ``OCM_URL`` and ``OCM_TOKEN``.
"""

from __future__ import annotations

import argparse
import codecs
import json
from typing import TextIO

import httpx

from .client import Client
from .errors import ApiError, ImportFailed
from .results import ImportTask

OK, FAILED, UNUSABLE = 0, 1, 2


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        client = Client()
    except ValueError as problem:
        err.write(f"ocm: {problem}\n")
        return UNUSABLE
    with client:
        try:
            return COMMANDS[args.command](client, args, out, err)
        except ImportFailed as failed:
            out.write(_summary(failed.task) + "\n")
            _write_failures(failed.task, err)
            return FAILED
        except ApiError as refused:
            err.write(f"ocm: {refused.message}" + (f" ({refused.code})" if refused.code else ""))
            err.write("\n")
            return UNUSABLE
        except httpx.HTTPError as problem:
            err.write(f"ocm: cannot reach {client.url}: {problem}\n")
            return UNUSABLE
        except OSError as problem:
            err.write(f"ocm: {problem.filename or ''}: {problem.strerror or problem}\n")
            return UNUSABLE


def push(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    task = client.push(
        args.dataset,
        args.file,
        spec=args.spec,
        on_conflict=args.on_conflict,
        partial=args.partial,
        shape=args.shape,
        wait=not args.no_wait,
    )
    out.write(_summary(task) + "\n")
    _write_failures(task, err)
    return OK


def pull(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.version and (args.status or args.with_suggestions):
        # A version is exported whole, the same bytes every time (Client.pull refuses too).
        err.write("ocm: a version is pulled whole: no --status, no --with-suggestions\n")
        return UNUSABLE
    options = {
        "spec": args.to,
        "version": args.version,
        "status": args.status or (),
        "with_suggestions": args.with_suggestions,
    }
    if args.output and args.output != "-":
        done = client.pull(args.dataset, args.output, **options)
        err.write(f"ocm: {done.lines:,} transcripts written to {done.path}\n")
        return OK
    binary = getattr(out, "buffer", None)
    if binary is not None:
        out.flush()
        client.pull(args.dataset, binary, **options)
        binary.flush()
    else:  # a text stream with no bytes underneath (a test's StringIO)
        client.pull(args.dataset, _TextSink(out), **options)
    return OK


def status(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    task = client.import_task(args.import_id)
    if args.json:
        json.dump(task.raw, out, ensure_ascii=False, indent=2)
        out.write("\n")
    else:
        out.write(_summary(task) + "\n")
        _write_failures(task, err)
    return FAILED if task.status == "failed" else OK


COMMANDS = {"push": push, "pull": pull, "status": status}


def _summary(task: ImportTask) -> str:
    counts = task.counts
    figures = ", ".join(
        f"{counts.get(action, 0)} {action}"
        for action in ("created", "updated", "skipped", "failed")
    )
    line = f"import {task.id} into {task.dataset}: {task.status}"
    if counts:
        line += f" ({figures})"
    if task.error:
        line += f": {task.error}"
    return line


def _write_failures(task: ImportTask, err: TextIO) -> None:
    for item in task.failures:
        err.write(f"{item['location']}: {item.get('code') or 'failed'}: {item['message']}\n")


class _TextSink:
    """A binary file over a text stream: UTF-8 bytes in, text out (a character split
    between two chunks is written once whole)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.name = getattr(stream, "name", "<stdout>")
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def write(self, data: bytes) -> None:
        self.stream.write(self.decoder.decode(data))
