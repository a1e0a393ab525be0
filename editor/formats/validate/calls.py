"""Validation of tool calls and their replies (OpenChatML 2.2 §6, §8, HIP-1 §3-§5).

Rules, each with its code:

| code | rule |
|---|---|
| E-CALL-ID-MISSING | 2.2 / openchatml-json: every call and every reply carries ``call_id`` |
| E-CALL-ID-DUPLICATE | two calls share a ``call_id`` |
| E-CALL-REPLY-UNKNOWN | a reply whose ``call_id`` (or, without ids, tool name) matches no open call |
| E-CALL-NAME-MISMATCH | a reply's ``name=`` (or ``functions.X`` role) differs from its call's ``to=`` |
| W-CALL-UNANSWERED | a call never answered although its turn closed (a user message or a final answer followed) |
| E-CALL-CHANNEL | HIP-1: function tools (calls and replies) only on commentary; built-ins (``browser.*``, ``python``) on analysis or commentary |
| E-RETURN-NOT-FINAL | ``<|return|>`` on anything but a final assistant message |
| E-CALL-MIXED-ENVELOPE | a turn with a ``<|call|>`` message and a JSON ``tool_calls`` field |
| E-BODY-CONSTRAINT-VIOLATION | a ``<|constrain|>json`` body that is not JSON (position of the JSON error) |
| E-CALL-SCHEMA | call arguments not an object or not matching the declared schema (one per schema error) |
| W-CALL-UNKNOWN-TOOL | a call to a ``functions.*`` tool no declaration names, when the transcript declares tools |
| W-TOOL-SCHEMA-INVALID | a declared parameters schema that is not valid JSON Schema |

Replies without ids (Harmony, 2.0, openai replies that lack a name) pair with the earliest
open call to the same tool, in order.
"""

from __future__ import annotations

import json
from typing import Any

from ..codecs import json_depth
from ..codecs.scanner import token
from ..model import CALL, RETURN, Message, is_builtin
from ..tools.schemas import ToolSchema, collect, qualified
from .arguments import UnusableSchema, parameters_schema
from .context import (
    Context,
    closes_turn,
    insert_fix,
    is_call,
    is_final,
    is_reply,
    replace_fix,
    reply_tool,
    same_tool,
)

CALL_ID_SPECS = frozenset({"openchatml-2.2", "openchatml-json"})
OCM_JSON, OCM_JSON_V20 = "openchatml-json", "2.0"  # ocm_json's variant names
SHAREGPT = "sharegpt"
RETURN_SPECS = frozenset({"openchatml-2.0", "openchatml-2.2", "harmony", "openchatml-json"})
TOOL_CALLS_FIELD = "tool_calls"
GENERATED_ID_PREFIX = "call_"


def check(ctx: Context, hip1: bool) -> None:
    _pairing(ctx)
    if hip1:
        _placement(ctx)
    if ctx.spec in RETURN_SPECS:
        _return_only_on_final(ctx)
    _mixed_envelope(ctx)
    _constraints(ctx)
    _schemas(ctx)


# --- pairing -----------------------------------------------------------------------------
def _new_id(used: set[str]) -> str:
    n = 1
    while f"{GENERATED_ID_PREFIX}{n}" in used:
        n += 1
    return f"{GENERATED_ID_PREFIX}{n}"


def _requires_call_ids(ctx: Context) -> bool:
    """2.2 requires call_id; an openchatml-json document in the 2.0 §10 variant (``tool_calls``)
    does not: 2.0 replies pair by tool name."""
    if ctx.spec == OCM_JSON and ctx.transcript.layout.get("variant") == OCM_JSON_V20:
        return False
    return ctx.spec in CALL_ID_SPECS


def _pairing(ctx: Context) -> None:
    require_ids = _requires_call_ids(ctx)
    used: set[str] | None = None  # the call ids written, once one has to be made up
    calls: dict[str, int] = {}
    open_calls: list[int] = []
    for i, m in enumerate(ctx.messages):
        if is_call(m):
            if m.call_id is None:
                if require_ids:
                    used = used or {other.call_id for other in ctx.messages if other.call_id}
                    new = _new_id(used)
                    used.add(new)
                    ctx.add(
                        "E-CALL-ID-MISSING",
                        i,
                        f"Tool call to {m.recipient or 'a tool'} has no call_id",
                        fix=insert_fix(f"Add call_id={new}", ctx.header_end(i), f" call_id={new}"),
                    )
            elif m.call_id in calls:
                ctx.add(
                    "E-CALL-ID-DUPLICATE",
                    i,
                    f"call_id {m.call_id!r} is already used by message {calls[m.call_id]}",
                )
            else:
                calls[m.call_id] = i
            open_calls.append(i)
        elif is_reply(m):
            _pair_reply(ctx, i, m, calls, open_calls, require_ids)
        if closes_turn(m):
            _report_unanswered(ctx, open_calls, i)
            open_calls.clear()


def _pair_reply(
    ctx: Context,
    i: int,
    m: Message,
    calls: dict[str, int],
    open_calls: list[int],
    require_ids: bool,
) -> None:
    tool = reply_tool(m)
    if m.call_id is not None:
        if m.call_id not in calls:
            ctx.add(
                "E-CALL-REPLY-UNKNOWN",
                i,
                f"Reply with call_id {m.call_id!r} answers no earlier call",
            )
            return
        call_index = calls[m.call_id]
    else:
        candidates = [
            c for c in open_calls if tool is None or same_tool(ctx.messages[c].recipient, tool)
        ]
        if not candidates:
            ctx.add(
                "E-CALL-REPLY-UNKNOWN", i, f"Reply from {tool or 'a tool'} answers no open call"
            )
            return
        call_index = candidates[0]
        if require_ids:
            call_id = ctx.messages[call_index].call_id
            fix = (
                insert_fix(f"Add call_id={call_id}", ctx.header_end(i), f" call_id={call_id}")
                if call_id
                else None
            )
            ctx.add(
                "E-CALL-ID-MISSING", i, f"Reply to message {call_index} has no call_id", fix=fix
            )
    if call_index in open_calls:
        open_calls.remove(call_index)
    recipient = ctx.messages[call_index].recipient
    if tool is not None and recipient is not None and not same_tool(tool, recipient):
        fix = None
        if m.role == "tool" and m.name is not None:
            old = f"name={m.name}"
            fix = replace_fix(
                f"Set name={recipient}", ctx.find_in_message(i, old), old, f"name={recipient}"
            )
        ctx.add(
            "E-CALL-NAME-MISMATCH",
            i,
            f"Reply names {tool!r} but its call (message {call_index}) went to {recipient!r}",
            fix=fix,
        )


def _report_unanswered(ctx: Context, open_calls: list[int], closing: int) -> None:
    for c in open_calls:
        call = ctx.messages[c]
        ctx.add(
            "W-CALL-UNANSWERED",
            c,
            f"Call to {call.recipient or 'a tool'} is never answered before message {closing} closes the turn",
        )


# --- placement ---------------------------------------------------------------------------
def _placement(ctx: Context) -> None:
    for i, m in enumerate(ctx.messages):
        if is_call(m):
            tool = m.recipient
        elif is_reply(m):
            tool = reply_tool(m)
        else:
            continue
        if tool is None or m.channel is None:
            continue  # a missing channel is E-PARSE-CHANNEL-MISSING's business
        builtin = is_builtin(tool)
        allowed = ("analysis", "commentary") if builtin else ("commentary",)
        if m.channel in allowed:
            continue
        old = f"{token('channel')}{m.channel}"
        new = f"{token('channel')}commentary"
        kind = "built-in tool" if builtin else "function tool"
        ctx.add(
            "E-CALL-CHANNEL",
            i,
            f"{kind} {tool} on channel {m.channel!r}; HIP-1 allows {' or '.join(allowed)}",
            fix=replace_fix("Move to commentary", ctx.find_in_message(i, old), old, new),
        )


def _return_only_on_final(ctx: Context) -> None:
    for i, m in enumerate(ctx.messages):
        if m.end != RETURN or (is_final(m) and not is_call(m)):
            continue
        replacement = token("call") if is_call(m) else token("end")
        found = ctx.raw(i)
        fix = None
        if found is not None and found[1].endswith(token("return")):
            at = found[0] + len(found[1]) - len(token("return"))
            fix = replace_fix(f"End with {replacement}", at, token("return"), replacement)
        where = f"role {m.role}" + (f", channel {m.channel}" if m.channel else "")
        ctx.add(
            "E-RETURN-NOT-FINAL",
            i,
            f"<|return|> ends a message ({where}); only a final assistant message may end so",
            fix=fix,
        )


def _json_value(ctx: Context, index: int) -> Any:
    """The JSON value message ``index`` holds, or None."""
    value = ctx.decoded_body(index)
    return None if isinstance(value, json.JSONDecodeError) else value


def _mixed_envelope(ctx: Context) -> None:
    """Within a turn (the messages between two user messages) that has a ``<|call|>``, no
    other assistant message may carry a JSON ``tool_calls`` field."""
    turn_calls, suspects = False, []
    for i, m in enumerate(ctx.messages):
        if m.role == "user":
            _check_turn(ctx, turn_calls, suspects)
            turn_calls, suspects = False, []
        elif m.end == CALL:
            turn_calls = True
        elif m.role == "assistant":
            suspects.append(i)
    _check_turn(ctx, turn_calls, suspects)


def _check_turn(ctx: Context, turn_calls: bool, suspects: list[int]) -> None:
    for i in suspects if turn_calls else ():
        m = ctx.messages[i]
        body = _json_value(ctx, i) if "{" in m.content else None
        if TOOL_CALLS_FIELD in m.attrs or (isinstance(body, dict) and TOOL_CALLS_FIELD in body):
            ctx.add(
                "E-CALL-MIXED-ENVELOPE",
                i,
                "This turn uses <|call|> and also a JSON tool_calls field; use only the <|call|> envelope",
            )


# --- bodies and arguments --------------------------------------------------------------
def _constraints(ctx: Context) -> None:
    for i, m in enumerate(ctx.messages):
        if m.constrain is None or m.constrain.lower() != "json":
            continue
        err = ctx.decoded_body(i)
        if isinstance(err, json.JSONDecodeError):
            base = ctx.body_offset(i)
            # The JSON error position is exact only when the body is written as read.
            offset = base + err.pos if ctx.logical(m) == m.content else base
            ctx.add(
                "E-BODY-CONSTRAINT-VIOLATION",
                i,
                f"Body is not valid JSON: {err.msg} (body line {err.lineno}, column {err.colno})",
                offset=offset,
            )


def _schemas(ctx: Context) -> None:
    tools = collect(ctx.transcript)
    checked: dict[str, bool] = {}
    for i, m in enumerate(ctx.messages):
        if not is_call(m) or m.recipient is None or is_builtin(m.recipient):
            continue
        if ctx.spec in ("mms", "mms-tokens"):
            continue  # MMS tool formats are free-form languages (js, yaml, …), not JSON calls
        tool = tools.get(qualified(m.recipient))
        if tool is None:
            if tools and m.recipient.startswith("functions."):
                ctx.add("W-CALL-UNKNOWN-TOOL", i, f"No declared tool is named {m.recipient}")
            continue
        args = _json_value(ctx, i)
        if ctx.spec == SHAREGPT and isinstance(args, dict):
            args = _sharegpt_arguments(args)
        if args is None and (m.constrain or "").lower() != "json":
            ctx.add(
                "E-CALL-SCHEMA", i, f"{tool.key}: arguments are not JSON", offset=ctx.body_offset(i)
            )
            continue
        if args is not None:
            check_arguments(ctx, i, tool, args, checked)


def _sharegpt_arguments(value: dict[str, Any]) -> Any:
    """A ShareGPT ``function_call`` turn is ``{"name", "arguments"}``: the arguments are the
    call's (datasets also write them as a JSON-encoded string)."""
    args = value.get("arguments")
    if isinstance(args, str):
        try:
            return json_depth.loads(args)
        except json.JSONDecodeError:
            return None
    return args


def check_arguments(
    ctx: Context, i: int, tool: ToolSchema, args: Any, checked: dict[str, bool]
) -> None:
    """One E-CALL-SCHEMA per schema error, its JSON path in the message; a schema that
    cannot check anything gets one W-TOOL-SCHEMA-INVALID (``checked`` remembers it)."""
    if checked.get(tool.key) is False:
        return
    try:
        errors = parameters_schema(tool.parameters).errors(args)
    except UnusableSchema as why:
        checked[tool.key] = False
        ctx.add(
            "W-TOOL-SCHEMA-INVALID",
            tool.message_index,
            f"Parameters of {tool.key} are not valid JSON Schema: {why}",
        )
        return
    for error in errors:
        ctx.add("E-CALL-SCHEMA", i, f"{tool.key}: {error}", offset=ctx.body_offset(i))
