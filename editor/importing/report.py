"""What an import tells its caller: one ``ImportItem`` per item read, and their counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Action(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    SKIPPED = "skipped"
    FAILED = "failed"


ACTIONS = frozenset(Action)  # their values, as a request names them ("failed")


@dataclass(slots=True)
class ImportItem:
    """What happened to one item: where it was, what it became, or why it failed."""

    location: str  # "data.jsonl:12", "batch.zip:chats/a.txt", "sample.txt"
    external_id: str = ""
    spec: str | None = None
    error_count: int = 0
    warning_count: int = 0
    action: str = ""
    message: str = ""
    transcript_id: int | None = None
    code: str = ""  # why a failed item failed, for programs: "invalid-json", "line-too-long"…

    def to_dict(self) -> dict[str, Any]:
        return {
            "location": self.location,
            "external_id": self.external_id,
            "spec": self.spec,
            "error_count": self.error_count,
            "warning_count": self.warning_count,
            "action": self.action,
            "message": self.message,
            "code": self.code,
            "transcript_id": self.transcript_id,
        }


@dataclass
class ImportReport:
    partial: bool = False
    committed: bool = False
    items: list[ImportItem] = field(default_factory=list)
    bytes_read: int = 0
    bytes_total: int | None = None  # None when reading a stream of unknown length
    _counts: Counter = field(default_factory=Counter, repr=False)

    def record(self, item: ImportItem, action: Action, message: str = "") -> None:
        if item.action:
            self._counts[item.action] -= 1
        item.action = action
        item.message = message
        self._counts[action] += 1

    @property
    def counts(self) -> dict[str, int]:
        return {action.value: self._counts[action] for action in Action}

    @property
    def failed(self) -> int:
        return self._counts[Action.FAILED]

    @property
    def failures(self) -> list[ImportItem]:
        return [item for item in self.items if item.action == Action.FAILED]

    def mark_rolled_back(self) -> None:
        """Every item that did not fail was not written either (rolled back, or never written
        once an item had failed): the report says so instead of leaving it without an action."""
        for item in self.items:
            if item.action != Action.FAILED:
                self.record(
                    item,
                    Action.SKIPPED,
                    "not imported: another item failed (all-or-nothing import)",
                )
                item.transcript_id = None

    def summary(self) -> str:
        counts = self.counts
        if not self.committed:
            return (
                f"nothing imported: {counts['failed']} of {len(self.items)} item(s) could not "
                "be read (all or nothing)."
            )
        return (
            f"imported: {counts['created']} created, {counts['updated']} updated, "
            f"{counts['skipped']} skipped, {counts['failed']} failed"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "partial": self.partial,
            "committed": self.committed,
            "counts": self.counts,
            "bytes_read": self.bytes_read,
            "bytes_total": self.bytes_total,
            "items": [item.to_dict() for item in self.items],
        }


ProgressCallback = Callable[[ImportReport], None]


def stored_items(report: dict, action: str = "") -> list[dict]:
    """The items of a report as a task stores it (``ImportReport.to_dict``), only those whose
    outcome is ``action`` when it names one (anything else: all of them)."""
    items = report.get("items", [])
    if action not in ACTIONS:
        return items
    return [item for item in items if item.get("action") == action]
