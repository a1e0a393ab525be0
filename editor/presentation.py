"""Shaping rendered transcripts for HTML templates (no rules here: those are in formats.render)."""

from __future__ import annotations

from dataclasses import dataclass

from editor.formats.render import RenderedTranscript


@dataclass(frozen=True)
class Segment:
    text: str
    kind: str | None  # None: plain text; else the span kind (token, escape, literal, …)


def source_segments(rendered: RenderedTranscript) -> list[Segment]:
    """The debug source cut at its control-token spans, for highlighting."""
    source = rendered.source or ""
    out: list[Segment] = []
    pos = 0
    for span in rendered.spans:
        if span.start > pos:
            out.append(Segment(source[pos : span.start], None))
        out.append(Segment(source[span.start : span.end], span.kind))
        pos = span.end
    if pos < len(source):
        out.append(Segment(source[pos:], None))
    return out
