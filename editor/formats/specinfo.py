"""What the app needs to know of a spec, declared beside its codec (``Codec.info``).

The app never names a spec id: it asks the registry (``editor.formats.spec_info``) which
message fields a spec writes and what it calls them, whether it has channels, which roles
and channels it names, how its file groups canonical messages and how it spells their
fields. A spec is added by declaring its codec with a ``SpecInfo`` (docs/formats.md, "What
the registry tells the app").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .model import CALL, END, RETURN, SEMANTIC_FIELDS, Message
from .words import PartBadges, role_as_read

# The fields an editor offers besides the body (``content``) and the catch-all ``attrs``.
EDITABLE_FIELDS = tuple(name for name in SEMANTIC_FIELDS if name not in ("content", "attrs"))
CUT_OFF = ""  # the terminator choice of a message the text stopped inside (``end`` None)
# Terminator choices in the model's own words, in the order an editor lists them.
TERMINATOR_LABELS = {END: "end", CALL: "call", RETURN: "return", CUT_OFF: "none (cut off)"}

FileGroups = Callable[[list[Message]], list[list[Message]]]


@dataclass(frozen=True)
class Vocabulary:
    """The values a spec names for a message's fields, as the model holds them (what a
    picker offers; other values may still be typed and are left to the validator)."""

    roles: tuple[str, ...]
    channels: tuple[str, ...] = ()  # empty: the spec has no channels
    recipients: tuple[str, ...] = ()  # fixed recipients (built-in tools, roles) it names


@dataclass(frozen=True)
class SpecInfo:
    """A spec as the app sees it. Only ``family``, ``text``, ``fields``, ``vocabulary`` and
    ``part_badges`` must be given; the rest defaults to a spec that writes each canonical
    message as one file message, in the model's own words."""

    # The specs sharing one model of a message (fields, channels, words) that differ in how
    # they are written: "openchatml-2" (2.0, 2.2, Harmony and their JSON projection),
    # "chatml" (text and JSON token list), "mms" (JSON thread and tokens), …
    family: str
    # Written as token text, kept byte for byte (else a JSON document, kept by value).
    text: bool
    # The message fields the spec writes besides its body, in the editor's order: the form
    # shows them first; the model's other fields wait under "More fields".
    fields: tuple[str, ...]
    vocabulary: Vocabulary
    part_badges: PartBadges  # a message's fields in the spec's words (``formats.words``)
    # A field's name in the spec's words (Harmony's recipient is ``to= (recipient)``); a
    # field not named here keeps its canonical name.
    field_labels: Mapping[str, str] = field(default_factory=dict)
    # The terminator choices (every terminator, and ``CUT_OFF``) in the spec's words.
    end_labels: Mapping[str, str] = field(default_factory=lambda: TERMINATOR_LABELS)
    # The channel a new assistant message starts on (None: the spec has no channels).
    default_channel: str | None = None
    # The role of the file message that starts with a canonical message, as the file spells
    # it (ShareGPT's ``human``, OpenAI's legacy ``function``).
    role_as_written: Callable[[Message], str] = role_as_read
    # The reader makes several canonical messages of one file message (an OpenAI assistant
    # message with reasoning and tool calls): the app groups them back for display.
    splits_messages: bool = False
    # How the writer groups canonical messages into file messages, for a transcript whose
    # messages no longer carry where the reader found them; None: each one is its own.
    file_groups: FileGroups | None = None

    def __post_init__(self) -> None:
        # Read-only copies: specs of a family share their label tables, and none may change
        # another's through its own.
        object.__setattr__(self, "field_labels", MappingProxyType(dict(self.field_labels)))
        object.__setattr__(self, "end_labels", MappingProxyType(dict(self.end_labels)))

    @property
    def has_channels(self) -> bool:
        return bool(self.vocabulary.channels)

    def label(self, field_name: str) -> str:
        """``field_name`` (a canonical message field) as the spec calls it."""
        return self.field_labels.get(field_name, field_name.replace("_", " "))

    def problems(self) -> list[str]:
        """What is missing or inconsistent: a spec is registered only when this is empty."""
        found = []
        if not self.family:
            found.append("no family")
        if "role" not in self.fields:
            found.append("fields must include role")
        unknown = [name for name in self.fields if name not in EDITABLE_FIELDS]
        if unknown or len(set(self.fields)) != len(self.fields):
            found.append(f"fields must be distinct fields of {EDITABLE_FIELDS}: {self.fields}")
        if not set(self.field_labels) <= set(SEMANTIC_FIELDS):
            found.append(f"field_labels name unknown fields: {sorted(self.field_labels)}")
        if set(self.end_labels) != set(TERMINATOR_LABELS):
            found.append(f"end_labels must label exactly {list(TERMINATOR_LABELS)}")
        labels = [*self.field_labels.values(), *self.end_labels.values()]
        if not all(isinstance(label, str) and label for label in labels):
            found.append("every label must be a non-empty string")
        if not self.vocabulary.roles:
            found.append("the vocabulary names no role")
        if self.has_channels != (self.default_channel is not None):
            found.append("a spec with channels has a default channel, and only such a spec")
        elif self.has_channels and self.default_channel not in self.vocabulary.channels:
            found.append(f"the default channel {self.default_channel!r} is not in its channels")
        if self.file_groups is not None and not self.splits_messages:
            found.append("file_groups is for a spec whose reader splits messages")
        if not callable(self.part_badges) or not callable(self.role_as_written):
            found.append("part_badges and role_as_written must be callables")
        return found
