"""Modular Model Spec 0.0.0: the JSON thread (``mms``) and its token form (``mms-tokens``).

    thread   = "[" message *("," message) "]"  /  {"messages" | "thread": thread}
    message  = {"role", "content", ["format"], ["end_turn"], ["name"]}
    tokens   = *(token-message)
    token-message = "<|role|>" ROLE ["<|name|>" NAME] ["<|format|>" FORMAT] "<|content|>" BODY ["<|end_turn|>"]

A token message without ``<|end_turn|>`` ends at the next ``<|role|>`` (the spec's halt).
Mapping to the canonical model (docs/formats.md): ``format`` is kept exactly in
``attrs["format"]`` and also read as ``tool:fmt`` → recipient ``tool``, content_type ``fmt``
(plain ``fmt`` → content_type); ``end_turn: true`` → end ``return``; an assistant message in
a tool format without ``end_turn`` → ``call``; otherwise ``end``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostics
from ..model import CALL, END, RETURN, Message, Transcript, stamp_span
from ..specinfo import CUT_OFF, TERMINATOR_LABELS, SpecInfo, Vocabulary
from ..specs import Codec
from ..words import Badge, PartContext, optional_badges
from . import json_support as js
from .scanner import UNKNOWN, scan, token

if TYPE_CHECKING:
    from ..render import RenderedItem

SPEC = "mms"
TOKENS_SPEC = "mms-tokens"
THREAD_KEYS = ("messages", "thread")
SINGLE = "single"  # layout key: the document was one message object, not a thread
KNOWN_KEYS = frozenset({"role", "content", "format", "end_turn", "name"})

VOCABULARY = frozenset({"role", "name", "format", "content", "end_turn"})
ROLE, NAME, FORMAT, CONTENT, END_TURN = (
    token(n) for n in ("role", "name", "format", "content", "end_turn")
)
HEADER_FIELDS = ("name", "format")


# --- the mapping shared by both forms ------------------------------------------------------


def split_format(fmt: str | None) -> tuple[str | None, str | None]:
    """``tool:fmt`` → (recipient, content_type); ``fmt`` → (None, fmt)."""
    if not fmt:
        return None, None
    tool, colon, kind = fmt.partition(":")
    if colon:
        return tool, kind or None
    return None, fmt


def format_of(message: Message) -> str | None:
    """The ``format`` to write: the one parsed, unless recipient/content_type were edited."""
    stored = message.attrs.get("format")
    if stored is not None and split_format(stored) == (message.recipient, message.content_type):
        return stored
    if message.recipient:
        return f"{message.recipient}:{message.content_type or ''}"
    return message.content_type


def make_message(
    role: str, content: str, fmt: str | None, end_turn: bool, name: str | None
) -> Message:
    recipient, content_type = split_format(fmt)
    if end_turn:
        end = RETURN
    elif role == "assistant" and recipient:
        end = CALL
    else:
        end = END
    attrs: dict[str, Any] = {} if fmt is None else {"format": fmt}
    return Message(
        role=role,
        content=content,
        recipient=recipient,
        content_type=content_type,
        name=name,
        end=end,
        attrs=attrs,
    )


# --- JSON thread ----------------------------------------------------------------------------


def parse_json(text: str, sink: Diagnostics) -> Transcript:
    transcript = Transcript(spec=SPEC)
    nodes = js.load(text, sink)
    if nodes is None:
        return transcript
    top = nodes[0]
    if isinstance(top.value, dict) and "role" in top.value:
        # The spec's "Message Format Example" is a lone message: a thread of one.
        array, others, key = js.Node([top.value], top.start, top.end, items=[top]), {}, SINGLE
    else:
        array, others, key = js.message_list(top, THREAD_KEYS, sink, "an MMS thread")
    transcript.attrs = others
    if array is not None:
        for index, item in enumerate(array.items or ()):
            message = parse_json_message(item, index, sink)
            if message is not None:
                transcript.messages.append(stamp_span(message, SPEC, text, item.start, item.end))
    js.remember(transcript, text, array=None if key == SINGLE else array, sink=sink, key=key)
    return transcript


def parse_json_message(node: js.Node, index: int, sink: Diagnostics) -> Message | None:
    """message = {"role": string, "content": string, ["format": string], ["end_turn": bool], ["name": string|null]}"""
    data = node.value
    if not isinstance(data, dict):
        js.shape_error(sink, node.start, "An MMS message must be an object", index)
        return None
    role, content = data.get("role"), data.get("content")
    if not isinstance(role, str):
        js.shape_error(sink, node.at("role"), 'An MMS message needs a string "role"', index)
        return None
    if not isinstance(content, str):
        js.shape_error(sink, node.at("content"), 'An MMS message needs a string "content"', index)
        content = "" if content is None else str(content)
    fmt, end_turn, name = data.get("format"), data.get("end_turn"), data.get("name")
    if fmt is not None and not isinstance(fmt, str):
        js.shape_error(sink, node.at("format"), '"format" must be a string', index)
        fmt = None
    if end_turn is not None and not isinstance(end_turn, bool):
        js.shape_error(sink, node.at("end_turn"), '"end_turn" must be true or false', index)
        end_turn = None
    extra = {k: v for k, v in data.items() if k not in KNOWN_KEYS}
    if name is not None and not isinstance(name, str):
        js.shape_error(sink, node.at("name"), '"name" must be a string or null', index)
        name = None
    elif name is None and "name" in data:
        extra["name"] = None  # an explicit null is kept so the thread round-trips by value
    message = make_message(role, content, fmt, bool(end_turn), name)
    if end_turn is False:
        message.attrs["end_turn"] = False
    if extra:
        message.attrs["json"] = extra
    return message


def message_to_json(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role}
    if message.name is not None:
        out["name"] = message.name
    fmt = format_of(message)
    if fmt is not None:
        out["format"] = fmt
    out["content"] = message.content
    if message.end == RETURN:
        out["end_turn"] = True
    elif message.attrs.get("end_turn") is False:
        out["end_turn"] = False
    for key, value in (message.attrs.get("json") or {}).items():
        out.setdefault(key, value)
    return out


def serialize_json(transcript: Transcript) -> str:
    source = js.unchanged_source(transcript, SPEC)
    if source is not None:
        return source
    thread = [message_to_json(m) for m in transcript.messages]
    spliced = js.spliced(
        transcript, SPEC, [(t, [m]) for t, m in zip(thread, transcript.messages, strict=True)]
    )
    if spliced is not None:
        return spliced
    if transcript.layout.get("key") == SINGLE and len(thread) == 1:
        return js.dumps(thread[0], transcript)
    return js.dumps(js.wrap(thread, transcript, "messages"), transcript)


# --- token form ----------------------------------------------------------------------------


def parse_tokens(text: str, sink: Diagnostics) -> Transcript:
    """tokens = [stray-text] *token-message"""
    transcript = Transcript(spec=TOKENS_SPEC)
    tokens = [t for t in scan(text, VOCABULARY) if t.kind != UNKNOWN]
    starts = [i for i, t in enumerate(tokens) if t.kind == "role"]
    first = tokens[starts[0]].start if starts else len(text)
    prefix = text[:first]
    if prefix.strip():
        sink.add(
            "W-PARSE-STRAY-TEXT", 0, "Text before the first <|role|> is not part of any message"
        )
    transcript.layout["prefix"] = prefix
    for n, i in enumerate(starts):
        j = starts[n + 1] if n + 1 < len(starts) else len(tokens)
        seg_end = tokens[j].start if j < len(tokens) else len(text)
        transcript.messages.append(parse_token_message(text, tokens[i:j], seg_end, n, sink))
    if not starts:
        sink.add("E-PARSE-EMPTY", 0, "No <|role|> message found")
    return transcript


def parse_token_message(
    text: str, tokens: list, seg_end: int, index: int, sink: Diagnostics
) -> Message:
    """token-message = "<|role|>" ROLE *(("<|name|>" / "<|format|>") VALUE) "<|content|>" BODY ["<|end_turn|>"] gap"""
    start = tokens[0].start
    fields: dict[str, str] = {}
    body_start = None
    pos = 1
    kind = "role"
    value_start = tokens[0].end
    while pos <= len(tokens):
        value_end = tokens[pos].start if pos < len(tokens) else seg_end
        if kind in fields:
            sink.add(
                "W-PARSE-DUPLICATE-ATTRIBUTE",
                tokens[pos - 1].start,
                f"<|{kind}|> given twice; the first wins",
                message_index=index,
            )
        else:
            fields[kind] = text[value_start:value_end].strip()
        if pos == len(tokens):
            break
        tok = tokens[pos]
        if tok.kind == "content":
            body_start = tok.end
            pos += 1
            break
        if tok.kind not in HEADER_FIELDS:
            break
        kind, value_start = tok.kind, tok.end
        pos += 1
    end_turn = next((t for t in tokens[pos:] if t.kind == "end_turn"), None)
    if body_start is None:
        where = tokens[pos].start if pos < len(tokens) else seg_end
        sink.add("E-PARSE-BODY-MISSING", where, "Message has no <|content|>", message_index=index)
        body_start = where
        end_turn = end_turn if end_turn is not None and end_turn.start >= body_start else None
    body_end = end_turn.start if end_turn is not None else seg_end
    message = make_message(
        fields.get("role", ""),
        text[body_start:body_end],
        fields.get("format"),
        end_turn is not None,
        fields.get("name"),
    )
    if not message.role:
        sink.add("E-PARSE-ROLE-MISSING", start, message_index=index)
    raw_end = end_turn.end if end_turn is not None else seg_end
    message.gap = text[raw_end:seg_end]
    if message.gap.strip():
        sink.add(
            "W-PARSE-STRAY-TEXT",
            raw_end,
            "Text after <|end_turn|> is not part of any message",
            message_index=index,
        )
    if (
        seg_end == len(text)
        and end_turn is None
        and message.role == "assistant"
        and message.end == END
    ):
        message.end = None
        sink.add(
            "E-STREAM-TRUNCATED",
            seg_end,
            "The assistant message ends without <|end_turn|>",
            message_index=index,
        )
    return stamp_span(message, TOKENS_SPEC, text, start, raw_end)


def message_to_tokens(message: Message) -> str:
    parts = [ROLE, message.role]
    if message.name is not None:
        parts += [NAME, message.name]
    fmt = format_of(message)
    if fmt is not None:
        parts += [FORMAT, fmt]
    parts += [CONTENT, message.content]
    if message.end == RETURN:
        parts.append(END_TURN)
    return "".join(parts)


def serialize_tokens(transcript: Transcript) -> str:
    out = [transcript.layout.get("prefix", "")]
    for message in transcript.messages:
        if message.is_unchanged_from(TOKENS_SPEC):
            out.append(message.source.raw)
        else:
            out.append(message_to_tokens(message))
        # Only text after <|end_turn|> is a gap; otherwise it would run into the body.
        if message.end == RETURN:
            out.append(message.gap)
    return "".join(out)


# --- what the app needs to know of MMS ------------------------------------------------------


def part_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """The name and the ``format`` (how the body is written: markdown, json, ``tool:json``
    for a call), a label rather than hidden content, so end users see it on the messages
    they see; and ``end_turn`` where the file writes it."""
    badges = optional_badges(("name", item.name), ("format", format_of(message)))
    if not context.end_user and item.end == RETURN:
        badges.append(Badge("end_turn"))
    return badges


JSON_INFO = SpecInfo(
    family="mms",
    text=False,
    fields=("role", "name", "content_type", "end"),
    vocabulary=Vocabulary(roles=("platform", "developer", "user", "assistant", "context")),
    part_badges=part_badges,
    field_labels={"content_type": "format", "end": "end_turn"},
    end_labels={
        END: "end",
        CALL: "tool call",
        RETURN: END_TURN,
        CUT_OFF: TERMINATOR_LABELS[CUT_OFF],
    },
)
TOKENS_INFO = replace(JSON_INFO, text=True, field_labels={"content_type": FORMAT, "end": END_TURN})

CODECS = (
    Codec(SPEC, parse_json, serialize_json, info=JSON_INFO),
    Codec(TOKENS_SPEC, parse_tokens, serialize_tokens, message_start=ROLE, info=TOKENS_INFO),
)
