"""Diagnostics: what is wrong with a transcript, where, and how to fix it mechanically.

Every code lives once in ``CODES`` (docs/diagnostics.md lists the same with an example each;
a test keeps the two in step). Codes from the OpenChatML 2.2 error taxonomy (§14) are used
where they fit; new codes follow their style, with the first letter giving the default
severity: ``E-`` error, ``W-`` warning, ``I-`` information.

Positions: ``offset`` is 0-based and counts Unicode code points (Python ``str`` indices);
``line`` and ``column`` are 1-based, the column counting code points from the line start.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)


@dataclass(frozen=True)
class CodeInfo:
    code: str
    severity: str
    title: str
    example: str  # a short input that produces the code (shown in docs/diagnostics.md)


def _codes(*infos: CodeInfo) -> dict[str, CodeInfo]:
    return {info.code: info for info in infos}


CODES: dict[str, CodeInfo] = _codes(
    # --- the OpenChatML 2.2 §14 taxonomy -------------------------------------------------
    CodeInfo(
        "E-PARSE-HEADER",
        ERROR,
        "Malformed or unsafe document header",
        "---\nversion: [2.2\n---\n<|start|>user<|message|>hi<|end|>",
    ),
    CodeInfo(
        "E-PARSE-CHANNEL-MISSING",
        ERROR,
        "Channel absent where the profile requires one",
        "profiles: {harmony: {enabled: true, require_channels: [analysis, commentary, final]}}",
    ),
    CodeInfo(
        "E-BODY-CONSTRAINT-VIOLATION",
        ERROR,
        "Body does not parse as its <|constrain|> type",
        "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{oops<|call|>",
    ),
    CodeInfo(
        "E-CALL-SCHEMA",
        ERROR,
        "Tool call arguments do not match the tool's schema",
        'get_weather declared with location: string; called with {"location": 3}',
    ),
    CodeInfo(
        "E-TOOL-TIMEOUT",
        ERROR,
        "Tool exceeded its deadline",
        '{"ok": false, "error": {"code": "E-TOOL-TIMEOUT"}}',
    ),
    CodeInfo(
        "E-TOOL-CANCELLED",
        ERROR,
        "Tool call was cancelled by the runtime",
        '{"ok": false, "error": {"code": "E-TOOL-CANCELLED"}}',
    ),
    CodeInfo(
        "E-STREAM-TRUNCATED",
        ERROR,
        "Input ended without a stop token",
        "<|start|>assistant<|channel|>final<|message|>Half an ans",
    ),
    CodeInfo(
        "E-PERM-VISIBILITY",
        ERROR,
        "Hidden channels requested by a user who may not see them",
        "a viewer asking for the annotator rendering",
    ),
    # --- token grammar ----------------------------------------------------------------------
    CodeInfo(
        "E-PARSE-UNEXPECTED-TOKEN",
        ERROR,
        "Control token where the grammar does not allow it",
        "<|start|>user<|message|>hi<|channel|>final<|end|>",
    ),
    CodeInfo(
        "E-PARSE-ROLE-MISSING", ERROR, "Message header has no role", "<|start|><|message|>hi<|end|>"
    ),
    CodeInfo(
        "E-PARSE-ATTRIBUTE",
        ERROR,
        "Malformed header attribute",
        "<|start|>assistant to<|channel|>commentary<|message|>{}<|call|>",
    ),
    CodeInfo(
        "W-PARSE-DUPLICATE-ATTRIBUTE",
        WARNING,
        "Header attribute given twice; the first wins",
        "<|start|>assistant to=a to=b<|message|>x<|end|>",
    ),
    CodeInfo(
        "W-PARSE-STRAY-TEXT",
        WARNING,
        "Text outside any message is ignored by models",
        "hello <|start|>user<|message|>hi<|end|>",
    ),
    CodeInfo(
        "W-PARSE-UNKNOWN-TOKEN",
        WARNING,
        "Token-like text that this spec does not define",
        "<|start|>user<|message|>a <|foo|> b<|end|>",
    ),
    CodeInfo(
        "E-PARSE-UNTERMINATED-LITERAL",
        ERROR,
        "<|literal|> block without <|endliteral|>",
        "<|start|>user<|message|><|literal|>raw<|end|>",
    ),
    CodeInfo(
        "E-PARSE-UNCLOSED-MESSAGE",
        ERROR,
        "<|start|> before the previous message ended",
        "<|start|>user<|message|>hi<|start|>assistant<|message|>hello<|end|>",
    ),
    CodeInfo(
        "I-PARSE-COMPLETION-PROMPT",
        INFO,
        "Open last message: a prompt for the model to complete",
        "<|start|>user<|message|>Hi<|end_message|><|start|>assistant",
    ),
    CodeInfo(
        "I-PARSE-IMPLIED-START",
        INFO,
        "A completion: its first message has no <|start|>assistant (the prompt ended with it)",
        "<|channel|>final<|message|>Hi!<|return|>",
    ),
    CodeInfo("E-PARSE-EMPTY", ERROR, "No message found in the input", ""),
    # --- JSON shapes ------------------------------------------------------------------------
    CodeInfo("E-PARSE-JSON", ERROR, "Input is not valid JSON", '[{"role": "user",'),
    CodeInfo(
        "E-PARSE-SHAPE",
        ERROR,
        "JSON value does not have the shape this spec defines",
        '{"messages": [{"content": "no role"}]}',
    ),
    # --- OpenChatML 0.1 and MMS tokens (json-and-v01) ---------------------------------------
    CodeInfo(
        "E-PARSE-BODY-MISSING",
        ERROR,
        "Message header is not followed by its body token",
        "<|role|>user<|end_turn|>",
    ),
    CodeInfo(
        "E-PARSE-FUNCTION-JSON",
        ERROR,
        "Invalid JSON after <|function_call|>, <|function_output|> or in <|function_list|>",
        '<|im_start|>assistant\n<|function_call|>\n{"name": "f", "arguments": {<|im_end|>',
    ),
    # --- semantic validation (editor/formats/validate*.py) -----------------------------
    CodeInfo(
        "W-HEADER-MISSING",
        WARNING,
        "A 2.x text without its YAML header",
        "<|start|>user<|message|>hi<|end|>   (spec openchatml-2.2)",
    ),
    CodeInfo(
        "E-HEADER-VALUE",
        ERROR,
        "A header key has a value outside its allowed set",
        "version: 2.2\ngeneration_settings: {reasoning_effort: extreme}",
    ),
    CodeInfo(
        "W-CHANNEL-UNKNOWN",
        WARNING,
        "Channel outside analysis/commentary/final or the profile",
        "<|start|>assistant<|channel|>thoughts<|message|>x<|end|>",
    ),
    CodeInfo(
        "W-ROLE-UNKNOWN",
        WARNING,
        "Role outside the spec's roles",
        "<|start|>narrator<|message|>x<|end|>",
    ),
    CodeInfo(
        "W-INTENT-UNKNOWN",
        WARNING,
        "Intent outside preamble/status/debug",
        "<|start|>assistant intent=shout<|channel|>commentary<|message|>x<|end|>",
    ),
    CodeInfo(
        "E-CALL-ID-MISSING",
        ERROR,
        "A 2.2 tool call or tool reply without call_id",
        "<|start|>assistant to=functions.f<|channel|>commentary<|message|>{}<|call|>",
    ),
    CodeInfo(
        "E-CALL-ID-DUPLICATE",
        ERROR,
        "Two tool calls share a call_id",
        "two `assistant to=functions.f call_id=c1 … <|call|>` messages",
    ),
    CodeInfo(
        "E-CALL-REPLY-UNKNOWN",
        ERROR,
        "A tool reply answers no earlier call",
        "<|start|>tool name=functions.f call_id=nope<|channel|>commentary<|message|>{}<|end|>",
    ),
    CodeInfo(
        "W-CALL-UNANSWERED",
        WARNING,
        "A tool call is never answered before its turn closes",
        "a `<|call|>` message followed directly by a user message",
    ),
    CodeInfo(
        "E-CALL-NAME-MISMATCH",
        ERROR,
        "A tool reply's name differs from its call's to=",
        "call `to=functions.a call_id=c1`, reply `tool name=functions.b call_id=c1`",
    ),
    CodeInfo(
        "E-CALL-CHANNEL",
        ERROR,
        "HIP-1: a tool call or reply on a channel its tool may not use",
        "<|start|>assistant to=functions.f<|channel|>analysis<|message|>{}<|call|>",
    ),
    CodeInfo(
        "E-RETURN-NOT-FINAL",
        ERROR,
        "<|return|> on a message other than a final assistant message",
        "<|start|>assistant<|channel|>analysis<|message|>x<|return|>",
    ),
    CodeInfo(
        "E-CALL-MIXED-ENVELOPE",
        ERROR,
        "A turn mixes <|call|> with a JSON tool_calls field",
        'a `<|call|>` message and an assistant body {"tool_calls": […]} in one turn',
    ),
    CodeInfo(
        "W-CALL-UNKNOWN-TOOL",
        WARNING,
        "A call to a function tool the transcript does not declare",
        "namespace functions declares f; the call goes to=functions.g",
    ),
    CodeInfo(
        "W-TOOL-SCHEMA-INVALID",
        WARNING,
        "A declared parameters schema is not valid JSON Schema, or has a $ref that does not "
        "resolve inside it (a URL is never fetched)",
        '<|function_list|>{"type": "function", "function": {"name": "f", "parameters": {"type": 5}}}',
    ),
    CodeInfo(
        "E-V01-ROLE",
        ERROR,
        "v0.1 role outside system/tool/user/assistant",
        "<|im_start|>narrator\nx<|im_end|>",
    ),
    CodeInfo(
        "E-V01-NAME",
        ERROR,
        "v0.1 name= empty or containing whitespace",
        "<|im_start|>user name=\nx<|im_end|>",
    ),
    CodeInfo(
        "E-V01-THOUGHT-UNBALANCED",
        ERROR,
        "v0.1 thought block start without end, or the reverse",
        "<|im_start|>assistant\n<|start_reason|>because<|im_end|>",
    ),
    CodeInfo(
        "E-MMS-FORMAT-MISSING",
        ERROR,
        "MMS assistant message without a format",
        "<|role|>assistant<|content|>hi<|end_turn|>",
    ),
    CodeInfo(
        "W-MMS-TOOL-NO-CONTEXT",
        WARNING,
        "MMS tool-format message not followed by a context reply",
        "<|role|>assistant<|format|>weather:json<|content|>{}<|role|>user<|content|>hi",
    ),
    # --- detection --------------------------------------------------------------------------
    CodeInfo("E-DETECT-UNKNOWN", ERROR, "The input matches no supported spec", "just some prose"),
)


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` of the source with ``replacement``."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    message: str
    line: int
    column: int
    offset: int
    message_index: int | None = None
    fix: Fix | None = None

    def to_dict(self) -> dict[str, Any]:
        # Written out: ``dataclasses.asdict`` deep-copies field by field, and stored
        # diagnostics are made for every imported transcript (5 % of an import, profiled).
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "offset": self.offset,
            "message_index": self.message_index,
        }
        if self.fix is not None:
            out["fix"] = {
                "title": self.fix.title,
                "edits": [
                    {"start": e.start, "end": e.end, "replacement": e.replacement}
                    for e in self.fix.edits
                ],
            }
        return out

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.severity} {self.code}: {self.message}"


class ParseError(ValueError):
    """Raised by strict parsing: carries the first error diagnostic and its position."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        self.msg = diagnostic.message
        self.pos = diagnostic.offset
        self.lineno = diagnostic.line
        self.colno = diagnostic.column
        super().__init__(str(diagnostic))


class LineIndex:
    """Maps offsets to 1-based (line, column); line starts are found once, on first use."""

    def __init__(self, text: str):
        self._text = text
        self._starts: list[int] | None = None

    def position(self, offset: int) -> tuple[int, int]:
        if self._starts is None:
            starts = [0]
            find = self._text.find
            pos = find("\n")
            while pos != -1:
                starts.append(pos + 1)
                pos = find("\n", pos + 1)
            self._starts = starts
        offset = max(0, min(offset, len(self._text)))
        line = bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


@dataclass
class Diagnostics:
    """Collects diagnostics for one text while a parser keeps going (like ``email`` defects)."""

    text: str
    items: list[Diagnostic] = field(default_factory=list)
    base_offset: int = 0  # where ``text`` starts in the document the offsets refer to
    _index: LineIndex | None = field(default=None, repr=False)

    def add(
        self,
        code: str,
        offset: int,
        message: str | None = None,
        *,
        message_index: int | None = None,
        fix: Fix | None = None,
        severity: str | None = None,
    ) -> Diagnostic:
        info = CODES[code]  # a KeyError here is a bug: every code is registered
        if self._index is None:
            self._index = LineIndex(self.text)
        line, column = self._index.position(offset)
        diagnostic = Diagnostic(
            code=code,
            severity=severity or info.severity,
            message=message or info.title,
            line=line,
            column=column,
            offset=offset + self.base_offset,
            message_index=message_index,
            fix=fix,
        )
        self.items.append(diagnostic)
        return diagnostic

    @property
    def has_errors(self) -> bool:
        return any(d.severity == ERROR for d in self.items)


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity == ERROR for d in diagnostics)


def first_error(diagnostics: list[Diagnostic]) -> Diagnostic | None:
    return next((d for d in diagnostics if d.severity == ERROR), None)
