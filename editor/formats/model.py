"""The canonical transcript model: a superset of every supported spec.

Semantics follow OpenChatML 2.2 at the core. Every parser produces these objects and every
serializer consumes them. Two kinds of data live on them:

* semantic fields (role, content, channel, …): compared by ``==``, exported as canonical
  JSON, edited by users;
* layout (``Message.source``, ``Message.gap``, ``Transcript.layout``): how the text was
  written, kept so that an unedited transcript serializes back byte for byte and an edited
  one changes only the edited message's bytes. Layout never takes part in ``==``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

# The abstract terminator of a message (``Message.end``).
END = "end"  # closed normally: <|end|>, <|im_end|>, <|end_message|>, a JSON message
CALL = "call"  # an outgoing tool call that stops sampling: <|call|>, MMS halt on a tool format
RETURN = "return"  # the sampling terminator of a final assistant message: <|return|>, <|end_turn|>
TERMINATORS = (END, CALL, RETURN)  # and None: the message was cut off (truncated)

# A message's fields, declared once; everything that lists them (the database row, the
# canonical JSON, the editor's form, diffs) takes them from here, in this order.
# The short text fields of a message's header: who it is to or from, how its body is typed.
HEADER_FIELDS = ("channel", "recipient", "name", "call_id", "intent", "content_type", "constrain")
# The optional scalar fields: a value or None.
SCALAR_FIELDS = (*HEADER_FIELDS, "end")
# Message's first fields, in this order: conversion and storage build messages from them by
# position (convert.hub._copy, editor.models.Message.canonical_of).
SEMANTIC_FIELDS = ("role", "content", *SCALAR_FIELDS, "attrs")


@dataclass(slots=True, eq=False)
class Source:
    """Where a message came from: its exact text and the fields it had when parsed.

    A serializer for ``spec`` reuses ``raw`` verbatim while the message still has the
    fingerprint it was parsed with, so untouched messages keep every byte.

    ``raw`` is a slice of ``text`` (for the token formats, the whole document, shared by all
    its messages) taken when asked for: copying every message's text at parse time cost a
    tenth of the parse (docs/performance.md).

    Never changed once made (``dataclasses.replace`` makes a new one). Not ``frozen=True``:
    the parser makes one per message, and a frozen dataclass's ``__init__`` (``object.__setattr__``
    per field) makes parsing measurably slower (docs/performance.md).
    """

    spec: str
    start: int  # offset of the first character of the message in the parsed text
    fingerprint: tuple
    text: str = field(repr=False, compare=False)
    begin: int = 0  # the message is text[begin:end]
    end: int = 0

    @property
    def raw(self) -> str:
        return self.text[self.begin : self.end]

    def __eq__(self, other: object) -> bool:
        # Equal when they say the same; where the text is kept (a slice of which string) is not.
        if not isinstance(other, Source):
            return NotImplemented
        return (self.spec, self.start, self.fingerprint, self.raw) == (
            other.spec,
            other.start,
            other.fingerprint,
            other.raw,
        )


@dataclass(slots=True)
class Message:
    role: str
    content: str = ""
    channel: str | None = None
    recipient: str | None = None  # `to=`: the tool a call goes to, or the role a reply goes to
    name: str | None = None
    call_id: str | None = None
    intent: str | None = None
    content_type: str | None = None
    constrain: str | None = None  # `<|constrain|>json`
    end: str | None = END
    # Everything else a format says about a message, kept rather than dropped: unknown header
    # attributes, the position `to=` was written in, MMS `format`, v0.1 structured parts, …
    attrs: dict[str, Any] = field(default_factory=dict)

    source: Source | None = field(default=None, compare=False, repr=False)
    # The text after the message, before the next one.
    gap: str = field(default="", compare=False, repr=False)

    def fingerprint(self) -> tuple:
        return fingerprint(self)

    def is_unchanged_from(self, spec: str) -> bool:
        """True when the message can be written back as the exact text it was parsed from."""
        src = self.source
        return src is not None and src.spec == spec and src.fingerprint == fingerprint(self)

    def to_dict(self) -> dict[str, Any]:
        """Canonical JSON form: null fields and empty attrs omitted."""
        out: dict[str, Any] = {}
        for name in SEMANTIC_FIELDS:
            value = getattr(self, name)
            if value is None or (name == "attrs" and not value):
                continue
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        kwargs = {k: v for k, v in data.items() if k in SEMANTIC_FIELD_SET}
        if "end" not in data:
            kwargs["end"] = None
        kwargs["attrs"] = dict(data.get("attrs") or {})
        return cls(**kwargs)


SEMANTIC_FIELD_SET = frozenset(SEMANTIC_FIELDS)
# Every semantic field but attrs, read in one C call (fingerprint() runs once per parsed message).
_scalar_fields = attrgetter(*(name for name in SEMANTIC_FIELDS if name != "attrs"))


def fingerprint(message: Message) -> tuple:
    """The semantic fields as they are now, attrs frozen in depth: a hashable value that is
    equal for two messages exactly when their semantic fields are."""
    attrs = message.attrs
    # Most messages have no attrs: an empty dict freezes to () without the recursive walk.
    frozen = () if not attrs and type(attrs) is dict else _freeze(attrs)
    return (*_scalar_fields(message), frozen)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def stamp(message: Message, spec: str, start: int, raw: str) -> Message:
    """Record that ``message`` was parsed from ``raw`` at ``start`` in a ``spec`` text."""
    message.source = Source(spec, start, fingerprint(message), raw, 0, len(raw))
    return message


def stamp_span(message: Message, spec: str, text: str, start: int, end: int) -> Message:
    """Record that ``message`` was parsed from ``text[start:end]`` of a ``spec`` text."""
    message.source = Source(spec, start, fingerprint(message), text, start, end)
    return message


@dataclass
class Transcript:
    spec: str
    header: dict[str, Any] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    # Document-level data that is not a header key: v0.1 [BOS]/[EOS], OpenAI `tools`,
    # extra top-level keys of a JSON document, …
    attrs: dict[str, Any] = field(default_factory=dict)

    # How the document was written (header text and fence, text before the first message,
    # …); read only by the serializer of the same spec.
    layout: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "spec": self.spec,
            "header": self.header,
            "messages": [m.to_dict() for m in self.messages],
        }
        if self.attrs:
            out["attrs"] = self.attrs
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Transcript:
        return cls(
            spec=data["spec"],
            header=dict(data.get("header") or {}),
            messages=[Message.from_dict(m) for m in data.get("messages") or []],
            attrs=dict(data.get("attrs") or {}),
        )


# Tools built into the models that use them (Harmony's browser and python): not functions of
# a developer's namespace, so never qualified as ``functions.x``.
BUILTIN_PREFIXES = ("browser.",)
BUILTIN_NAMES = frozenset({"browser", "python"})


def is_builtin(tool: str) -> bool:
    return tool in BUILTIN_NAMES or tool.startswith(BUILTIN_PREFIXES)
