"""Validation of OpenChatML v0.1 and Modular Model Spec transcripts.

| spec | code | rule |
|---|---|---|
| v0.1 | E-V01-ROLE | role is system, tool, user or assistant (FIM / file segments excepted) — §3, §10 |
| v0.1 | E-V01-NAME | ``name=`` has no whitespace — §3 |
| v0.1 | E-V01-THOUGHT-UNBALANCED | a ``<|start_K|>`` without ``<|end_K|>`` or the reverse — §4 |
| v0.1 | E-CALL-SCHEMA | a ``<|function_call|>`` that is not the spec's FunctionCall object, or whose arguments fail the declared schema — §8.2 |
| v0.1 | E-CALL-NAME-MISMATCH / E-CALL-REPLY-UNKNOWN / W-CALL-UNANSWERED | outputs answer calls in order (§8.4) |
| mms | E-MMS-FORMAT-MISSING | an assistant message without ``format`` |
| mms | W-MMS-TOOL-NO-CONTEXT | a ``tool:format`` message followed by something other than a context message |
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from ..codecs import v01body
from ..codecs.openchatml01 import JSON_CHECKS
from ..tools.schemas import collect, qualified
from .calls import check_arguments
from .context import Context, closes_turn, insert_fix

V01_ROLES = frozenset({"system", "tool", "user", "assistant"})
V01_SEGMENT_ROLES = frozenset({"fim_prefix", "fim_middle", "fim_suffix", "file"})
# §8.2: "The JSON object should follow the Pydantic model schema".
FUNCTION_CALL_SCHEMA = {
    "title": "FunctionCall",
    "type": "object",
    "properties": {
        "arguments": {"title": "Arguments", "type": "object"},
        "name": {"title": "Name", "type": "string"},
    },
    "required": ["arguments", "name"],
}
_FUNCTION_CALL_VALIDATOR = Draft202012Validator(FUNCTION_CALL_SCHEMA)
MMS_CONTEXT_ROLE = "context"
MMS_DEFAULT_FORMAT = "markdown"  # the default capability (MMS "Default Capabilities")


def check_v01(ctx: Context) -> None:
    tools = collect(ctx.transcript)
    checked: dict[str, Any] = {}
    open_calls: list[tuple[int, str | None]] = []
    for i, m in enumerate(ctx.messages):
        if m.role not in V01_ROLES and m.role not in V01_SEGMENT_ROLES:
            ctx.add("E-V01-ROLE", i, f"Role {m.role!r} is not one of system, tool, user, assistant")
        if m.name is not None and (not m.name or any(c.isspace() for c in m.name)):
            ctx.add("E-V01-NAME", i, f"name={m.name!r} must be non-empty and contain no whitespace")
        base = ctx.body_offset(i)
        calls_before = len(open_calls)
        for part in v01body.parts(m.content):
            if part.kind == v01body.UNBALANCED:
                ctx.add(
                    "E-V01-THOUGHT-UNBALANCED",
                    i,
                    f"<|{part.detail}|> has no matching {'end' if part.detail.startswith('start_') else 'start'} marker",
                    offset=base + part.start,
                )
            elif not _acts(m.role, part.kind):
                continue  # e.g. the call template a system prompt shows: prose, not a call
            elif part.kind == "function_call":
                name = _check_function_call(ctx, i, part, base, tools, checked)
                open_calls.append((i, name))
            elif part.kind == "function_output":
                _check_function_output(ctx, i, part, base, open_calls)
        # A message that itself calls keeps its turn open for the outputs that follow.
        if closes_turn(m) and len(open_calls) <= calls_before:
            for c, name in open_calls:
                ctx.add(
                    "W-CALL-UNANSWERED",
                    c,
                    f"Call to {name or 'a function'} is never answered before message {i}",
                )
            open_calls.clear()


def _acts(role: str, kind: str) -> bool:
    """Only an assistant's ``<|function_call|>`` calls and only a tool's
    ``<|function_output|>`` answers (the roles the parser checks the JSON of)."""
    return JSON_CHECKS.get(kind, role) == role


def _check_function_call(
    ctx: Context, i: int, part: v01body.Part, base: int, tools, checked
) -> str | None:
    value = part.value
    if value is None:
        return None  # not JSON at all: the parser reports E-PARSE-FUNCTION-JSON
    errors = sorted(_FUNCTION_CALL_VALIDATOR.iter_errors(value), key=lambda e: e.json_path)
    for error in errors:
        ctx.add(
            "E-CALL-SCHEMA",
            i,
            f"function_call {error.json_path}: {error.message}",
            offset=base + part.start,
        )
    if errors:
        return (
            value.get("name")
            if isinstance(value, dict) and isinstance(value.get("name"), str)
            else None
        )
    tool = tools.get(qualified(value["name"]))
    if tool is not None:
        check_arguments(ctx, i, tool, value["arguments"], checked)
    return value["name"]


def _check_function_output(ctx: Context, i: int, part: v01body.Part, base: int, open_calls) -> None:
    if not open_calls:
        ctx.add(
            "E-CALL-REPLY-UNKNOWN",
            i,
            "<|function_output|> answers no earlier <|function_call|>",
            offset=base + part.start,
        )
        return
    call_index, call_name = open_calls.pop(0)
    value = part.value
    name = value.get("name") if isinstance(value, dict) else None
    if call_name is not None and name is not None and name != call_name:
        ctx.add(
            "E-CALL-NAME-MISMATCH",
            i,
            f"function_output names {name!r} but the call it answers (message {call_index}) is {call_name!r}",
            offset=base + part.start,
        )


def check_mms(ctx: Context) -> None:
    messages = ctx.messages
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        fmt = m.attrs.get("format")
        if not fmt:
            fix = None
            if ctx.spec == "mms-tokens":
                at = ctx.find_in_message(i, "<|content|>")
                fix = insert_fix(
                    f"Use the default format {MMS_DEFAULT_FORMAT}",
                    at,
                    f"<|format|>{MMS_DEFAULT_FORMAT}",
                )
            ctx.add("E-MMS-FORMAT-MISSING", i, "Assistant message has no format", fix=fix)
        elif ":" in fmt and i + 1 < len(messages) and messages[i + 1].role != MMS_CONTEXT_ROLE:
            ctx.add(
                "W-MMS-TOOL-NO-CONTEXT",
                i,
                f"Tool message ({fmt}) is followed by a {messages[i + 1].role} message, not a context reply",
            )
