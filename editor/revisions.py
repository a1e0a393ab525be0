"""Revision history: list, compare any two states, restore an old one.

Every change to a transcript writes a ``Revision`` (``editor.storage``) whose snapshot holds
the whole state, so any two can be compared and any one restored. Restoring is a save like
any other: it checks the version and writes a new revision; history is never rewritten.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from typing import Any

from editor import formats
from editor.formats.model import SEMANTIC_FIELDS
from editor.models import Revision, RevisionKind, RevisionQuerySet, Transcript
from editor.storage.save import save_transcript

ADDED, REMOVED, CHANGED, MOVED, UNCHANGED = "added", "removed", "changed", "moved", "unchanged"


def list_revisions(transcript: Transcript) -> RevisionQuerySet:
    """Newest first, with authors, in one query."""
    return Revision.objects.for_transcript(transcript)


@dataclass
class FieldChange:
    field: str
    old: Any
    new: Any


@dataclass
class MessageChange:
    """One message in the comparison: indexes in each state (None where it is absent)."""

    status: str  # added | removed | changed | moved | unchanged
    old_index: int | None
    new_index: int | None
    role: str
    fields: list[FieldChange] = field(default_factory=list)
    content_diff: str = ""  # unified diff of the content, when the content changed
    # An added or removed message's own fields and text (what was added, what is gone).
    message: dict | None = None


@dataclass
class TranscriptDiff:
    old_label: str
    new_label: str
    title: FieldChange | None
    spec: FieldChange | None
    header: list[FieldChange]
    attrs: list[FieldChange]
    metadata: list[FieldChange]
    messages: list[MessageChange]
    source_diff: str  # unified diff of the source texts

    @property
    def has_changes(self) -> bool:
        return bool(
            self.title
            or self.spec
            or self.header
            or self.attrs
            or self.metadata
            or any(m.status != UNCHANGED for m in self.messages)
        )

    def to_dict(self) -> dict:
        return asdict(self)


def diff_revisions(old: Revision, new: Revision) -> TranscriptDiff:
    """What changed from revision ``old`` to revision ``new`` (either order, any two)."""
    return diff_snapshots(
        old.full_snapshot,
        new.full_snapshot,
        old_label=f"revision {old.number}",
        new_label=f"revision {new.number}",
    )


def diff_snapshots(
    old: dict, new: dict, *, old_label: str = "old", new_label: str = "new"
) -> TranscriptDiff:
    """Compare two snapshots (``storage.snapshot``), e.g. a conflict's current version and
    the user's: per message added / removed / changed, with field changes and content diffs.
    """
    old_doc, new_doc = old["transcript"], new["transcript"]
    return TranscriptDiff(
        old_label=old_label,
        new_label=new_label,
        title=_change("title", old.get("title", ""), new.get("title", "")),
        spec=_change("spec", old_doc["spec"], new_doc["spec"]),
        header=_dict_changes(old_doc.get("header") or {}, new_doc.get("header") or {}),
        attrs=_dict_changes(old_doc.get("attrs") or {}, new_doc.get("attrs") or {}),
        metadata=_dict_changes(old.get("metadata") or {}, new.get("metadata") or {}),
        messages=_message_changes(
            old_doc.get("messages") or [], new_doc.get("messages") or [], old_label, new_label
        ),
        source_diff=_unified(
            old.get("source_text", ""), new.get("source_text", ""), old_label, new_label
        ),
    )


def _change(name: str, old: Any, new: Any) -> FieldChange | None:
    return None if old == new else FieldChange(name, old, new)


def _dict_changes(old: dict, new: dict) -> list[FieldChange]:
    keys = list(old) + [key for key in new if key not in old]
    return [
        FieldChange(key, old.get(key), new.get(key))
        for key in keys
        if key not in old or key not in new or old[key] != new[key]
    ]


def _message_changes(
    old: list[dict], new: list[dict], old_label: str, new_label: str
) -> list[MessageChange]:
    """Align the two message lists (equal messages anchor the alignment), then pair the
    messages of each replaced stretch in order: those are "changed", the rest added/removed."""
    old_messages = [formats.Message.from_dict(m) for m in old]
    new_messages = [formats.Message.from_dict(m) for m in new]
    matcher = difflib.SequenceMatcher(
        None,
        [m.fingerprint() for m in old_messages],
        [m.fingerprint() for m in new_messages],
        autojunk=False,
    )
    changes: list[MessageChange] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            changes.extend(
                MessageChange(UNCHANGED, a, b, old_messages[a].role)
                for a, b in zip(range(a0, a1), range(b0, b1), strict=True)
            )
            continue
        paired = min(a1 - a0, b1 - b0)
        for offset in range(paired):
            a, b = a0 + offset, b0 + offset
            changes.append(
                _changed_message(a, b, old_messages[a], new_messages[b], old_label, new_label)
            )
        changes.extend(
            MessageChange(REMOVED, a, None, old_messages[a].role, message=old_messages[a].to_dict())
            for a in range(a0 + paired, a1)
        )
        changes.extend(
            MessageChange(ADDED, None, b, new_messages[b].role, message=new_messages[b].to_dict())
            for b in range(b0 + paired, b1)
        )
    return _as_moves(changes, old_messages, new_messages)


def _as_moves(
    changes: list[MessageChange],
    old_messages: list[formats.Message],
    new_messages: list[formats.Message],
) -> list[MessageChange]:
    """A message removed in one place and added, the same, in another was moved: one
    ``moved`` change (old and new index) in its new place instead of the two."""
    removed: dict[tuple, list[MessageChange]] = {}
    for change in changes:
        if change.status == REMOVED:
            removed.setdefault(old_messages[change.old_index].fingerprint(), []).append(change)
    if not removed:
        return changes
    moved_from: set[int] = set()
    result = []
    for change in changes:
        if change.status == ADDED:
            same = removed.get(new_messages[change.new_index].fingerprint())
            if same:
                origin = same.pop(0)
                moved_from.add(origin.old_index)
                change = MessageChange(MOVED, origin.old_index, change.new_index, change.role)
        result.append(change)
    return [c for c in result if not (c.status == REMOVED and c.old_index in moved_from)]


def _changed_message(
    a: int, b: int, old: formats.Message, new: formats.Message, old_label: str, new_label: str
) -> MessageChange:
    fields = [
        FieldChange(name, getattr(old, name), getattr(new, name))
        for name in SEMANTIC_FIELDS
        if getattr(old, name) != getattr(new, name)
    ]
    content_diff = ""
    if old.content != new.content:
        content_diff = _unified(
            old.content, new.content, f"{old_label}, message {a}", f"{new_label}, message {b}"
        )
    return MessageChange(CHANGED, a, b, new.role, fields, content_diff)


def _unified(old: str, new: str, old_label: str, new_label: str) -> str:
    if old == new:
        return ""
    return "\n".join(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, lineterm=""
        )
    )


def restore_revision(
    revision: Revision, *, expected_version: int, author, note: str = ""
) -> Transcript:
    """Make ``revision``'s state the current one, as a new revision (version-checked).

    When the revision's source text says exactly what its canonical transcript says, that
    text is restored byte for byte; otherwise the canonical transcript is restored and the
    text regenerated (keeping the current bytes of unchanged messages).
    """
    snapshot = revision.full_snapshot
    canonical = formats.Transcript.from_dict(snapshot["transcript"])
    text = snapshot["source_text"]
    text_is_exact = formats.parse(text, canonical.spec).transcript == canonical
    return save_transcript(
        revision.transcript,
        expected_version=expected_version,
        author=author,
        text=text if text_is_exact else None,
        spec=canonical.spec,
        canonical=None if text_is_exact else canonical,
        title=snapshot["title"],
        metadata=snapshot["metadata"],
        note=note or f"restored revision {revision.number}",
        kind=RevisionKind.RESTORE,
    )
