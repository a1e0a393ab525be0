"""Typed results: one dataclass per shape the API answers (docs/api.md, "Routes").

Each is read from the answer's JSON by ``from_json``, which keeps the fields it knows (times
as ``datetime``) and ignores the others, so a newer server's extra fields break nothing; the
whole answer stays in ``raw``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Self

from editor import formats

FINISHED = ("succeeded", "failed")


def _value(name: str, value: Any) -> Any:
    if name.endswith("_at") and isinstance(value, str):
        return datetime.fromisoformat(value)
    return value


@dataclass(frozen=True, kw_only=True)
class Result:
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        known = {f.name for f in dataclasses.fields(cls)} - {"raw"}
        values = {name: _value(name, data.get(name)) for name in known}
        return cls(raw=data, **values)


@dataclass(frozen=True, kw_only=True)
class Dataset(Result):
    slug: str
    name: str
    description: str
    default_spec: str
    role: str | None  # yours
    transcript_count: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, kw_only=True)
class TranscriptSummary(Result):
    """A row of a transcript list: no content."""

    id: int
    title: str
    spec: str
    status: str
    version: int
    external_id: str
    message_count: int
    error_count: int
    warning_count: int
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None


@dataclass(frozen=True, kw_only=True)
class Transcript(TranscriptSummary):
    """A stored transcript with its content; ``canonical`` is it as an ``editor.formats``
    transcript."""

    dataset: str
    header: dict[str, Any]
    messages: list[dict[str, Any]]
    attrs: dict[str, Any]
    metadata: dict[str, Any]
    diagnostics: list[dict[str, Any]]
    source_text: str
    source_is_exact: bool

    @property
    def canonical(self) -> formats.Transcript:
        return formats.parse(self.source_text, spec=self.spec).transcript


@dataclass(frozen=True, kw_only=True)
class ImportTask(Result):
    id: int
    dataset: str
    source_name: str
    spec: str
    on_conflict: str
    partial: bool
    shape: str | None  # how rows are read; "" (None from an older server): by their keys
    status: str  # queued, running, succeeded, failed
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int
    progress: dict[str, Any]  # {items, counts, bytes_read, bytes_total, percent, seconds_left}
    report: dict[str, Any]  # once finished: {partial, committed, counts, items, …}
    error: str

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def counts(self) -> dict[str, int]:
        return self.report.get("counts") or self.progress.get("counts") or {}

    @property
    def failures(self) -> list[dict[str, Any]]:
        """The report's failed items: ``{location, code, message, …}``."""
        return [item for item in self.report.get("items", []) if item.get("action") == "failed"]


@dataclass(frozen=True, kw_only=True)
class BulkResult(Result):
    """A bulk action's outcome. Run in the background, ``task`` names it until the client has
    waited for it; then the fields are the finished task's result."""

    action: str
    matched: int
    changed: list[int]
    skipped: list[dict[str, Any]]
    task: dict[str, Any] | None


@dataclass(frozen=True, kw_only=True)
class BulkTask(Result):
    id: int
    dataset: str
    action: str
    status: str
    created_at: datetime
    finished_at: datetime | None
    attempts: int
    progress: dict[str, Any]
    result: dict[str, Any]
    error: str

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


@dataclass(frozen=True, kw_only=True)
class DatasetVersion(Result):
    """A named, immutable version of a dataset (docs/api.md, "Dataset versions")."""

    name: str
    description: str
    filters: dict[str, Any]
    transcript_count: int
    content_hash: str
    created_by: str | None
    created_at: datetime
    # ``[transcript id, version, status]`` each; only when read one by one (``Client.version``).
    members: list[list[Any]] | None = None


@dataclass(frozen=True, kw_only=True)
class LabelSchema(Result):
    id: int
    dataset: str
    name: str
    archived_at: datetime | None
    created_at: datetime
    current_version: dict[str, Any]  # {number, instructions, questions, created_by, created_at}


@dataclass(frozen=True, kw_only=True)
class Annotation(Result):
    id: int
    transcript: int
    label_schema: int
    schema_version: int
    question: str
    annotator: str
    target: str  # transcript, message, span
    message_index: int | None
    start: int | None
    end: int | None
    text: str
    value: Any
    state: str  # draft, submitted
    anchor_state: str
    created_at: datetime
    updated_at: datetime
    submitted_at: datetime | None


@dataclass(frozen=True, kw_only=True)
class Queue(Result):
    id: int
    dataset: str
    name: str
    instructions: str
    overlap: int
    reservation_minutes: int
    filters: dict[str, Any]
    assignees: list[str]
    schemas: list[int]
    created_at: datetime
    progress: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Assignment(Result):
    id: int
    queue: int
    position: int
    transcript: int
    annotator: str
    state: str
    claimed_at: datetime
    expires_at: datetime
    submitted_at: datetime | None
    reviewed_at: datetime | None
    reviewer: str | None
    review_comment: str


@dataclass(frozen=True, kw_only=True)
class PulledTranscript:
    """One line of a pulled dataset read into a canonical transcript: the export line's
    ``id``, ``title``, ``status`` and ``metadata``, the transcript in the spec asked for, and
    what parsing it found."""

    id: Any
    title: str
    spec: str
    status: str
    metadata: dict[str, Any]
    transcript: formats.Transcript
    diagnostics: list[formats.Diagnostic]


@dataclass(frozen=True)
class PullSummary:
    """What a pull to a file wrote."""

    path: str
    lines: int
    bytes: int
