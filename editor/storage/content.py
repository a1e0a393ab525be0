"""What a transcript holds before it is stored: its canonical form, its source text and
their diagnostics (``TranscriptContent``), and the checks every stored value passes."""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from django.conf import settings

from editor import formats
from editor.db.storable import check_storable_text
from editor.errors import (
    InvalidContent,
    TranscriptTooLarge,
)
from editor.formats.diagnostics import ERROR, WARNING
from editor.formats.model import HEADER_FIELDS, SEMANTIC_FIELDS, TERMINATORS
from editor.formats.validate import validate
from editor.models import (
    SHORT_FIELD_LENGTH,
    Revision,
    Transcript,
)

TITLE_LENGTH = Transcript._meta.get_field("title").max_length


EXTERNAL_ID_LENGTH = Transcript._meta.get_field("external_id").max_length


NOTE_LENGTH = Revision._meta.get_field("note").max_length


@dataclass
class TranscriptContent:
    """What a transcript holds, computed before anything is written.

    ``canonical`` is the truth stored in the Message rows; ``source_text`` is the text in
    ``canonical.spec`` with its layout; ``source_is_exact`` says whether that text parses
    back to exactly ``canonical``.
    """

    canonical: formats.Transcript
    source_text: str
    source_is_exact: bool
    diagnostics: list[dict] = field(default_factory=list)

    @property
    def spec(self) -> str:
        return self.canonical.spec

    @property
    def error_count(self) -> int:
        return sum(1 for d in self.diagnostics if d["severity"] == ERROR)

    @property
    def warning_count(self) -> int:
        return sum(1 for d in self.diagnostics if d["severity"] == WARNING)

    @classmethod
    def from_text(cls, text: str, spec: str | None = None) -> TranscriptContent:
        """Parse ``text`` (spec detected when not given); parse errors become diagnostics."""
        if spec is None:
            spec = formats.detect(text)
            if spec is None:
                raise InvalidContent(
                    "The spec of the text could not be detected; name it explicitly.",
                    code="undetectable-spec",
                )
        _check_spec(spec)
        check_size(text)
        result = formats.parse(text, spec)
        check_message_count(len(result.transcript.messages))
        return cls(
            canonical=result.transcript,
            source_text=text,
            source_is_exact=True,
            diagnostics=_diagnostics(result, text, exact=True),
        )

    @classmethod
    def from_canonical(
        cls, canonical: formats.Transcript, *, previous_text: str = "", previous_spec: str = ""
    ) -> TranscriptContent:
        """Write ``canonical`` as text, keeping the bytes of every message it shares with
        ``previous_text`` (same spec): only edited messages get new bytes."""
        _check_spec(canonical.spec)
        check_message_count(len(canonical.messages))
        canonical = _without_layout(canonical)
        draft = canonical
        if previous_text and previous_spec == canonical.spec:
            old = formats.parse(previous_text, previous_spec).transcript
            draft = formats.Transcript(
                spec=canonical.spec,
                header=canonical.header,
                messages=_reuse_unchanged(old.messages, canonical.messages),
                attrs=canonical.attrs,
                layout=old.layout,
            )
        text = formats.serialize(draft)
        check_size(text)
        result = formats.parse(text, canonical.spec)
        if result.transcript != canonical and draft is not canonical:
            # The old layout could not carry this edit (a header rewritten, say): write the
            # document afresh rather than store a text that says something else.
            text = formats.serialize(canonical)
            result = formats.parse(text, canonical.spec)
        exact = result.transcript == canonical
        return cls(
            canonical=canonical,
            source_text=text,
            source_is_exact=exact,
            diagnostics=_diagnostics(result, text, exact=exact, canonical=canonical),
        )

    @classmethod
    def of_stored(cls, transcript: Transcript) -> TranscriptContent:
        """A stored transcript's content checked afresh (the validator may know more than when
        it was saved): its exact source text, with positions, else its messages."""
        if transcript.source_is_exact:
            return cls.from_text(transcript.source_text, transcript.spec)
        return cls.from_canonical(transcript.canonical())

    def is_unreadable(self) -> bool:
        """No message could be read and the parser says why (not a transcript at all)."""
        return not self.canonical.messages and self.error_count > 0

    def first_error(self) -> str:
        error = next((d for d in self.diagnostics if d["severity"] == ERROR), None)
        if error is None:
            return ""
        return (
            f"{error['code']} at line {error['line']}, column {error['column']}: {error['message']}"
        )

    def same_as(
        self, transcript: Transcript, stored: Sequence[formats.Message] | None = None
    ) -> bool:
        """True when storing this would not change ``transcript``'s content (``stored``: its
        messages, when the caller has read them already).

        JSON specs are compared by value (re-serialized JSON may differ in whitespace);
        text specs also by their exact source text, since layout is part of what we keep.
        """
        if transcript.spec != self.spec:
            return False
        if formats.spec_info(self.spec).text and transcript.source_text != self.source_text:
            return False
        messages = transcript.canonical().messages if stored is None else stored
        return (
            transcript.header == self.canonical.header
            and transcript.attrs == self.canonical.attrs
            and list(messages) == list(self.canonical.messages)
        )


def check_size(text: str) -> None:
    """Refuse a source text of more than ``OCM_MAX_TRANSCRIPT_BYTES`` (UTF-8), before it is
    parsed: one transcript must not hold a web worker's memory and time (docs/security.md)."""
    limit = settings.OCM_MAX_TRANSCRIPT_BYTES
    # A character is at most 4 bytes: most texts are judged without encoding them.
    if len(text) * 4 <= limit or (len(text) <= limit and len(text.encode()) <= limit):
        return
    raise TranscriptTooLarge(
        f"The transcript is larger than {limit:,} bytes, the most one transcript may hold "
        "(OCM_MAX_TRANSCRIPT_BYTES): split it into several transcripts.",
        details={"max_bytes": limit},
    )


def check_message_count(count: int) -> None:
    limit = settings.OCM_MAX_TRANSCRIPT_MESSAGES
    if count > limit:
        raise TranscriptTooLarge(
            f"The transcript has {count:,} messages, more than the {limit:,} one transcript may "
            "hold (OCM_MAX_TRANSCRIPT_MESSAGES): split it into several transcripts.",
            details={"max_messages": limit, "messages": count},
        )


def _check_spec(spec: str) -> None:
    if not formats.is_spec(spec):
        raise InvalidContent(
            f"Unknown spec id {spec!r}; expected one of: {', '.join(formats.spec_ids())}.",
            code="unknown-spec",
        )


def _diagnostics(
    result: formats.ParseResult,
    text: str,
    *,
    exact: bool,
    canonical: formats.Transcript | None = None,
) -> list[dict]:
    """Parse diagnostics of ``text`` plus the semantic validator's.

    The validator sees the parsed transcript (positions then point into ``text``) unless the
    text cannot say everything the canonical transcript does; then it checks the canonical
    one, without positions.
    """
    semantic = (
        validate(result.transcript, text=text)
        if exact
        else validate(canonical or result.transcript)
    )
    return [_with_fix_id(d.to_dict()) for d in (*result.diagnostics, *semantic)]


def _with_fix_id(diagnostic: dict) -> dict:
    """Name a diagnostic's quick fix by what it does (its code and edits), so that a client
    can ask for it by id and never gets another fix after the text changed."""
    fix = diagnostic.get("fix")
    if fix is not None:
        what = json.dumps([diagnostic["code"], fix["edits"]], ensure_ascii=False)
        fix["id"] = hashlib.sha256(what.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return diagnostic


def apply_edits(text: str, edits: Sequence[dict]) -> str:
    """``text`` with a quick fix's edits (``{start, end, replacement}``, offsets into
    ``text``) applied; edits never overlap, so applying them from the end keeps offsets."""
    for edit in sorted(edits, key=lambda e: (e["start"], e["end"]), reverse=True):
        start, end = edit["start"], edit["end"]
        if not 0 <= start <= end <= len(text):
            raise InvalidContent("A fix's edit lies outside the text.", code="invalid-fix")
        text = text[:start] + edit["replacement"] + text[end:]
    return text


def _without_layout(canonical: formats.Transcript) -> formats.Transcript:
    """A copy that carries no source bytes: callers' messages are new content."""
    return formats.Transcript.from_dict(canonical.to_dict())


def _reuse_unchanged(
    old: Sequence[formats.Message], new: Sequence[formats.Message]
) -> list[formats.Message]:
    """``new`` with each message equal to an old one replaced by that old one (which still
    carries its source bytes), matched in order so insertions and deletions shift nothing.

    An edited message takes over the layout after the old message in its place (``gap``,
    the text up to the next message); an inserted one copies the gap of the message before
    it, so the document keeps its spacing. Serializers write a message whose fields differ
    from its source's fingerprint afresh, so only those bytes change.
    """
    merged = list(new)
    matcher = difflib.SequenceMatcher(
        None, [m.fingerprint() for m in old], [m.fingerprint() for m in new], autojunk=False
    )
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            merged[b0:b1] = old[a0:a1]
            continue
        for offset in range(b1 - b0):
            if a0 + offset < a1:
                neighbour = old[a0 + offset]
            elif old:
                neighbour = old[max(a1 - 1, 0)]
            else:
                break
            # The neighbour's source tells the serializer the gap is this document's layout;
            # its bytes are not reused, since the fingerprints differ.
            merged[b0 + offset].source = neighbour.source
            merged[b0 + offset].gap = neighbour.gap
    return merged


def canonical_from_input(
    data: formats.Transcript | dict, *, spec: str | None = None
) -> formats.Transcript:
    """A canonical transcript from an object or its JSON dict, with every field checked."""
    if isinstance(data, formats.Transcript):
        data = data.to_dict()
    if not isinstance(data, dict):
        raise InvalidContent("A transcript must be a JSON object.", code="invalid-shape")
    spec = data.get("spec") or spec
    if not isinstance(spec, str):
        raise InvalidContent("The transcript names no spec.", code="unknown-spec")
    _check_spec(spec)
    header = data.get("header") or {}
    attrs = data.get("attrs") or {}
    if not isinstance(header, dict) or not isinstance(attrs, dict):
        raise InvalidContent("header and attrs must be JSON objects.", code="invalid-shape")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise InvalidContent("messages must be a list.", code="invalid-shape")
    return formats.Transcript(
        spec=spec,
        header=header,
        messages=messages_from_input(messages),
        attrs=attrs,
    )


def messages_from_input(items: Iterable[formats.Message | dict]) -> list[formats.Message]:
    """Canonical messages from objects or JSON dicts, refusing wrong types with the index.

    Objects are copied unchecked: they come from the parser or from input already checked
    here, and one read with a diagnostic (a message without a role) must not refuse the edit
    of another message, or the edit that fixes it."""
    messages = []
    for index, item in enumerate(items):
        if isinstance(item, formats.Message):
            messages.append(formats.Message.from_dict(item.to_dict()))
            continue
        data = item
        if not isinstance(data, dict):
            raise InvalidContent(f"Message {index} is not an object.", code="invalid-message")
        if not isinstance(data.get("role"), str) or not data["role"]:
            raise InvalidContent(f"Message {index} has no role.", code="invalid-message")
        if not isinstance(data.get("content", ""), str):
            raise InvalidContent(f"Message {index}: content must be text.", code="invalid-message")
        for name in HEADER_FIELDS:
            if data.get(name) is not None and not isinstance(data[name], str):
                raise InvalidContent(
                    f"Message {index}: {name} must be text or null.", code="invalid-message"
                )
        if data.get("end") not in (*TERMINATORS, None):
            raise InvalidContent(
                f"Message {index}: end must be one of {', '.join(TERMINATORS)} or null.",
                code="invalid-message",
            )
        if not isinstance(data.get("attrs") or {}, dict):
            raise InvalidContent(
                f"Message {index}: attrs must be an object.", code="invalid-message"
            )
        messages.append(formats.Message.from_dict(data))
    return messages


def check_storable(
    content: TranscriptContent | None, *, title: str, metadata: Any, external_id: str
) -> None:
    """Refuse, with a clear error, what the database would reject or cut.

    PostgreSQL stores neither NUL characters nor lone surrogates in text or JSON; SQLite
    would, but the two databases must accept the same data.
    """
    if not isinstance(metadata, dict):
        raise InvalidContent("metadata must be a JSON object.", code="invalid-metadata")
    if len(title) > TITLE_LENGTH:
        raise InvalidContent(
            f"The title is longer than {TITLE_LENGTH} characters.", code="field-too-long"
        )
    if len(external_id) > EXTERNAL_ID_LENGTH:
        raise InvalidContent(
            f"The id is longer than {EXTERNAL_ID_LENGTH} characters.", code="field-too-long"
        )
    check_storable_text(metadata, "metadata")
    _check_depth(metadata, "metadata")
    if content is not None:
        for index, message in enumerate(content.canonical.messages):
            values = _short_values(message)
            # Together no longer than one may be, none is (C calls, not one test a field).
            if len("".join(filter(None, values))) > SHORT_FIELD_LENGTH:
                _check_short_fields(index, values)
        # Before the title: a title taken from the first user message shares its characters,
        # and the error should point at the text the user has to fix.
        check_storable_text(content.source_text, "the source text")
        if not _parsed_from_plain_text(content):
            check_storable_text(_canonical_values(content.canonical), "the transcript")
    check_storable_text(title, "the title")
    check_storable_text(external_id, "the id")


_SHORT_FIELDS = ("role", *HEADER_FIELDS)
_short_values = attrgetter(*_SHORT_FIELDS)


def _check_short_fields(index: int, values: tuple) -> None:
    for name, value in zip(_SHORT_FIELDS, values, strict=True):
        if value is not None and len(value) > SHORT_FIELD_LENGTH:
            raise InvalidContent(
                f"Message {index}: {name} is longer than {SHORT_FIELD_LENGTH} characters.",
                code="field-too-long",
            )


def _parsed_from_plain_text(content: TranscriptContent) -> bool:
    """Whether every value of ``content.canonical`` is a piece of its source text (or one of
    the parser's own words): the text parses back to exactly it, and holds no backslash, so
    no escape (JSON's ``\\u0000``, ``\\ud800``) made a character the text does not have. Then a
    storable text makes storable values, and they need no walk of their own (a twentieth of
    an import's time did it)."""
    return content.source_is_exact and "\\" not in content.source_text


# A message's semantic fields, read in one C call.
_semantic_values = attrgetter(*SEMANTIC_FIELDS)


def _canonical_values(canonical: formats.Transcript) -> list:
    """What ``canonical.to_dict()`` holds, without building it (a tenth of an import did):
    the header, the document's attrs and every message's fields, as nested values."""
    return [canonical.header, canonical.attrs, *map(_semantic_values, canonical.messages)]


def check_note(note: str) -> None:
    """Refuse a revision note the database would reject: too long for its column (PostgreSQL
    refuses, SQLite would keep it) or not storable text."""
    if len(note) > NOTE_LENGTH:
        raise InvalidContent(
            f"The note is longer than {NOTE_LENGTH} characters.", code="field-too-long"
        )
    check_storable_text(note, "the note")


def _check_depth(value: Any, where: str) -> None:
    """No deeper nesting than the JSON readers accept: a value stored deeper could be written
    but never read back. (Parsed transcripts are bounded by their readers; metadata is not.)"""
    level = [value]
    for _ in range(formats.MAX_JSON_DEPTH):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return
    raise InvalidContent(
        f"{where} is nested deeper than {formats.MAX_JSON_DEPTH} levels.", code="too-deep"
    )
