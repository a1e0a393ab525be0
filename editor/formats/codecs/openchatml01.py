"""OpenChatML 0.1: ``[BOS]<|im_start|>role name=X\\n…<|im_end|>…[EOS]``, FIM and multi-file text.

    document  = ["[BOS]"] prefix *(chat / fim / file) ["[EOS]" suffix]
    chat      = "<|im_start|>" ROLE *(SP KEY "=" VALUE) LF BODY "<|im_end|>" gap
    fim       = ("<|fim_prefix|>" / "<|fim_middle|>" / "<|fim_suffix|>") TEXT
    file      = "<|file_separator|>" TEXT        ; text before the first separator is file 0

``Message.content`` is the exact body text; the structure inside it (flags, thought blocks,
function list/call/output) is derived on demand by ``message_parts`` and never stored.
FIM segments and files become messages with roles ``fim_prefix``/``fim_middle``/
``fim_suffix``/``file`` whose content is the exact segment text; inside a multi-file
sequence they carry ``attrs["file"]`` (the file's number). Decisions:
docs/formats.md.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostics, Edit, Fix
from ..model import END, Message, Transcript, stamp_span
from ..specinfo import SpecInfo, Vocabulary
from ..specs import Codec
from ..words import TRUNCATED, Badge, PartContext, optional_badges
from . import json_depth, v01body
from .scanner import UNKNOWN, Token, scan, token

if TYPE_CHECKING:
    from ..render import RenderedItem

SPEC = "openchatml-0.1"
BOS = "[BOS]"
EOS = "[EOS]"
IM_START, IM_END = token("im_start"), token("im_end")
FILE_SEPARATOR = token("file_separator")
FIM_ROLES = ("fim_prefix", "fim_middle", "fim_suffix")
FILE_ROLE = "file"
FILE_ATTR = "file"  # the number of the file a segment belongs to
NEWLINE = "newline"  # layout key: the document's line break when it is not LF
CRLF = "\r\n"
OPENERS = frozenset({"im_start", "file_separator", *FIM_ROLES})
VOCABULARY = frozenset({*OPENERS, "im_end"})
ATTRIBUTE_RE = re.compile(r"\S+")
# Roles whose function JSON is an actual call, output or list (elsewhere, e.g. a system
# prompt showing the call format with placeholders, it is prose).
JSON_CHECKS = {"function_call": "assistant", "function_output": "tool", "function_list": "system"}


def parse(text: str, sink: Diagnostics) -> Transcript:
    """document = ["[BOS]"] prefix *(chat / fim / file) ["[EOS]" suffix]"""
    transcript = Transcript(spec=SPEC)
    first_item = len(sink.items)
    # The document's line break (its first one): new and edited messages are written with it,
    # so that editing a CRLF file does not mix line endings.
    first_break = text.find("\n")
    if first_break > 0 and text[first_break - 1] == "\r":
        transcript.layout[NEWLINE] = CRLF
    scanned = scan(text, VOCABULARY)
    tokens = [t for t in scanned if t.kind != UNKNOWN]
    # `<|x|>` that neither the document grammar nor the body markup (flags, thoughts, function
    # parts) defines: text, but a model tokenizer may not read it as text (reported per body).
    unknown = [t for t in scanned if t.kind == UNKNOWN and _name(text, t) not in v01body.VOCABULARY]
    pos = 0
    if text.startswith(BOS):
        transcript.attrs["bos"] = True
        pos = len(BOS)
    has_files = any(t.kind == "file_separator" for t in tokens)
    openers = [t for t in tokens if t.kind in OPENERS]
    ends = [t for t in tokens if t.kind == "im_end"]
    first = openers[0].start if openers else len(text)
    prefix = text[pos:first]
    transcript.layout["prefix"] = ""
    if has_files and prefix:
        transcript.messages.append(_segment(text, pos, first, FILE_ROLE, 0))
    else:
        transcript.layout["prefix"] = prefix
        if prefix.strip():
            sink.add(
                "W-PARSE-STRAY-TEXT",
                pos,
                "Text before the first message is not part of any message",
            )
    file_number = 0
    n = 0
    while n < len(openers):
        tok = openers[n]
        index = len(transcript.messages)
        if tok.kind == "im_start":
            message, n = parse_chat(text, ends, openers, n, index, sink, unknown)
            transcript.messages.append(message)
            continue
        stop = openers[n + 1].start if n + 1 < len(openers) else len(text)
        if tok.kind == "file_separator":
            file_number += 1
            message = _segment(text, tok.start, stop, FILE_ROLE, file_number)
        else:
            message = _segment(text, tok.start, stop, tok.kind, file_number if has_files else None)
        transcript.messages.append(message)
        n += 1
    _split_eos(transcript)
    if not transcript.messages:
        sink.add("E-PARSE-EMPTY", 0, "No <|im_start|>, FIM or file segment found")
    # document order (a body's unknown tokens and bad JSON come before its missing <|im_end|>)
    sink.items[first_item:] = sorted(sink.items[first_item:], key=lambda d: d.offset)
    return transcript


def _name(text: str, tok: Token) -> str:
    return text[tok.start + 2 : tok.end - 2]


def _segment(text: str, start: int, stop: int, role: str, file_number: int | None) -> Message:
    """fim = FIM-TOKEN TEXT;  file = "<|file_separator|>" TEXT  (TEXT up to the next opener)"""
    has_token = text.startswith("<|", start)
    body_start = text.index("|>", start) + 2 if has_token else start
    attrs: dict[str, Any] = {} if file_number is None else {FILE_ATTR: file_number}
    message = Message(role=role, content=text[body_start:stop], end=END, attrs=attrs)
    return stamp_span(message, SPEC, text, start, stop)


def parse_chat(
    text: str,
    ends: list[Token],
    openers: list[Token],
    n: int,
    index: int,
    sink: Diagnostics,
    unknown: list[Token],
) -> tuple[Message, int]:
    """chat = "<|im_start|>" ROLE *(SP KEY "=" VALUE) LF BODY "<|im_end|>" gap"""
    start_tok = openers[n]
    nxt = openers[n + 1] if n + 1 < len(openers) else None
    limit = nxt.start if nxt is not None else len(text)
    close = _first_end(ends, start_tok.end, limit)
    body_limit = close.start if close is not None else limit
    newline = text.find("\n", start_tok.end, body_limit)
    header_end = newline if newline != -1 else body_limit
    body_start = newline + 1 if newline != -1 else body_limit
    message = Message(role="", content=text[body_start:body_limit])
    parse_header(text, start_tok.end, header_end, message, index, sink)
    at = bisect_left(unknown, body_start, key=lambda t: t.start)
    while at < len(unknown) and unknown[at].end <= body_limit:
        tok = unknown[at]
        sink.add(
            "W-PARSE-UNKNOWN-TOKEN",
            tok.start,
            f"{text[tok.start : tok.end]} is not a token of OpenChatML 0.1; it is kept as text",
            message_index=index,
        )
        at += 1
    if close is None:
        message.end = None
        fix = Fix("Close the message with <|im_end|>", (Edit(limit, limit, IM_END),))
        if nxt is not None:
            sink.add(
                "E-PARSE-UNEXPECTED-TOKEN",
                nxt.start,
                "<|im_start|> before the previous message's <|im_end|>",
                message_index=index,
                fix=fix,
            )
        else:
            sink.add(
                "E-STREAM-TRUNCATED",
                limit,
                "The message ends without <|im_end|>",
                message_index=index,
                fix=fix,
            )
        raw_end = limit
    else:
        raw_end = close.end
        message.gap = text[raw_end:limit]
        _check_gap(text, raw_end, limit, index, sink)
    check_function_json(message, body_start, index, sink)
    return stamp_span(message, SPEC, text, start_tok.start, raw_end), n + 1


def _first_end(ends: list[Token], start: int, limit: int) -> Token | None:
    """The first <|im_end|> in ``[start, limit)``."""
    at = bisect_left(ends, start, key=lambda t: t.start)
    if at < len(ends) and ends[at].start < limit:
        return ends[at]
    return None


def parse_header(
    text: str, start: int, end: int, message: Message, index: int, sink: Diagnostics
) -> None:
    """header = ROLE *(WSP KEY "=" VALUE)   ; name= and any other key=value kept"""
    words = list(ATTRIBUTE_RE.finditer(text, start, end))
    if not words:
        sink.add("E-PARSE-ROLE-MISSING", start, message_index=index)
        return
    message.role = words[0].group()
    for word in words[1:]:
        key, eq, value = word.group().partition("=")
        if not eq or not key:
            sink.add(
                "E-PARSE-ATTRIBUTE",
                word.start(),
                f"Expected key=value in the header, got {word.group()!r}",
                message_index=index,
            )
            continue
        if key == "name" and message.name is None:
            message.name = value
        elif key != "name" and key not in message.attrs and key != FILE_ATTR:
            message.attrs[key] = value
        else:
            sink.add(
                "W-PARSE-DUPLICATE-ATTRIBUTE",
                word.start(),
                f"{key}= given twice; the first wins",
                message_index=index,
            )


def _check_gap(text: str, start: int, end: int, index: int, sink: Diagnostics) -> None:
    gap = text[start:end]
    if IM_END in gap:
        sink.add(
            "E-PARSE-UNEXPECTED-TOKEN",
            start + gap.index(IM_END),
            "<|im_end|> outside a message",
            message_index=index,
        )
    elif gap.strip() and gap.strip() != EOS:
        sink.add(
            "W-PARSE-STRAY-TEXT",
            start,
            "Text between messages is not part of any message",
            message_index=index,
        )


def _split_eos(transcript: Transcript) -> None:
    """[EOS] closes the conversation: it is read only in the gap after the last chat message."""
    transcript.layout["suffix"] = ""
    if not transcript.messages:
        return
    last = transcript.messages[-1]
    at = last.gap.find(EOS)
    if at == -1 or last.role in FIM_ROLES or last.role == FILE_ROLE:
        return
    transcript.attrs["eos"] = True
    transcript.layout["suffix"] = last.gap[at + len(EOS) :]
    last.gap = last.gap[:at]


def check_function_json(message: Message, body_start: int, index: int, sink: Diagnostics) -> None:
    for part in message_parts(message):
        role = JSON_CHECKS.get(part["kind"])
        if role == message.role and "error" in part:
            sink.add(
                "E-PARSE-FUNCTION-JSON",
                body_start + part["start"],
                f"Invalid JSON after <|{part['kind']}|>",
                message_index=index,
            )


def message_parts(message: Message) -> list[dict[str, Any]]:
    """The structure of a v0.1 chat message body, derived from its exact text.

    Parts (``start``/``end`` are offsets in ``message.content``):
    ``text``; ``flags`` (consecutive ``<|reflect|>``-style flags); ``thought`` (``thought``:
    reflect/introspect/reason, ``text``); ``unbalanced`` (a thought marker without its
    pair); ``function_list`` (``json``); ``function_call`` (``name``, ``arguments``);
    ``function_output`` (``name``, ``content``). A function part whose JSON does not decode
    has ``error`` instead. FIM and file segments have no parts.
    """
    if message.role in FIM_ROLES or message.role == FILE_ROLE:
        return []
    out: list[dict[str, Any]] = []
    for part in v01body.parts(message.content):
        item: dict[str, Any] = {"kind": part.kind, "start": part.start, "end": part.end}
        if part.kind == v01body.FLAG:
            if out and out[-1]["kind"] == "flags" and out[-1]["end"] == part.start:
                out[-1]["flags"].append(part.detail)
                out[-1]["end"] = part.end
                continue
            item.update(kind="flags", flags=[part.detail])
        elif part.kind == v01body.THOUGHT:
            item.update(thought=part.detail, text=part.text)
        elif part.kind == v01body.UNBALANCED:
            item["marker"] = part.detail
        elif part.kind == v01body.TEXT:
            item["text"] = part.text
        else:
            _function_part(part, item)
        out.append(item)
    return out


def _function_part(part: v01body.Part, item: dict[str, Any]) -> None:
    value = part.value
    if part.kind == "function_list":
        try:
            value = json_depth.loads(part.text)
        except ValueError:
            value = None
    if value is None:
        item.update(text=part.text, error="not valid JSON")
    elif part.kind != "function_list" and isinstance(value, dict):
        key = "arguments" if part.kind == "function_call" else "content"
        item.update(name=value.get("name"), **{key: value.get(key)})
    else:
        item["json"] = value


def has_structure(message: Message) -> bool:
    parts = message_parts(message)
    return any(p["kind"] != v01body.TEXT for p in parts)


# --- writing -------------------------------------------------------------------------------


def message_text(message: Message, newline: str = "\n") -> str:
    if message.role in FIM_ROLES:
        return token(message.role) + message.content
    if message.role == FILE_ROLE:
        lead = "" if message.attrs.get(FILE_ATTR) == 0 else FILE_SEPARATOR
        return lead + message.content
    header = [message.role]
    if message.name is not None:
        header.append(f"name={message.name}")
    header += [f"{k}={v}" for k, v in message.attrs.items() if k != FILE_ATTR]
    end = IM_END if message.end is not None else ""
    return f"{IM_START}{' '.join(header)}{newline}{message.content}{end}"


def serialize(transcript: Transcript) -> str:
    layout = transcript.layout
    newline = layout.get(NEWLINE, "\n")
    out = [BOS if transcript.attrs.get("bos") else "", layout.get("prefix", "")]
    last = len(transcript.messages) - 1
    for i, message in enumerate(transcript.messages):
        unchanged = message.is_unchanged_from(SPEC)
        out.append(message.source.raw if unchanged else message_text(message, newline))
        if message.role in FIM_ROLES or message.role == FILE_ROLE:
            continue  # a segment runs up to the next token: it has no gap
        if message.source is not None:
            out.append(message.gap)
        elif i < last:
            out.append(newline)
    if transcript.attrs.get("eos"):
        out += [EOS, layout.get("suffix", "")]
    return "".join(out)


# --- what the app needs to know of v0.1 -----------------------------------------------------


def part_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """The name, the header's other attributes, and the structured parts of the body the
    audience sees (thought blocks are not in an end user's text), named by their tokens."""
    badges = optional_badges(("name", item.name))
    badges += [Badge(key, str(value)) for key, value in message.attrs.items() if key != FILE_ATTR]
    for part in v01body.parts(item.content):
        if part.kind == v01body.THOUGHT:
            badges.append(Badge(f"<|start_{part.detail}|>"))
        elif part.kind != v01body.TEXT:
            called = part.value.get("name") if isinstance(part.value, dict) else None
            badges.append(Badge(f"<|{part.detail or part.kind}|>", called))
    if not context.end_user and item.end is None:
        badges.append(Badge(TRUNCATED))
    return list(dict.fromkeys(badges))  # a system prompt may show the same token many times


INFO = SpecInfo(
    family="openchatml-0.1",
    text=True,
    fields=("role", "name"),
    vocabulary=Vocabulary(roles=("system", "user", "assistant", "tool", *FIM_ROLES, FILE_ROLE)),
    part_badges=part_badges,
)

CODECS = (Codec(SPEC, parse, serialize, message_start=IM_START, info=INFO),)
