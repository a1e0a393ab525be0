"""JSON plumbing shared by the JSON formats: located values, repair of broken JSON, dumping.

    document = value                      ; one JSON text
    lines    = value *(LF value)          ; JSON Lines (openchatml-json only)

``json`` does the parsing; this module only walks the first levels of a document with
``JSONDecoder.raw_decode`` so that every message (and each of its fields) keeps the offset
it was written at, which diagnostics and the editor need. Below the document, an object is
decoded whole, in C, and its members are located only when asked (``Node.member``): most
messages never are, as only a diagnostic needs a field's offset. The walk stays linear.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostics, Edit, Fix
from ..model import Message, Transcript, stamp_span
from . import json_depth

WHITESPACE = re.compile(r"[ \t\n\r]*")
WHITESPACE_CHARS = frozenset(" \t\n\r")  # single characters: "" (the end) is not one
# How deep the walk keeps offsets: document → message list → message → field.
WALK_DEPTH = 3
BOM = "\ufeff"

STRICT = json.JSONDecoder()
LENIENT = json.JSONDecoder(strict=False)  # raw control characters allowed inside strings

CURLY_QUOTES = "\u201c\u201d"
# In broken JSON: an escape pair, a quote (straight or curly), a comma, a closing bracket,
# or a raw control character (only meaningful inside strings).
REPAIR_RE = re.compile(r'\\.|["\u201c\u201d,\]}\x00-\x1f]', re.DOTALL)
CLOSERS = frozenset(",:]}")
INVALID_JSON = "E-PARSE-JSON"


@dataclass(slots=True)
class Node:
    """A JSON value and where it was written; ``items``/``members`` only for walked containers."""

    value: Any
    start: int
    end: int
    items: list[Node] | None = None
    members: dict[str, Node] | None = None
    # An object decoded whole: (text, decoder, depth) to locate its members when asked.
    unwalked: tuple[str, json.JSONDecoder, int] | None = None
    located: bool = True  # False: read by ``read_unlocated``, ``start`` and ``end`` unknown

    def member(self, key: str) -> Node | None:
        if not self.located:  # wrapped when asked: a codec asks for one member, the array
            value = self.value
            found = type(value) is dict and key in value
            return _unlocated(value[key], WALK_DEPTH - 1) if found else None
        if self.unwalked is not None:
            text, decoder, depth = self.unwalked
            self.members = _read_object(text, self.start, decoder, depth).members
            self.unwalked = None
        return None if self.members is None else self.members.get(key)

    def at(self, key: str) -> int:
        """Offset of member ``key`` (or of this value when it is missing)."""
        node = self.member(key)
        return self.start if node is None else node.start


def _skip(text: str, pos: int) -> int:
    """ws = *(SP / HTAB / LF / CR)   (most separators have none or one space: no regex then)"""
    if text[pos : pos + 1] not in WHITESPACE_CHARS:
        return pos
    if text[pos] == " " and text[pos + 1 : pos + 2] not in WHITESPACE_CHARS:
        return pos + 1
    return WHITESPACE.match(text, pos).end()


def read_value(text: str, pos: int, decoder: json.JSONDecoder, depth: int = WALK_DEPTH) -> Node:
    """value = array / object / scalar   (containers walked while ``depth`` lasts)"""
    pos = _skip(text, pos)
    opener = text[pos : pos + 1]
    if depth > 0 and opener == "[":
        return _read_array(text, pos, decoder, depth)
    if depth == WALK_DEPTH and opener == "{":
        return _read_object(text, pos, decoder, depth)
    value, end = json_depth.raw_decode(decoder, text, pos)
    if depth > 0 and opener == "{":
        return Node(value, pos, end, unwalked=(text, decoder, depth))
    return Node(value, pos, end)


def _read_array(text: str, pos: int, decoder: json.JSONDecoder, depth: int) -> Node:
    """array = "[" [value *("," value)] "]"   (its separators checked)"""
    start = pos
    items: list[Node] = []
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        return Node([], start, pos + 1, items=items)
    while True:
        node = read_value(text, pos, decoder, depth - 1)
        items.append(node)
        pos = _expect(text, _skip(text, node.end), ",]", "Expecting ',' delimiter")
        if text[pos] == "]":
            return Node([n.value for n in items], start, pos + 1, items=items)
        pos += 1


def _read_object(text: str, pos: int, decoder: json.JSONDecoder, depth: int) -> Node:
    """object = "{" [string ":" value *("," string ":" value)] "}"   (its separators checked)"""
    start = pos
    members: dict[str, Node] = {}
    pos = _skip(text, pos + 1)
    if text.startswith("}", pos):
        return Node({}, start, pos + 1, members=members)
    while True:
        pos = _expect(text, pos, '"', "Expecting property name enclosed in double quotes")
        key, pos = json.decoder.scanstring(text, pos + 1, decoder.strict)
        pos = _expect(text, _skip(text, pos), ":", "Expecting ':' delimiter")
        node = read_value(text, pos + 1, decoder, depth - 1)
        members[key] = node
        pos = _expect(text, _skip(text, node.end), ",}", "Expecting ',' delimiter")
        if text[pos] == "}":
            return Node({k: n.value for k, n in members.items()}, start, pos + 1, members=members)
        pos = _skip(text, pos + 1)


def _expect(text: str, pos: int, allowed: str, message: str) -> int:
    """``pos`` when the character there is one of ``allowed``; else the decoder's error."""
    if pos < len(text) and text[pos] in allowed:
        return pos
    raise json.JSONDecodeError(message, text, pos)


def read_document(text: str, decoder: json.JSONDecoder = STRICT) -> Node:
    """document = ws value ws

    The one pass that decodes a valid document: the walk checks the syntax between the
    values it locates, so nothing is decoded twice. Nesting is bounded first (the C decoder
    recurses)."""
    deep = json_depth.excess_nesting(text)
    if deep is not None:
        raise json.JSONDecodeError(f"nested deeper than {json_depth.MAX_DEPTH} levels", text, deep)
    node = read_value(text, 0, decoder)
    end = _skip(text, node.end)
    if end < len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return node


def read_unlocated(text: str) -> Node:
    """document = ws value ws   (decoded by ``json`` alone; every position 0)

    The tree ``read_document`` gives, as far as a codec reads values from it (the top-level
    object's members, the arrays the walk would have walked), without a single offset: a
    third of the cost of the walk. For a JSONL record that turns out clean no position is
    ever shown; one with a diagnostic is read again with ``read_document``."""
    return _unlocated(json_depth.loads(text), WALK_DEPTH)


def _unlocated(value: Any, depth: int) -> Node:
    # Positional arguments: a record builds a node per message, and keywords cost more.
    if depth > 0 and type(value) is list:
        items = [_unlocated(item, depth - 1) for item in value]
        return Node(value, 0, 0, items, None, None, False)
    return Node(value, 0, 0, None, None, None, False)  # an object's members: ``Node.member``


def stamped(message: Message, spec: str, text: str, node: Node) -> Message:
    """``message`` with the source ``node`` was read from (its position, and its exact text
    for the way back). A node read without positions gives none: the message is then like
    one built by hand, written back in canonical form."""
    return stamp_span(message, spec, text, node.start, node.end) if node.located else message


def load(text: str, sink: Diagnostics, *, lines: bool = False) -> list[Node] | None:
    """Decode ``text`` into its top-level values (one, or several for JSON Lines).

    Invalid JSON gives E-PARSE-JSON at the decoder's position; when a mechanical repair
    (curly quotes, trailing commas, raw newlines in strings) makes it valid, the
    diagnostic carries that fix and the repaired text is used, so the caller still gets
    the messages. Otherwise None.
    """
    if text.startswith(BOM):
        # RFC 8259 §8.1 lets a parser ignore a byte order mark; a space of the same length
        # keeps every offset pointing into the original text.
        text = " " + text[len(BOM) :]
    try:
        return [read_document(text)]
    except json.JSONDecodeError as walk_err:
        err = decoder_error(text) or walk_err
    if lines and err.msg == "Extra data":
        try:
            return _read_values(text, STRICT)
        except json.JSONDecodeError as line_err:
            err = line_err
    return _load_repaired(text, sink, err, lines)


def decoder_error(text: str) -> json.JSONDecodeError | None:
    """The error ``json`` itself gives for ``text`` (its message and position are the ones
    users know), or None."""
    try:
        json_depth.loads(text)
    except json.JSONDecodeError as err:
        return err
    return None


def _read_values(text: str, decoder: json.JSONDecoder) -> list[Node]:
    """lines = value *(whitespace value)"""
    nodes = []
    pos = _skip(text, 0)
    while pos < len(text):
        node = read_value(text, pos, decoder)
        nodes.append(node)
        pos = _skip(text, node.end)
    return nodes


def _load_repaired(
    text: str, sink: Diagnostics, err: json.JSONDecodeError, lines: bool
) -> list[Node] | None:
    candidate, edits, kinds = repair(text)
    nodes = None
    # A repair can move brackets out of strings (curly quotes become delimiters).
    if edits and json_depth.excess_nesting(candidate) is None:
        try:
            nodes = _read_values(candidate, LENIENT)
        except json.JSONDecodeError:
            nodes = None
        if nodes is not None and ((len(nodes) != 1 and not lines) or not nodes):
            nodes = None
    fix = Fix(f"Repair the JSON: {', '.join(kinds)}", tuple(edits)) if nodes is not None else None
    hint = f" ({fix.title[0].lower()}{fix.title[1:]})" if fix is not None else ""
    sink.add(INVALID_JSON, err.pos, f"Invalid JSON: {err.msg}{hint}", fix=fix)
    return nodes


def repair(text: str) -> tuple[str, list[Edit], list[str]]:
    """Mechanical repairs of hand-written JSON: the candidate text (same length) and the edits.

    The candidate turns curly quotes that delimit strings into ``"`` and trailing commas
    into spaces, so every offset still points at the original text; raw control
    characters inside strings are left for the lenient decoder and escaped by the edits.
    """
    chars = list(text)
    edits: list[Edit] = []
    kinds: dict[str, None] = {}
    in_string = False
    comma = -1
    for match in REPAIR_RE.finditer(text):
        pos = match.start()
        ch = match.group()
        if in_string:
            if ch == '"' or (ch in CURLY_QUOTES and _closes(text, pos + 1)):
                in_string = False
                if ch != '"':
                    chars[pos] = '"'
                    edits.append(Edit(pos, pos + 1, '"'))
                    kinds["straight quotes for curly ones"] = None
            elif len(ch) == 1 and ch < " ":
                edits.append(Edit(pos, pos + 1, json.dumps(ch)[1:-1]))
                kinds["escape control characters in strings"] = None
            continue
        if ch in CURLY_QUOTES or ch == '"':
            in_string = True
            comma = -1
            if ch != '"':
                chars[pos] = '"'
                edits.append(Edit(pos, pos + 1, '"'))
                kinds["straight quotes for curly ones"] = None
        elif ch == ",":
            comma = pos
        elif ch in "]}":
            if comma != -1 and not text[comma + 1 : pos].strip():
                chars[comma] = " "
                edits.append(Edit(comma, comma + 1, ""))
                kinds["remove trailing commas"] = None
            comma = -1
    return "".join(chars), edits, list(kinds)


def _closes(text: str, pos: int) -> bool:
    """A curly quote ends a string when the next non-blank character is a JSON delimiter."""
    pos = _skip(text, pos)
    return pos >= len(text) or text[pos] in CLOSERS


def detect_indent(text: str) -> int | str | None:
    """The indentation the JSON text was written with: None for one line, else spaces or tab."""
    newline = text.find("\n")
    if newline == -1:
        return None
    run = re.match(r"[ \t]*", text[newline + 1 :]).group()
    return "\t" if "\t" in run else len(run)


DEFAULT_INDENT = 2


def remember(
    transcript: Transcript,
    text: str,
    located: bool = True,
    array: Node | None = None,
    sink: Diagnostics | None = None,
    json_lines: list[Node] | None = None,
    **extra: Any,
) -> None:
    """Keep what a JSON serializer needs to give back ``text`` unchanged, and (given the
    message ``array``, or the values of ``json_lines``, and the ``sink`` they were read with)
    to write an edited document with only the edited items changed. A document read without
    positions keeps only how it was written: its messages have no source (``stamped``), so it
    is never given back as it was. Nor is a repaired one kept around an edit: its text is not
    JSON, its edit writes it anew."""
    transcript.layout.update(indent=detect_indent(text), **extra)
    if located:
        layout = transcript.layout
        layout["source"] = text
        layout["sources"] = [message.source for message in transcript.messages]
        layout["attrs"] = attrs_snapshot(transcript.attrs)
        if _repaired(sink):
            return
        if array is not None and array.located and array.items:
            layout["array"] = _array_layout(text, array.start + 1, array.end - 1, array.items)
        elif json_lines:
            layout["array"] = _array_layout(text, 0, len(text), json_lines, "\n")


def _repaired(sink: Diagnostics | None) -> bool:
    return sink is None or any(d.code == INVALID_JSON for d in sink.items)


def _array_layout(
    text: str, inner_start: int, inner_end: int, items: list[Node], separator: str | None = None
) -> tuple:
    """Where a message array's items are written: the offsets just inside its brackets (the
    whole text for JSON Lines), the space before the first item and after the last, what
    separates the first two (else ``separator``), and how the first is written (the
    ``json.dumps`` separators of an item on one line, else None)."""
    lead = text[inner_start : items[0].start]
    trail = text[items[-1].end : inner_end]
    if len(items) > 1:
        separator = text[items[0].end : items[1].start]
    first = text[items[0].start : items[0].end]
    one_line = (
        None if "\n" in first else (", " if ", " in first else ",", ": " if ": " in first else ":")
    )
    return inner_start, inner_end, lead, trail, separator, one_line


def same_item(a: Message, b: Message, spec: str) -> bool:
    """False when ``a`` and ``b`` were read from two items of a ``spec`` document: a writer
    that groups messages into items keeps them in two, as they were written."""
    first, second = a.source, b.source
    if first is None or second is None or first.spec != spec or second.spec != spec:
        return True
    return first.start == second.start


def item_read(message: Message, spec: str) -> Any:
    """The JSON value of the item ``message`` was read from, in a ``spec`` document; None when
    it was not read from one (or from a repaired document, whose text is not JSON)."""
    source = message.source
    if source is None or source.spec != spec:
        return None
    try:
        return json.loads(source.raw)
    except ValueError:
        return None


ITEM_SEPARATOR = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")


def spliced(
    transcript: Transcript, spec: str, items: list[tuple[Any, list[Message]]]
) -> str | None:
    """The parsed text with only the edited items of its message array written afresh, or
    None when the document cannot be kept around them (not parsed with positions, its other
    keys edited, an empty array).

    ``items`` are the array's items as the serializer would write them, each with the
    messages it holds. An item is kept as it was written when all its messages are unchanged
    and come from one item of the source that decodes to the same value (a message taken out
    of a JSON message that held several makes it differ). Kept neighbours keep what separated
    them; every other item is written as the first item was: on one line, or with the
    document's indentation, one level in."""
    layout = transcript.layout
    array = layout.get("array")
    if array is None or layout.get("attrs") != attrs_snapshot(transcript.attrs):
        return None
    source = layout["source"]
    inner_start, inner_end, lead, trail, separator, one_line = array
    if not items:
        # An array keeps its brackets; JSON Lines (whose items start at 0) would be no text.
        return source[:inner_start] + source[inner_end:] if inner_start else None
    item_indent = lead[lead.rfind("\n") + 1 :] if "\n" in lead else None
    if separator is None:
        separator = "," + lead if item_indent is not None else ", "
    indent = layout.get("indent")
    parts = [source[:inner_start], lead]
    previous: tuple[int, int] | None = None
    for number, (value, messages) in enumerate(items):
        span = _kept_span(source, spec, value, messages)
        if number:
            between = source[previous[1] : span[0]] if previous and span else ""
            parts.append(between if ITEM_SEPARATOR.fullmatch(between) else separator)
        if span is not None:
            parts.append(source[span[0] : span[1]])
        elif one_line is not None:
            parts.append(json.dumps(value, separators=one_line, ensure_ascii=False))
        else:
            written = json.dumps(value, indent=indent, ensure_ascii=False)
            parts.append(written.replace("\n", "\n" + item_indent) if item_indent else written)
        previous = span
    parts += [trail, source[inner_end:]]
    return "".join(parts)


def _kept_span(
    source: str, spec: str, value: Any, messages: list[Message]
) -> tuple[int, int] | None:
    """Where the item holding ``messages`` was written, when it can be written so again."""
    spans = set()
    for message in messages:
        if not message.is_unchanged_from(spec):
            return None
        src = message.source
        spans.add((src.start, src.start + src.end - src.begin))
    if len(spans) != 1:
        return None
    (span,) = spans
    written = source[span[0] : span[1]]
    if written != messages[0].source.raw:  # read from another text than this layout's
        return None
    return span if json.loads(written) == value else None


def attrs_snapshot(attrs: dict[str, Any]) -> str:
    """The document attrs as they are now, to tell later whether they were edited. ``repr``
    is exact for decoded JSON and three times cheaper than ``json.dumps``; attrs rebuilt in
    another key order count as edited (the document is then written in canonical form)."""
    return repr(attrs)


def unchanged_source(transcript: Transcript, spec: str) -> str | None:
    """The parsed text when neither the messages nor the document attrs were edited: the
    messages read from it, in the order read (none moved, removed or repeated), unchanged."""
    layout = transcript.layout
    source, sources = layout.get("source"), layout.get("sources")
    messages = transcript.messages
    if (
        source is None
        or len(sources) != len(messages)
        or layout.get("attrs") != attrs_snapshot(transcript.attrs)
        or not all(m.source is read for m, read in zip(messages, sources, strict=True))
        or not all(m.is_unchanged_from(spec) for m in messages)
    ):
        return None
    return source


def dumps(value: Any, transcript: Transcript) -> str:
    indent = (
        transcript.layout.get("indent", DEFAULT_INDENT) if transcript.layout else DEFAULT_INDENT
    )
    return json.dumps(value, indent=indent, ensure_ascii=False)


def shape_error(sink: Diagnostics, offset: int, message: str, index: int | None = None) -> None:
    sink.add("E-PARSE-SHAPE", offset, message, message_index=index)


def has_string_key(node: Node, key: str, what: str, index: int, sink: Diagnostics) -> bool:
    """True when ``node`` is an object whose ``key`` is a string; else E-PARSE-SHAPE at the
    offending value (the object, or its ``key``)."""
    data = node.value
    if isinstance(data, dict) and isinstance(data.get(key), str):
        return True
    offset = node.at(key) if isinstance(data, dict) else node.start
    shape_error(sink, offset, f'{what} must be an object with a string "{key}"', index)
    return False


def tool_call_function(call: Any, node: Node, index: int, sink: Diagnostics) -> dict | None:
    """The ``function`` object of an OpenAI-style tool call (``{"id", "type", "function":
    {"name", "arguments"}}``), or None after E-PARSE-SHAPE at the message's ``tool_calls``."""
    function = call.get("function") if isinstance(call, dict) else None
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return function
    shape_error(
        sink, node.at("tool_calls"), 'A tool call needs "function": {"name", "arguments"}', index
    )
    return None


def message_list(
    node: Node, keys: tuple[str, ...], sink: Diagnostics, what: str
) -> tuple[Node | None, dict[str, Any], str | None]:
    """The message array of a document: a bare array, or the first of ``keys`` in an object.

    Returns the array node, the document's other top-level keys, and the key used (None
    for a bare array).
    """
    if isinstance(node.value, list):
        return node, {}, None
    if isinstance(node.value, dict):
        for key in keys:
            found = node.member(key)
            if found is not None and isinstance(found.value, list):
                others = {k: v for k, v in node.value.items() if k != key}
                return found, others, key
    wanted = " or ".join(f'{{"{k}": [...]}}' for k in keys)
    shape_error(sink, node.start, f"Expected {what}: an array of messages or {wanted}")
    return None, {}, None


def wrap(messages: list[Any], transcript: Transcript, default_key: str) -> Any:
    """The document around a message array, as it was parsed (bare array or an object)."""
    key = transcript.layout.get("key", default_key) if transcript.layout else default_key
    if key is None and not transcript.attrs:
        return messages
    return {**transcript.attrs, key or default_key: messages}


@dataclass
class Calls:
    """The tool calls read so far, to name the replies: recipients by call id, and the calls
    no reply has answered yet, in order. A reply without ``tool_call_id`` (gpt-oss's chat
    template, Hugging Face datasets and ollama write them so) answers the first of those, as
    Harmony pairs a call with the next reply."""

    recipients: dict[str, str] = field(default_factory=dict)
    unanswered: list[tuple[str | None, str]] = field(default_factory=list)

    def called(self, call: Message) -> None:
        if call.call_id:
            self.recipients[call.call_id] = call.recipient or ""
        self.unanswered.append((call.call_id, call.recipient or ""))

    def answered(self, call_id: str | None) -> str | None:
        """The recipient of the call the reply with ``call_id`` answers."""
        for k, (pending, recipient) in enumerate(self.unanswered):
            if call_id is None or pending == call_id:
                del self.unanswered[k]
                return recipient
        return self.recipients.get(call_id) if call_id is not None else None
