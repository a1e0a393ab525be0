"""The spec core: parse, serialize, detect and convert every supported chat markup spec.

Pure Python; imports nothing from Django.

    >>> from editor import formats
    >>> result = formats.parse("<|start|>user<|message|>hi<|end|>", spec="openchatml-2.2")
    >>> result.transcript.messages[0].content
    'hi'
"""

from __future__ import annotations

from typing import Any, NamedTuple

# Imported before ``detect`` is defined: importing the submodule binds the package attribute
# ``detect`` to the module, and the function below must win.
from .codecs.json_depth import MAX_DEPTH as MAX_JSON_DEPTH
from .codecs.json_depth import loads as load_json
from .detect import detect as _detect
from .diagnostics import CODES, Diagnostic, Diagnostics, ParseError, first_error, has_errors
from .model import CALL, END, RETURN, Message, Transcript
from .specs import SPEC_IDS, TEXT_SPECS, UnknownSpec, get_codec

__all__ = [
    "CALL",
    "CODES",
    "END",
    "MAX_JSON_DEPTH",
    "RETURN",
    "SPEC_IDS",
    "TEXT_SPECS",
    "Diagnostic",
    "Message",
    "ParseError",
    "ParseResult",
    "Transcript",
    "UnknownSpec",
    "detect",
    "has_errors",
    "load_json",
    "parse",
    "serialize",
]


BOM = "\ufeff"
WHITESPACE = " \t\r\n"
STRAY_TEXT = "W-PARSE-STRAY-TEXT"


class ParseResult(NamedTuple):
    transcript: Transcript
    diagnostics: list[Diagnostic]


def detect(text: str) -> str | None:
    """The spec id ``text`` is written in, or None when it is none of them."""
    return _detect(text)


def parse(text: str, spec: str | None = None, *, strict: bool = False) -> ParseResult:
    """Parse ``text`` (its spec detected when not given). Never raises unless ``strict``."""
    sink = Diagnostics(text)
    if spec is None:
        spec = detect(text)
        if spec is None:
            sink.add(
                "E-DETECT-UNKNOWN", 0, "The input matches no supported spec; name one with --spec"
            )
            transcript = Transcript(spec="unknown")
            return _finish(transcript, sink.items, strict)
    transcript = get_codec(spec).parse(text, sink)
    return _finish(transcript, _without_bom_warning(text, transcript, sink.items), strict)


def parse_read(text: str, document: Any, spec: str) -> ParseResult:
    """``parse(text, spec)`` for a JSON text whose document ``read_document`` (in
    ``codecs.json_support``) has already read: a JSONL dataset reads each line once, to find
    its spec, then parses what it read."""
    codec = get_codec(spec)
    if codec.read is None:
        return parse(text, spec)
    sink = Diagnostics(text)
    return _finish(codec.read(text, [document], sink), sink.items, False)


def _without_bom_warning(
    text: str, transcript: Transcript, diagnostics: list[Diagnostic]
) -> list[Diagnostic]:
    """A byte order mark (with blank text) before the first message is an encoding artefact,
    not stray text: it stays in the layout (round trip) but gets no warning."""
    if not text.startswith(BOM) or not transcript.messages:
        return diagnostics
    first = transcript.messages[0].source
    if first is None or text[: first.start].strip(BOM + WHITESPACE):
        return diagnostics
    return [d for d in diagnostics if not (d.code == STRAY_TEXT and d.offset == 0)]


def _finish(transcript: Transcript, diagnostics: list[Diagnostic], strict: bool) -> ParseResult:
    if strict and (error := first_error(diagnostics)) is not None:
        raise ParseError(error)
    return ParseResult(transcript, diagnostics)


def serialize(transcript: Transcript, spec: str | None = None) -> str:
    """Write ``transcript`` as ``spec`` text (its own spec by default).

    Messages unchanged since parsing keep their exact source text; edited ones are written
    in the spec's canonical form.
    """
    return get_codec(spec or transcript.spec).serialize(transcript)
