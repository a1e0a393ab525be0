"""ChatML's JSON wire form (OpenAI ChatML; docs/formats.md): a flat list of tokens and text.

    document = "[" *item "]"
    item     = {"token": "<|start|>" / "<|message|>" / "<|end_message|>"} / string
    message  = <|start|> ROLE <|message|> *TEXT <|end_message|>
    request  = <|start|> ROLE [<|message|> *TEXT]      ; a completion request: the open last message

The open last message of a completion request or autocomplete prompt gets ``end=None``
without a diagnostic: the grammar allows it. The spec's own first example writes
``<|end_message|>`` right after a role where ``<|message|>`` belongs; that is reported with a
quick fix and read as ``<|message|>``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..diagnostics import Diagnostics, Edit, Fix
from ..model import END, Message, Transcript, stamp
from ..specs import Codec
from . import json_support as js
from .chatml import INFO as CHATML_INFO

SPEC = "chatml-json"
START, MESSAGE, END_MESSAGE = "<|start|>", "<|message|>", "<|end_message|>"
KNOWN = frozenset({START, MESSAGE, END_MESSAGE})
OUTSIDE, ROLE, HEADER, BODY = "outside", "role", "header", "body"
HEADER_ONLY = "header_only"  # attrs flag: `<|start|>ROLE` with no <|message|> yet
INDENT = " "  # the spec's layout: one line per header, body and footer


class _Builder:
    def __init__(self, text: str, sink: Diagnostics, transcript: Transcript):
        self.text, self.sink, self.transcript = text, sink, transcript
        self.phase = OUTSIDE
        self.current: Message | None = None
        self.start = 0
        self.last_end = 0

    @property
    def index(self) -> int:
        return len(self.transcript.messages)

    def finish(self, end: int) -> None:
        message = self.current
        raw = self.text[self.start : end]
        self.transcript.messages.append(stamp(message, SPEC, self.start, raw))
        self.current, self.phase = None, OUTSIDE

    def token(self, name: str, node: js.Node) -> None:
        sink, index = self.sink, self.index
        if name == START:
            if self.current is not None:
                sink.add(
                    "E-PARSE-UNEXPECTED-TOKEN",
                    node.start,
                    "<|start|> before the open message's <|end_message|>",
                    message_index=index,
                )
                self.finish(self.last_end)
            self.current, self.phase, self.start = Message(role="", end=None), ROLE, node.start
        elif name == MESSAGE and self.phase in (ROLE, HEADER):
            if self.phase == ROLE:
                sink.add("E-PARSE-ROLE-MISSING", node.start, message_index=index)
            self.phase = BODY
        elif name == END_MESSAGE and self.phase == BODY:
            self.current.end = END
            self.finish(node.end)
        elif name == END_MESSAGE and self.phase == HEADER:
            fix = Fix(
                "Replace with <|message|>",
                (Edit(node.start, node.end, json.dumps({"token": MESSAGE})),),
            )
            sink.add(
                "E-PARSE-UNEXPECTED-TOKEN",
                node.start,
                "<|end_message|> right after the role; <|message|> expected",
                message_index=index,
                fix=fix,
            )
            self.phase = BODY
        else:
            sink.add(
                "E-PARSE-UNEXPECTED-TOKEN",
                node.start,
                f"{name} where the grammar does not allow it",
                message_index=index,
            )
        self.last_end = node.end

    def string(self, value: str, node: js.Node) -> None:
        if self.phase == ROLE:
            self.current.role, self.phase = value, HEADER
        elif self.phase == BODY:
            self.current.content += value
        elif self.phase == HEADER:
            self.sink.add(
                "E-PARSE-UNEXPECTED-TOKEN",
                node.start,
                "Text after the role; <|message|> expected",
                message_index=self.index,
            )
        else:
            self.sink.add(
                "W-PARSE-STRAY-TEXT",
                node.start,
                "Text outside any message",
                message_index=self.index,
            )
        self.last_end = node.end

    def close(self) -> None:
        if self.current is None:
            return
        if self.phase == ROLE:
            self.sink.add("E-PARSE-ROLE-MISSING", self.start, message_index=self.index)
        elif self.phase == HEADER:
            self.current.attrs[HEADER_ONLY] = True
        self.finish(self.last_end)


def parse(text: str, sink: Diagnostics) -> Transcript:
    """document = "[" *item "]"   (items: token objects and text strings)"""
    transcript = Transcript(spec=SPEC)
    nodes = js.load(text, sink)
    if nodes is None:
        return transcript
    array = nodes[0]
    if not isinstance(array.value, list):
        js.shape_error(sink, array.start, "Expected a JSON array of tokens and strings")
        return transcript
    builder = _Builder(text, sink, transcript)
    for node in array.items:
        name = _token_name(node.value)
        if isinstance(node.value, str):
            builder.string(node.value, node)
        elif name in KNOWN:
            builder.token(name, node)
        elif name is not None:
            sink.add(
                "W-PARSE-UNKNOWN-TOKEN",
                node.start,
                f"{name} is not a ChatML token",
                message_index=builder.index,
            )
        else:
            js.shape_error(
                sink, node.start, 'Expected a string or {"token": "<|…|>"}', builder.index
            )
    builder.close()
    if not transcript.messages:
        sink.add("E-PARSE-EMPTY", array.start, "No <|start|> message found")
    js.remember(transcript, text)
    return transcript


def _token_name(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("token"), str):
        return value["token"]
    return None


def message_items(message: Message) -> list[list[Any]]:
    """The message as lines of items: header, body, footer."""
    header: list[Any] = [{"token": START}, message.role]
    if message.attrs.get(HEADER_ONLY):
        return [header]
    header.append({"token": MESSAGE})
    lines = [header]
    if message.content:
        lines.append([message.content])
    if message.end is not None:
        lines.append([{"token": END_MESSAGE}])
    return lines


def serialize(transcript: Transcript) -> str:
    source = js.unchanged_source(transcript, SPEC)
    if source is not None:
        return source
    lines = [line for m in transcript.messages for line in message_items(m)]
    if not lines:
        return "[]"
    body = ",\n".join(
        INDENT + ", ".join(json.dumps(item, ensure_ascii=False) for item in line) for line in lines
    )
    return f"[\n{body}\n]"


INFO = replace(CHATML_INFO, text=False)  # ChatML itself, as a JSON token list

CODECS = (Codec(SPEC, parse, serialize, info=INFO),)
