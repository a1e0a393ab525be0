"""Shaping rendered transcripts for HTML templates (no rules here: those are in formats.render):
the debug source cut at its tokens, and the items grouped into the file's own messages."""

from __future__ import annotations

from dataclasses import dataclass

from editor import formats
from editor.formats.render import END_USER, RenderedItem, RenderedTranscript
from editor.presentation import spec_words
from editor.presentation.spec_words import Badge


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
    its spec's words (``editor.presentation.spec_words``).

    ``transcript`` is the canonical transcript ``rendered`` was made from. For a stored one,
    pass its ``source_text`` too: for the specs whose reader splits a file message (OpenAI
    messages, OpenChatML JSON) the grouping and variant are read from the text when it still
    says the same. Turns keep the file's numbering whatever the audience; a turn none of whose
    parts the audience may see is left out (end users never learn a hidden message was there).
    """
    read = spec_words.reread(transcript, source_text)
    items = {item.index: item for item in rendered.items}
    end_user = rendered.audience == END_USER
    turns = []
    for number, indices in enumerate(spec_words.file_messages(read), start=1):
        group = [read.messages[i] for i in indices]
        context = spec_words.PartContext(read, group, end_user)
        parts = tuple(
            Part(items[i], tuple(spec_words.part_badges(message, items[i], context)))
            for i, message in zip(indices, group, strict=True)
            if i in items
        )
        if parts:
            hidden = not any(part.item.visible_to_end_user for part in parts)
            turns.append(Turn(number, spec_words.role_as_written(read, group[0]), parts, hidden))
    return turns
