"""Which reply answers which tool call: the pairing rule of the validator, as data.

    pair_calls(messages) = {reply index: call index}

A reply with a ``call_id`` answers the call with that id; a reply without one answers the
earliest still open call to the same tool (Harmony, 2.0, replies that lack an id). A user
message or a final answer closes the turn: calls still open then stay unanswered. The
validator (``validate_calls``) reports what does not pair; the editor links what does.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Message
from .context import closes_turn, is_call, is_reply, reply_tool, same_tool


def pair_calls(messages: Sequence[Message]) -> dict[int, int]:
    calls_by_id: dict[str, int] = {}
    open_calls: list[int] = []
    pairs: dict[int, int] = {}
    for index, message in enumerate(messages):
        if is_call(message):
            if message.call_id is not None:
                calls_by_id.setdefault(message.call_id, index)
            open_calls.append(index)
        elif is_reply(message):
            call = _answered_call(messages, message, calls_by_id, open_calls)
            if call is not None:
                pairs[index] = call
                if call in open_calls:
                    open_calls.remove(call)
        if closes_turn(message):
            open_calls.clear()
    return pairs


def _answered_call(
    messages: Sequence[Message],
    reply: Message,
    calls_by_id: dict[str, int],
    open_calls: list[int],
) -> int | None:
    if reply.call_id is not None:
        return calls_by_id.get(reply.call_id)
    tool = reply_tool(reply)
    return next(
        (c for c in open_calls if tool is None or same_tool(messages[c].recipient, tool)), None
    )
