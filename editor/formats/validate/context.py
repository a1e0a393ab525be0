"""What every validation rule needs: the transcript, where its parts sit in the source text,
and a sink for diagnostics.

Positions: a message parsed from ``text`` carries ``Message.source.start``; without a source
(hand-built or edited messages) or without ``text`` the position falls back to offset 0. A
quick fix is only offered when the message's recorded raw text is still what ``text`` holds at
that offset, so an edit never lands on the wrong bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..codecs import json_depth
from ..codecs.bodytext import logical_text
from ..codecs.scanner import token
from ..diagnostics import Diagnostic, Diagnostics, Edit, Fix
from ..model import BUILTIN_NAMES, BUILTIN_PREFIXES, CALL, RETURN, Message, Transcript
from ..tools.schemas import qualified

NON_TOOL_RECIPIENTS = frozenset({"assistant", "user", "all", "system", "developer"})
# Where a body starts in the raw text of a message, per token format.
BODY_OPENERS = (token("message"), token("content"))
# Tokens that end a 2.x header; a channel, an attribute, … is inserted before the first.
HEADER_ENDS = (token("channel"), token("constrain"), token("message"))


def is_call(message: Message) -> bool:
    """An outgoing tool call: an assistant message addressed to a tool or ending in a call."""
    if message.role != "assistant":
        return False
    recipient = message.recipient
    return message.end == CALL or (recipient is not None and recipient not in NON_TOOL_RECIPIENTS)


REPLY_ROLES = frozenset({"tool", *BUILTIN_NAMES})
REPLY_ROLE_PREFIXES = ("functions.", *BUILTIN_PREFIXES)


def is_reply(message: Message) -> bool:
    """A tool's reply: ROLE=tool, or a role naming the tool (``functions.X``, a built-in)."""
    role = message.role
    return role in REPLY_ROLES or role.startswith(REPLY_ROLE_PREFIXES)


def reply_tool(message: Message) -> str | None:
    """The tool a reply comes from: ``name=`` for ROLE=tool, the role itself otherwise."""
    return message.name if message.role == "tool" else message.role


def same_tool(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and qualified(a) == qualified(b)


def is_final(message: Message) -> bool:
    """A message the end user sees as the answer: channel final, or no channel (2.x §5)."""
    return message.role == "assistant" and message.channel in (None, "final")


def closes_turn(message: Message) -> bool:
    """After this message, a call still unanswered will never be answered in its turn."""
    return (
        message.role == "user"
        or (is_final(message) and not is_call(message))
        or message.end == RETURN
    )


@dataclass(slots=True)
class Context:
    transcript: Transcript
    text: str | None
    sink: Diagnostics = field(init=False)
    # The transcript's, as plain attributes: every rule reads them, many times a message.
    spec: str = field(init=False)
    messages: list[Message] = field(init=False)
    _bodies: dict[int, Any] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.sink = Diagnostics(self.text or "")
        self.spec = self.transcript.spec
        self.messages = self.transcript.messages

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.sink.items

    def add(
        self,
        code: str,
        index: int | None,
        message: str,
        *,
        offset: int | None = None,
        fix: Fix | None = None,
    ) -> None:
        if offset is None:
            offset = self.message_offset(index) if index is not None else 0
        self.sink.add(code, offset, message, message_index=index, fix=fix)

    # --- positions ------------------------------------------------------------------------
    def raw(self, index: int) -> tuple[int, str] | None:
        """(offset, raw text) of a parsed message whose bytes are still in ``text``."""
        source = self.messages[index].source
        if source is None or self.text is None:
            return None
        if self.text[source.start : source.start + len(source.raw)] != source.raw:
            return None
        return source.start, source.raw

    def message_offset(self, index: int) -> int:
        source = self.messages[index].source
        if source is None or self.text is None:
            return 0
        return min(source.start, len(self.text))

    def body_offset(self, index: int) -> int:
        """Offset of the first character of the body as written, else of the message."""
        found = self.raw(index)
        if found is None:
            return self.message_offset(index)
        start, raw = found
        content = self.messages[index].content
        after = 0
        for opener in BODY_OPENERS:
            at = raw.find(opener)
            if at != -1:
                after = at + len(opener)
                break
        at = raw.find(content, after) if content else -1
        return start + (at if at != -1 else after)

    def header_end(self, index: int) -> int | None:
        """Offset of the token that ends a 2.x message header (where to insert into it)."""
        found = self.raw(index)
        if found is None:
            return None
        start, raw = found
        ends = [at for at in (raw.find(t) for t in HEADER_ENDS) if at != -1]
        return start + min(ends) if ends else None

    def find_in_message(self, index: int, needle: str) -> int | None:
        found = self.raw(index)
        if found is None:
            return None
        start, raw = found
        at = raw.find(needle)
        return None if at == -1 else start + at

    def logical(self, message: Message) -> str:
        return logical_text(self.spec, message.content)

    def decoded_body(self, index: int) -> Any:
        """The JSON value the body of message ``index`` holds, or the JSONDecodeError saying
        why it holds none; decoded once for every rule that asks (constraints, schemas…)."""
        if index not in self._bodies:
            try:
                self._bodies[index] = json_depth.loads(self.logical(self.messages[index]))
            except json.JSONDecodeError as err:
                self._bodies[index] = err
        return self._bodies[index]


def replace_fix(title: str, at: int | None, old: str, new: str) -> Fix | None:
    return None if at is None else Fix(title, (Edit(at, at + len(old), new),))


def insert_fix(title: str, at: int | None, text: str) -> Fix | None:
    return None if at is None else Fix(title, (Edit(at, at, text),))
