"""A page of a transcript's rendering (the API's ``/render?offset=&limit=``): every audience,
built from the page's message rows only, so that no request holds more than
``RENDER_PAGE_MAX`` messages however long the transcript (docs/api.md, "Rendering a long
transcript").

Why a page can be rendered alone and still equal the same items of the whole rendering:

* an item depends on its own message and the transcript's spec only
  (``formats.render.render_item``, ``visibility``); which messages an end user sees is kept
  on each row (``Message.end_user_text``: "" when hidden), so the end user's page is a
  query over the visible rows;
* ``debug``: the page's part of the source text runs from its first message's start to the
  next page's (found by reading the text as a stream), and its spans are that slice's;
* ``training``: a message's mask needs two facts of the whole transcript
  (``training.turn_bounds``) and where it is in the whole serialization
  (``training.page_layout``); both are read from the rows a window at a time, and where
  each page begins is kept per version, so that the next page starts from there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from django.core.cache import cache
from django.db import models
from django.db.models.functions import Cast

from editor import formats
from editor import tokens as stored_tokens
from editor.formats import training
from editor.formats.pages import page_answer, page_source
from editor.formats.render import DEBUG, END_USER, render_item
from editor.formats.specs import TEXT_SPECS
from editor.models import Message, Transcript
from editor.presentation.training import TRAINING, convention_of, dataset_tokenizer

# Items in one page: the default and the largest ``limit``. A page of 1,000 messages of a
# 50,000-message transcript costs tens of milliseconds and a few megabytes
# (docs/performance.md, "Huge transcripts").
RENDER_PAGE_MAX = 1_000
ROW_CHUNK = 2_000  # rows fetched at a time where every message is read (training)
# Where pages begin in a transcript's serialization, kept per version (``_page_layout``):
# a few numbers each, for a day.
KNOWN_PLACES_MAX = 200
KNOWN_PLACES_SECONDS = 24 * 3600
# Just what ``training.turn_bounds`` reads of a message.
TURN_FIELDS = ("role", "channel", "recipient", "end")


def render_page(
    transcript: Transcript,
    audience: str,
    *,
    offset: int = 0,
    limit: int = RENDER_PAGE_MAX,
    convention: str | None = None,
) -> dict[str, Any]:
    """Items ``offset`` … ``offset + limit - 1`` of ``transcript`` rendered for ``audience``
    (``end_user``, ``annotator``, ``debug`` or ``training``), with ``total`` (the items of
    the whole rendering), ``offset`` and ``limit``. Who may see ``audience`` is the
    caller's to check (``editor.visibility.require_audience``)."""
    template = formats.Transcript(
        spec=transcript.spec, header=transcript.header, attrs=transcript.attrs
    )
    rows = Message.objects.filter(transcript=transcript)
    if audience == END_USER:
        rows = rows.exclude(end_user_text="")  # NULL (the whole content) is visible too
    total = rows.count()
    page = list(messages_of(transcript, rows.order_by("index")[offset : offset + limit]))
    items = [render_item(template, index, message, audience) for index, message in page]
    out = page_answer(audience, transcript.spec, items, total, offset, limit)
    if audience == DEBUG:
        out.update(_debug_source(transcript, offset, offset + limit, total))
    elif audience == TRAINING:
        out.update(_training(transcript, template, rows, page, offset, convention, out))
    return out


def messages_of(transcript: Transcript, rows) -> Iterator[tuple[int, formats.Message]]:
    """(index, canonical message) of each row, read as plain tuples (``stored_messages``)."""
    values = rows.annotate(attrs_text=Cast("attrs", models.TextField())).values_list(
        "index", *Message.STORED_COLUMNS, "attrs_text"
    )
    for index, *stored in values.iterator(chunk_size=ROW_CHUNK):
        yield index, Message.canonical_of(stored, transcript, attrs_as_text=True)


def _debug_source(transcript: Transcript, first: int, stop: int, count: int) -> dict[str, Any]:
    """The page's part of the source (``formats.pages.page_source``; a JSON document's first
    page carries all of it: its size is bounded by OCM_MAX_TRANSCRIPT_BYTES)."""
    return page_source(transcript.source_text or "", transcript.spec, first, stop, count)


def _page_layout(transcript, template, ordered, messages: list, offset: int):
    """The page's ``training.page_layout``, starting from the nearest page before it whose
    place in the whole text is known (kept in the shared cache per version: a version never
    changes), so that a client reading the pages in order has each one read only its own
    rows, not every row before it again."""
    key = f"render-layout:{transcript.pk}:{transcript.version}:{transcript.created_at.timestamp()}"
    known: dict[int, int] = cache.get(key) or {}
    resume = max((index for index in known if index <= offset), default=None)
    start = 0 if resume is None else resume
    before = (message for _, message in messages_of(transcript, ordered[start:offset]))
    stop = offset + len(messages)
    follow = next((m for _, m in messages_of(transcript, ordered[stop : stop + 1])), None)
    layout = training.page_layout(
        template, before, messages, follow, begins_at=None if resume is None else known[resume]
    )
    if layout is not None:
        known[offset] = layout.begins_at
        if layout.follow_begins_at is not None:
            known[stop] = layout.follow_begins_at
        kept = dict(sorted(known.items())[-KNOWN_PLACES_MAX:])
        cache.set(key, kept, KNOWN_PLACES_SECONDS)
    return layout


def turn_bounds_of(ordered) -> training.TurnBounds:
    """``training.turn_bounds`` of the rows ``ordered`` (by index), reading just the fields
    it needs, a chunk of rows at a time."""
    return training.turn_bounds(
        formats.Message(role, channel=channel, recipient=recipient, end=end)
        for role, channel, recipient, end in ordered.values_list(*TURN_FIELDS).iterator(
            chunk_size=ROW_CHUNK
        )
    )


def page_training_masks(
    transcript: Transcript,
    template: formats.Transcript,
    ordered,
    page: list[tuple[int, formats.Message]],
    offset: int,
    convention: str,
    bounds: training.TurnBounds,
) -> list[training.MessageMask]:
    """The training masks of ``page`` ((index, message) pairs: rows ``offset`` … of the
    transcript's rows ``ordered`` by index) under ``convention``, as the whole transcript's
    (``presentation.training.training_masks``): the whole transcript's ``bounds``
    (``turn_bounds_of``), the page's place in the whole serialization (``_page_layout``),
    trained tokens from the stored counts while they are current, else counted."""
    messages = [message for _, message in page]
    layout = None
    if transcript.spec in TEXT_SPECS and messages:
        layout = _page_layout(transcript, template, ordered, messages, offset)
    first = page[0][0] if page else offset
    # As the whole rendering (presentation.training): the stored counts while current.
    stored = stored_tokens.trainable_counts(transcript)
    masks = training.page_masks(
        template,
        first,
        messages,
        convention,
        bounds,
        layout,
        tokenizer=dataset_tokenizer(transcript) if stored is None else None,
    )
    if stored is not None:
        masks = [
            dataclasses.replace(mask, trained_tokens=stored[mask.index] if mask.trained else 0)
            for mask in masks
        ]
    return masks


def _training(
    transcript: Transcript,
    template: formats.Transcript,
    rows,
    page: list[tuple[int, formats.Message]],
    offset: int,
    convention: str | None,
    out: dict[str, Any],
) -> dict[str, Any]:
    """The training rendering's fields of the page: each item's mask, the ``convention``,
    and ``trained_tokens``, the page's (the whole transcript's when it is one page)."""
    convention = convention_of(transcript, convention)
    ordered = rows.order_by("index")
    masks = page_training_masks(
        transcript, template, ordered, page, offset, convention, turn_bounds_of(ordered)
    )
    training.with_training(out["items"], masks)
    extra: dict[str, Any] = {"audience": TRAINING, "convention": convention}
    counted = training.trained_token_total(masks)
    if counted is not None:
        extra["trained_tokens"] = counted
    return extra
