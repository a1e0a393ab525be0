"""Candidates: the items of an import as read, before they are parsed and checked.

A JSONL line, a file holding one envelope and an item of a JSON array are read by the one
reader of the JSONL envelope, ``editor.formats.jsonl``; this module turns what it read, or
why it read nothing, into a ``Candidate``, and reads a whole file (one transcript, or a JSON
array of them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from editor import formats
from editor.formats import jsonl
from editor.importing import limits
from editor.importing.report import ImportReport
from editor.models import Status

MESSAGE_KEYS = ("role", "from", "token")  # what marks an array item as a message, not a transcript


@dataclass(slots=True)
class Candidate:
    """One item as read from the input, before parsing; a JSONL line may come still unread
    (``line``: ``read`` reads it, where the item is parsed, possibly in the import helper
    process, so that the process reading the source does not decode every line)."""

    location: str
    text: str = ""
    line: bytes | None = None  # a JSONL line (a ``jsonl.record_line``) not read yet
    number: int = 0  # that line's number in its file
    spec: str | None = None  # the item's own, else the import's, else none yet (detected)
    external_id: str = ""
    title: str = ""
    metadata: dict = field(default_factory=dict)
    status: str = ""  # the envelope's review state, applied to new transcripts by curators
    empty: bool = False  # an envelope naming its spec with an empty body: an empty transcript
    error: str = ""  # why the item could not even be read
    error_code: str = ""
    fallback_title: str = ""  # a file's name, used when nothing better names the item
    # A preference row's pair ({"message_index", "chosen", "rejected"}), recorded once the
    # transcript is created (editor.importing.preference).
    preference: dict | None = None

    @property
    def size(self) -> int:
        """The length of what was read (the text, or the line not read yet)."""
        return len(self.text) if self.line is None else len(self.line)

    def read(self) -> Candidate:
        """The candidate with its line read by the one reader of a JSONL record (in the
        import's ``spec`` unless the line names its own), or itself when it has no line."""
        if self.line is None:
            return self
        record = jsonl.read_record(self.number, self.line, self.spec, located=False)
        return from_record(record, self.location)


def unreadable(location: str, code: str, message: str) -> Candidate:
    return Candidate(location, error=message, error_code=code)


def too_large(location: str) -> Candidate:
    return unreadable(
        location,
        "too-large",
        f"larger than {limits.amount(limits.MAX_TRANSCRIPT_BYTES)}; not one transcript",
    )


def from_record(record: jsonl.Record, location: str) -> Candidate:
    """The candidate a record of the JSONL reader is: its transcript, or why it has none
    (the reader's reason, or a review state the workflow does not have)."""
    if record.problem is not None:
        return unreadable(location, record.reason, record.problem.message)
    if record.status and record.status not in Status.values:  # the workflow's states
        return unreadable(
            location,
            jsonl.INVALID_ENVELOPE,
            f'"status" must be one of {", ".join(Status.values)} (got {record.status!r})',
        )
    return Candidate(
        location,
        text=record.text,
        spec=record.spec,
        external_id=record.external_id,
        title=record.title,
        metadata=record.metadata,
        status=record.status,
        empty=record.empty,
    )


def file_candidates(
    data: bytes, location: str, report: ImportReport, *, external_id: str, spec: str | None
) -> list[Candidate]:
    """One file holding one transcript (text, a JSON document or an envelope), or a JSON
    array of transcripts: ShareGPT and other chat datasets ship as one array.

    A file is named by its ``external_id`` (its path or name) unless what it holds has an id.
    """
    location = location or "<stdin>"
    report.bytes_read += len(data)
    fallback_title = PurePosixPath(location).stem if external_id else ""
    if len(data) > limits.MAX_TRANSCRIPT_BYTES:
        return [too_large(location)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return [unreadable(location, "not-utf8", f"not UTF-8 text (byte {error.start})")]
    text = text.removeprefix("\ufeff")  # a byte order mark is an encoding artefact, not content
    if not text.strip():
        return [unreadable(location, "empty-file", "the file is empty")]
    if text.lstrip().startswith("["):
        items = dataset_items(text)
        if items is not None:
            return [
                from_record(
                    jsonl.read_value(json.dumps(item, ensure_ascii=False), item, spec),
                    f"{location}[{i}]",
                )
                for i, item in enumerate(items)
            ]
    candidate = Candidate(location, text=text, spec=spec)
    if text.lstrip().startswith("{"):
        try:
            value = formats.load_json(text)
        except ValueError:
            value = None  # not JSON after all: a text spec, or a JSON spec with errors
        if isinstance(value, dict):
            candidate = from_record(jsonl.read_value(text, value, spec), location)
    candidate.external_id = candidate.external_id or external_id
    candidate.fallback_title = fallback_title
    return [candidate]


def dataset_items(text: str) -> list[dict] | None:
    """The transcripts of a JSON array whose every item is one (it has a transcript key and
    is not itself a message); None for anything else, e.g. a thread of messages."""
    try:
        value = formats.load_json(text)
    except ValueError:
        return None
    if not isinstance(value, list) or not value:
        return None
    for item in value:
        if not isinstance(item, dict) or not any(key in item for key in jsonl.TRANSCRIPT_KEYS):
            return None
        if any(key in item for key in MESSAGE_KEYS):
            return None
    return value
