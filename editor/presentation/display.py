"""Shaping rendered transcripts for HTML templates (no rules here: those are in formats.render):
raw source cut at its control tokens for highlighting, and the items grouped into the file's
own messages."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from editor import formats
from editor.formats import Badge, as_written
from editor.formats.render import END_USER, RenderedItem, RenderedTranscript, Span, token_spans


@dataclass(frozen=True)
class Segment:
    text: str
    kind: str | None  # None: plain text; else the span kind (token, escape, literal, …)


def token_segments(text: str, spec: str) -> list[Segment]:
    """``text`` cut at its control tokens (``formats.render.token_spans``): the one
    highlighting of raw source, on the raw-mode page (and in the answer to each keystroke
    there, which the browser shows as it is) and in the debug rendering."""
    return _cut(text, token_spans(text, spec))


def source_segments(rendered: RenderedTranscript) -> list[Segment]:
    """The debug source cut at the control-token spans its rendering found."""
    return _cut(rendered.source or "", rendered.spans)


def _cut(text: str, spans: Iterable[Span]) -> list[Segment]:
    """``text`` as plain and marked segments: ``spans`` are in order and do not overlap."""
    out: list[Segment] = []
    pos = 0
    for span in spans:
        if span.start > pos:
            out.append(Segment(text[pos : span.start], None))
        out.append(Segment(text[span.start : span.end], span.kind))
        pos = span.end
    if pos < len(text):
        out.append(Segment(text[pos:], None))
    return out


# --- turns: a transcript in its own spec's words --------------------------------------------


@dataclass(frozen=True)
class Part:
    """One canonical message inside a turn: ``item.index`` is what the editor edits."""

    item: RenderedItem
    # (label, value) in the spec's words. In the JSON specs whose file message holds several
    # parts the first badge names the part's field (`content`, `tool_calls[0]`, `thinking`).
    badges: tuple[Badge, ...]


@dataclass(frozen=True)
class Turn:
    """One message as the source file has it, possibly several canonical messages."""

    number: int  # 1-based position among the file's messages, as a person counts them
    role: str  # as written in the file (ShareGPT `human`, legacy OpenAI `function`, …)
    parts: tuple[Part, ...]  # the parts this audience may see, in file order
    hidden: bool  # no part of it is shown to end users

    @property
    def indices(self) -> list[int]:
        return [part.item.index for part in self.parts]


def display_turns(
    transcript: formats.Transcript, rendered: RenderedTranscript, *, source_text: str | None = None
) -> list[Turn]:
    """``rendered``'s items grouped into the messages of ``transcript``'s file and labelled in
    its spec's words (``editor.formats.as_written``).

    ``transcript`` is the canonical transcript ``rendered`` was made from. For a stored one,
    pass its ``source_text`` too: for the specs whose reader splits a file message (OpenAI
    messages, OpenChatML JSON) the grouping and variant are read from the text when it still
    says the same. Turns keep the file's numbering whatever the audience; a turn none of whose
    parts the audience may see is left out (end users never learn a hidden message was there).
    """
    read = as_written.reread(transcript, source_text)
    items = {item.index: item for item in rendered.items}
    end_user = rendered.audience == END_USER
    turns = (
        file_turn(read, number, indices, items, end_user=end_user)
        for number, indices in enumerate(as_written.file_messages(read), start=1)
    )
    return [turn for turn in turns if turn is not None]


def file_turn(
    read: formats.Transcript,
    number: int,
    indices: list[int],
    items: dict[int, RenderedItem],
    *,
    end_user: bool,
) -> Turn | None:
    """File message ``number`` of ``read``, made of its messages ``indices`` (positions in
    ``read.messages``), each shown as its item in ``items`` (by the same positions); None
    when the audience sees none of them. A page of a long transcript is grouped by the same
    rule from its own rows (``transcript_view.PagedView``)."""
    group = [read.messages[i] for i in indices]
    context = as_written.PartContext(read, group, end_user)
    parts = tuple(
        Part(items[i], tuple(as_written.part_badges(message, items[i], context)))
        for i, message in zip(indices, group, strict=True)
        if i in items
    )
    if not parts:
        return None
    hidden = not any(part.item.visible_to_end_user for part in parts)
    return Turn(number, as_written.role_as_written(read, group[0]), parts, hidden)
