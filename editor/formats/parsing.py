"""Reading and writing a transcript in a spec: ``parse`` (never raises unless strict) and
``serialize``, through the codec the registry has for the spec."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

from .detect import detect
from .diagnostics import Diagnostic, Diagnostics, ParseError, first_error
from .model import Transcript
from .specs import get_codec

BOM = "\ufeff"
WHITESPACE = " \t\r\n"
STRAY_TEXT = "W-PARSE-STRAY-TEXT"
EMPTY = "E-PARSE-EMPTY"
# What a text of which no message was read is told, the spec it reads as added to the first.
NO_MESSAGE_CODES = (EMPTY, "E-PARSE-SHAPE")


class ParseResult(NamedTuple):
    transcript: Transcript
    diagnostics: list[Diagnostic]


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
    diagnostics = _without_bom_warning(text, transcript, sink.items)
    if not transcript.messages:
        diagnostics = _naming_the_spec_it_reads_as(text, spec, diagnostics)
    return _finish(transcript, diagnostics, strict)


def parse_read(text: str, document: Any, spec: str) -> ParseResult:
    """``parse(text, spec)`` for a JSON text whose document ``read_document`` (in
    ``codecs.json_support``) has already read: a JSONL dataset reads each line once, to find
    its spec, then parses what it read."""
    codec = get_codec(spec)
    if codec.read is None:
        return parse(text, spec)
    sink = Diagnostics(text)
    transcript = codec.read(text, [document], sink)
    diagnostics = sink.items
    if not transcript.messages:
        diagnostics = _naming_the_spec_it_reads_as(text, spec, diagnostics)
    return _finish(transcript, diagnostics, False)


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


def _naming_the_spec_it_reads_as(
    text: str, spec: str, diagnostics: list[Diagnostic]
) -> list[Diagnostic]:
    """No message read under the ``spec`` given: when the text reads as another spec (the
    wrong one picked, the commonest cause), the first ``E-PARSE-EMPTY`` or ``E-PARSE-SHAPE``
    (a JSON document not of the spec's shape) says which."""
    named = next((d for d in diagnostics if d.code in NO_MESSAGE_CODES), None)
    if named is None:
        return diagnostics
    other = detect(text)
    if other is None or other == spec:
        return diagnostics
    hint = f"; the text reads as {other}: parse it with that spec"
    return [replace(d, message=d.message + hint) if d is named else d for d in diagnostics]


def _finish(transcript: Transcript, diagnostics: list[Diagnostic], strict: bool) -> ParseResult:
    if strict and (error := first_error(diagnostics)) is not None:
        raise ParseError(error)
    return ParseResult(transcript, diagnostics)


def serialize(transcript: Transcript, spec: str | None = None, *, one_line: bool = False) -> str:
    """Write ``transcript`` as ``spec`` text (its own spec by default).

    Messages unchanged since parsing keep their exact source text; edited ones are written
    in the spec's canonical form.

    ``one_line``: a JSON document a writer would indent (``json_support.dumps``) goes on
    one line, as if it had been read from one line (``json_support.detect_indent``), for a
    caller that reads the value back and drops the layout (an export line embeds the
    document). Python's JSON encoder is written in C for one line only: indented JSON takes
    its pure-Python path, four times as long. The value is the same; text specs and JSON
    specs with a layout of their own (chatml-json's token lines) ignore it.
    """
    if one_line:
        transcript = replace(transcript, layout={**transcript.layout, "indent": None})
    return get_codec(spec or transcript.spec).serialize(transcript)
