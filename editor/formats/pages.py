"""A page of the rendering of a transcript parsed from a text held whole (the text posted to
``POST /render``): items ``offset`` … ``offset + limit - 1`` of any audience, equal to the same
items of the whole rendering (``render.render``, ``training.render_training``), with only the
page's items built. What a page needs of the other messages is read from them and not kept:
which are visible (``end_user``), the turn bounds (``training``), where the page's messages
begin in the text (``debug``).

A stored transcript is paged from its message rows instead
(``editor.presentation.render_pages``); both answer the same fields.
"""

from __future__ import annotations

from typing import Any

from .model import Transcript
from .render import ANNOTATOR, DEBUG, END_USER, message_starts, render_item, source_spans
from .render.visibility import visibility
from .specs import TEXT_SPECS
from .training import (
    TRAINING,
    check_convention,
    default_convention,
    page_masks,
    parsed_page_layout,
    turn_bounds,
    with_training,
)


def render_text_page(
    transcript: Transcript,
    text: str,
    audience: str,
    *,
    offset: int,
    limit: int,
    convention: str | None = None,
) -> dict[str, Any]:
    """Items ``offset`` … ``offset + limit - 1`` of ``transcript`` (parsed from ``text``)
    rendered for ``audience`` (``end_user``, ``annotator``, ``debug`` or ``training``), with
    ``total`` (the items of the whole rendering), ``offset`` and ``limit``; ``debug`` adds
    the page's part of ``text`` (``source``, ``source_offset``, ``spans``), ``training`` the
    ``convention`` and each item's mask (``parts`` in ``text``). ValueError for an unknown
    audience or convention."""
    if audience not in (END_USER, ANNOTATOR, DEBUG, TRAINING):
        raise ValueError(f"unknown audience {audience!r}")
    if audience == TRAINING:
        convention = check_convention(convention or default_convention(transcript.spec))
    messages = transcript.messages
    if audience == END_USER:
        total, indices = _visible_page(transcript, offset, limit)
    else:
        total = len(messages)
        indices = range(offset, min(offset + limit, total))
    shown_as = ANNOTATOR if audience == TRAINING else audience
    items = [render_item(transcript, i, messages[i], shown_as) for i in indices]
    out = page_answer(audience, transcript.spec, items, total, offset, limit)
    if audience == DEBUG:
        out.update(page_source(text, transcript.spec, offset, offset + limit, total))
    elif audience == TRAINING:
        page = [messages[i] for i in indices]
        layout = None
        # As ``training.message_parts``: parts only when every message kept where it is.
        if transcript.spec in TEXT_SPECS and all(m.source is not None for m in messages):
            layout = parsed_page_layout(text, page)
        masks = page_masks(transcript, offset, page, convention, turn_bounds(messages), layout)
        with_training(out["items"], masks)
        out["convention"] = convention
    return out


def page_answer(
    audience: str, spec: str, items: list, total: int, offset: int, limit: int
) -> dict[str, Any]:
    """A page of a rendering as the render routes answer it (the items a page shows to its
    audience: a hidden message renders as None and is left out)."""
    return {
        "audience": audience,
        "spec": spec,
        "items": [item.to_dict() for item in items if item is not None],
        "total": total,
        "offset": offset,
        "limit": limit,
    }


def _visible_page(transcript: Transcript, offset: int, limit: int) -> tuple[int, list[int]]:
    """How many messages an end user sees, and the indices of the page's (the visible ones
    from the ``offset``-th)."""
    total, page = 0, []
    for index, message in enumerate(transcript.messages):
        if visibility(transcript, message).visible:
            if offset <= total < offset + limit:
                page.append(index)
            total += 1
    return total, page


def page_source(source: str, spec: str, first: int, stop: int, count: int) -> dict[str, Any]:
    """The page's part of ``source`` (of ``count`` messages): from message ``first``'s start
    (the text's start for the first page) to message ``stop``'s (the text's end for the last
    page), so that the pages' parts make up the whole source, each once; its spans at their
    offsets in the whole source. A JSON document has no message-start token to cut at: the
    first page carries all of it."""
    end = len(source)
    if spec in TEXT_SPECS:
        starts = message_starts(source, spec, (first, stop), count)
        start = 0 if first == 0 else starts.get(first, end)
        end = starts.get(stop, end)
    else:
        start = 0 if first == 0 else end
    return {
        "source": source[start:end],
        "source_offset": start,
        "spans": [span.to_dict() for span in source_spans(source, spec, start, end)],
    }
