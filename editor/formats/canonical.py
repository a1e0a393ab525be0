"""The canonical JSON document of a parse: transcript plus diagnostics (``ocm parse``, the API).

    {"spec", "header", "messages": [...], "attrs"?, "diagnostics": [...]}

Messages are ``Message.to_dict()`` (null fields omitted). OpenChatML 0.1 chat messages with
structure also carry a read-only ``parts`` list derived from their content
(``openchatml01.message_parts``); it is never read back.
"""

from __future__ import annotations

import json
from typing import Any

from .codecs.openchatml01 import SPEC as V01
from .codecs.openchatml01 import message_parts
from .diagnostics import Diagnostic
from .model import Message, Transcript

DIAGNOSTIC_FIELDS = ("code", "severity", "message", "line", "column", "offset", "message_index")


def message_dict(message: Message, spec: str) -> dict[str, Any]:
    out = message.to_dict()
    if spec == V01:
        parts = message_parts(message)
        if any(p["kind"] != "text" for p in parts):
            out["parts"] = parts
    return out


def diagnostic_dict(diagnostic: Diagnostic) -> dict[str, Any]:
    out = {name: getattr(diagnostic, name) for name in DIAGNOSTIC_FIELDS}
    if diagnostic.fix is not None:
        out["fix"] = diagnostic.to_dict()["fix"]
    return out


def canonical(transcript: Transcript, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "spec": transcript.spec,
        "header": transcript.header,
        "messages": [message_dict(m, transcript.spec) for m in transcript.messages],
    }
    if transcript.attrs:
        out["attrs"] = transcript.attrs
    out["diagnostics"] = [diagnostic_dict(d) for d in diagnostics]
    return out


def dumps(transcript: Transcript, diagnostics: list[Diagnostic]) -> str:
    return json.dumps(canonical(transcript, diagnostics), indent=2, ensure_ascii=False, default=str)
