"""The structured parts of an OpenChatML v0.1 message body (spec §4, §8).

    body          = *( text / thought / flag / function_list / function_call / function_output )
    thought       = "<|start_" KIND "|>" text "<|end_" KIND "|>"     ; KIND = reflect / introspect / reason
    flag          = "<|reflect|>" / "<|introspect|>" / "<|reason|>"
    function_list = "<|function_list|>" text [ "<|function_list|>" ]   ; the spec closes with the same token
    function_call = "<|function_call|>" JSON                         ; {"arguments": {…}, "name": "…"}
    function_output = "<|function_output|>" JSON                     ; {"name": "…", "content": …}

A part's ``start``/``end`` are offsets in the body. Unbalanced thought markers are kept as
``unbalanced`` parts so validation can report them; text is never lost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import json_depth
from .scanner import scan, token

THOUGHT_KINDS = ("reflect", "introspect", "reason")
FUNCTION_TOKENS = ("function_list", "function_call", "function_output")
VOCABULARY = frozenset(
    [f"start_{k}" for k in THOUGHT_KINDS]
    + [f"end_{k}" for k in THOUGHT_KINDS]
    + list(THOUGHT_KINDS)
    + list(FUNCTION_TOKENS)
)

TEXT = "text"
THOUGHT = "thought"
FLAG = "flag"
UNBALANCED = "unbalanced"  # a start marker without its end, or an end without its start


@dataclass(frozen=True)
class Part:
    kind: (
        str  # text / thought / flag / unbalanced / function_list / function_call / function_output
    )
    text: str  # the inner text (thought, JSON payload, list section) or the literal text
    start: int
    end: int
    detail: str | None = None  # the thought kind, the flag name, or the unbalanced marker
    value: Any = None  # the decoded JSON of a function_call / function_output (None if invalid)


def _json_prefix(text: str) -> tuple[Any, int]:
    """The JSON value at the start of ``text`` (after whitespace) and where it ends; (None, 0)
    when there is none."""
    stripped = len(text) - len(text.lstrip())
    if json_depth.excess_nesting(text) is not None:
        return None, 0
    try:
        value, end = json.JSONDecoder().raw_decode(text, stripped)
    except ValueError:
        return None, 0
    return value, end


def parts(body: str) -> list[Part]:
    """Split ``body`` into parts, in order, covering every character."""
    out: list[Part] = []
    tokens = [t for t in scan(body, VOCABULARY) if t.kind in VOCABULARY]
    pos = 0
    i = 0

    def text_until(end: int) -> None:
        if end > pos:
            out.append(Part(TEXT, body[pos:end], pos, end))

    while i < len(tokens):
        tok = tokens[i]
        text_until(tok.start)
        name = tok.kind
        if name.startswith("start_"):
            kind = name[len("start_") :]
            close = next((t for t in tokens[i + 1 :] if t.kind == f"end_{kind}"), None)
            if close is None:
                out.append(Part(UNBALANCED, body[tok.start : tok.end], tok.start, tok.end, name))
                pos, i = tok.end, i + 1
                continue
            out.append(Part(THOUGHT, body[tok.end : close.start], tok.start, close.end, kind))
            pos = close.end
            i = tokens.index(close) + 1
        elif name.startswith("end_"):
            out.append(Part(UNBALANCED, body[tok.start : tok.end], tok.start, tok.end, name))
            pos, i = tok.end, i + 1
        elif name in THOUGHT_KINDS:
            out.append(Part(FLAG, body[tok.start : tok.end], tok.start, tok.end, name))
            pos, i = tok.end, i + 1
        elif name == "function_list":
            close = next((t for t in tokens[i + 1 :] if t.kind == "function_list"), None)
            end = close.start if close else len(body)
            stop = close.end if close else len(body)
            out.append(Part(name, body[tok.end : end], tok.start, stop))
            pos = stop
            i = tokens.index(close) + 1 if close else len(tokens)
        else:  # function_call / function_output: a JSON value follows
            value, length = _json_prefix(body[tok.end :])
            nxt = tokens[i + 1].start if i + 1 < len(tokens) else len(body)
            stop = tok.end + length if length else nxt
            out.append(Part(name, body[tok.end : stop], tok.start, stop, value=value))
            pos, i = stop, i + 1
            # a JSON value that ran into the next token is malformed: keep the scan aligned
            while i < len(tokens) and tokens[i].start < pos:
                i += 1
    text_until(len(body))
    return out


def thought_text(kind: str, text: str) -> str:
    """A thought block as v0.1 writes it."""
    return f"{token('start_' + kind)}{text}{token('end_' + kind)}"
