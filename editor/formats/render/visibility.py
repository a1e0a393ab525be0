"""Which messages an end user may see, and what of their text (docs/formats.md, "Rendering").

| message | end user sees | reason when hidden |
|---|---|---|
| user | the whole body | — |
| assistant, channel ``final`` or none (2.x §5 rule 2), not a tool call | the body without CoT / thought blocks | — |
| assistant, channel ``commentary`` with ``intent=preamble``, not a tool call | the body | — |
| assistant, channel ``analysis`` | nothing | ``analysis`` |
| assistant, other ``commentary`` | nothing | ``commentary`` |
| assistant tool call (``to=`` a tool, ``<|call|>``, MMS ``tool:fmt``, v0.1 function-call-only body) | nothing | ``tool call`` |
| MMS assistant in a conversational format (markdown, plaintext, text, none) | the body | — |
| MMS assistant in any other format (``html``, ``json``, …) | the body (a non-conversational answer is still the answer) unless it is a ``tool:fmt`` call | — |
| system, developer, MMS platform, ChatML ``system:*`` | nothing | ``system`` / ``developer`` / … |
| tool replies (``tool``, ``functions.*``, built-ins), MMS ``context`` | nothing | ``tool reply`` / ``context`` |
| v0.1 FIM and file segments | nothing | ``not a conversational message`` |
| any other role | nothing | ``unknown role`` |

Text removed from a visible message: v0.1 ``<|start_K|>…<|end_K|>`` thought blocks, flag
tokens and function tokens with their JSON; and 2.x CoT markers (``<|start_reflect|>``,
``<|start_introspect|>``, ``<|start_reason|>``) together with everything after them in that
body, since those markers have no closing token. A message whose remaining text is blank is
hidden (reason ``only hidden parts``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..codecs import v01body
from ..codecs.bodytext import logical_text
from ..model import CALL, Message, Transcript
from ..validate.context import is_call, is_reply

V01 = "openchatml-0.1"
SHAREGPT_ROLES = {"human": "user", "gpt": "assistant"}
# 2.x §7 CoT markers: no closing token, so a marker hides the rest of the body.
COT_MARKER_RE = re.compile(r"<\|start_(?:reflect|introspect|reason)\|>")
HIDDEN_ROLES = {
    "system": "system",
    "developer": "developer",
    "platform": "platform",
    "context": "context",
}
V01_SEGMENT_ROLES = frozenset({"fim_prefix", "fim_middle", "fim_suffix", "file"})


class Visibility(NamedTuple):
    visible: bool
    reason: str  # why the message is shown or hidden (for annotators)
    end_user_text: str  # the text an end user sees ("" when hidden)


def _hidden(reason: str) -> Visibility:
    return Visibility(False, reason, "")


def strip_v01(body: str) -> str:
    """A v0.1 body without thought blocks, flags and function parts."""
    # The separators left between removed parts are layout, not text: trim them.
    return "".join(p.text for p in v01body.parts(body) if p.kind == v01body.TEXT).strip()


def strip_cot(text: str) -> str:
    match = COT_MARKER_RE.search(text)
    return text if match is None else text[: match.start()]


def canonical_role(role: str) -> str:
    return SHAREGPT_ROLES.get(role, role)


def visibility(transcript: Transcript, message: Message) -> Visibility:
    role = canonical_role(message.role)
    if role.startswith("system:") or role in HIDDEN_ROLES:
        return _hidden(HIDDEN_ROLES.get(role, "system"))
    if role in V01_SEGMENT_ROLES:
        return _hidden("not a conversational message")
    if is_reply(message):
        return _hidden("tool reply")
    if role == "user":
        return _text_visibility(transcript, message, "user message")
    if role != "assistant":
        return _hidden("unknown role")
    if is_call(message) or message.end == CALL:
        return _hidden("tool call")
    if message.channel in (None, "final"):
        return _text_visibility(
            transcript, message, "final answer" if message.channel else "no channel: final"
        )
    if message.channel == "commentary" and message.intent == "preamble":
        return _text_visibility(transcript, message, "commentary preamble")
    return _hidden(
        message.channel if message.channel in ("analysis", "commentary") else "hidden channel"
    )


def _text_visibility(transcript: Transcript, message: Message, reason: str) -> Visibility:
    text = logical_text(transcript.spec, message.content)
    if transcript.spec == V01:
        text = strip_v01(text)
    text = strip_cot(text)
    if not text.strip():
        return _hidden("only hidden parts")
    return Visibility(True, reason, text)
