"""What a training run computes loss on: a mask over a transcript's messages (docs/formats.md,
"Training masks").

Pure Python, no Django (the spec core). ``training_mask(transcript, convention)`` says, per
message, whether it is trained and why; for a text spec also where its parts are in the
serialized text (``header``, ``content``, ``end``) and which of those spans are trained; with
a tokenizer (any object with ``count(text)``), how many tokens are trained.

Conventions (``CONVENTIONS``):

``all_assistant``
    every assistant message, on every channel (SFT's usual "assistant only" loss);
``last_assistant_turn``
    only the assistant messages after the last message that is neither the assistant's nor
    a tool's reply (the final turn, its calls and analysis included);
``gpt_oss``
    the Harmony rule: every assistant message, except the analysis of a turn that ended in a
    final answer before the last turn began (gpt-oss drops it from later prompts, so it is
    never trained in context); analysis that led to a call not yet answered by a final
    answer is kept.

Which parts of a trained message count, as TRL's assistant-only masks do: the content and
the end token (``<|end|>``, ``<|return|>``, ``<|call|>``…) are trained, the header that opens
the turn (``<|start|>assistant<|channel|>final<|message|>``) is prompt, never trained.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any, Protocol

from .codecs.bodytext import logical_text
from .model import Message, Transcript
from .parsing import parse, serialize
from .render import ANNOTATOR, render
from .render.visibility import canonical_role
from .specs import TEXT_SPECS
from .validate.context import is_call, is_final, is_reply

ALL_ASSISTANT = "all_assistant"
LAST_ASSISTANT_TURN = "last_assistant_turn"
GPT_OSS = "gpt_oss"
CONVENTIONS = (ALL_ASSISTANT, LAST_ASSISTANT_TURN, GPT_OSS)
HARMONY = "harmony"
TRAINING = "training"  # the rendering's audience name

# Why a message is (not) trained, as the mask reports it.
TRAINED = "assistant message"
NOT_ASSISTANT = "not an assistant message"
BEFORE_LAST_TURN = "before the last assistant turn"
EARLIER_ANALYSIS = "analysis of an earlier turn that ended in a final answer (dropped)"

# A control token closing a message: <|end|>, <|im_end|>, <|return|>, [EOS] ….
END_TOKEN_RE = re.compile(r"(?:<\|[A-Za-z_]+\|>|\[[A-Z]+\])\s*\Z")


class Counter(Protocol):
    def count(self, text: str) -> int: ...


@dataclass(frozen=True)
class Part:
    """A piece of a message in the serialized text: ``text[start:end]``."""

    kind: str  # header | content | end
    start: int
    end: int
    trained: bool

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "start": self.start, "end": self.end, "trained": self.trained}


@dataclass(frozen=True)
class MessageMask:
    index: int
    role: str
    channel: str | None
    trained: bool
    reason: str
    parts: tuple[Part, ...] = ()  # text specs only
    trained_tokens: int | None = None  # with a tokenizer

    @property
    def spans(self) -> list[tuple[int, int]]:
        """The trained character spans of the serialized text."""
        return [(p.start, p.end) for p in self.parts if p.trained and p.end > p.start]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "role": self.role,
            "channel": self.channel,
            "trained": self.trained,
            "reason": self.reason,
        }
        if self.parts:
            out["parts"] = [p.to_dict() for p in self.parts]
            out["spans"] = [list(span) for span in self.spans]
        if self.trained_tokens is not None:
            out["trained_tokens"] = self.trained_tokens
        return out


def default_convention(spec: str) -> str:
    """gpt_oss for Harmony transcripts, all_assistant for every other spec."""
    return GPT_OSS if spec == HARMONY else ALL_ASSISTANT


def check_convention(convention: str) -> str:
    if convention not in CONVENTIONS:
        raise ValueError(
            f"unknown convention {convention!r}; expected one of {', '.join(CONVENTIONS)}"
        )
    return convention


def _is_assistant(role: str) -> bool:
    return canonical_role(role) == "assistant"


def last_turn_start(transcript: Transcript) -> int:
    """The index after the last message that is neither the assistant's nor a tool reply
    (0 when every message is)."""
    for i in range(len(transcript.messages) - 1, -1, -1):
        message = transcript.messages[i]
        if not _is_assistant(message.role) and not is_reply(message):
            return i + 1
    return 0


def _ends_turn(message) -> bool:
    """A final answer: an assistant message on final (or no channel) that is not a call."""
    return is_final(message) and not is_call(message)


@dataclass(frozen=True)
class TurnBounds:
    """What the conventions need to know of the whole transcript to judge one message."""

    last_turn_start: int  # ``last_turn_start``
    closed_before: int  # gpt_oss: the last final answer before the last turn (-1: none)


def turn_bounds(messages: Iterable[Message]) -> TurnBounds:
    """The bounds of ``messages`` in one pass that keeps no message: a transcript read a
    page of rows at a time is judged as a whole one is."""
    start, closed_before, last_final = 0, -1, -1
    for i, message in enumerate(messages):
        if not _is_assistant(message.role) and not is_reply(message):
            start, closed_before = i + 1, last_final
        elif _ends_turn(message) and _is_assistant(message.role):
            last_final = i
    return TurnBounds(start, closed_before)


def trained_flag(index: int, message: Message, convention: str, bounds: TurnBounds):
    """(trained, reason) of message ``index`` under ``convention``."""
    if not _is_assistant(message.role):
        return False, NOT_ASSISTANT
    if convention == LAST_ASSISTANT_TURN and index < bounds.last_turn_start:
        return False, BEFORE_LAST_TURN
    if convention == GPT_OSS and message.channel == "analysis" and index < bounds.closed_before:
        return False, EARLIER_ANALYSIS
    return True, TRAINED


def trained_flags(transcript: Transcript, convention: str) -> list[tuple[bool, str]]:
    """Per message: (trained, reason) under ``convention``."""
    check_convention(convention)
    bounds = turn_bounds(transcript.messages)
    return [
        trained_flag(i, message, convention, bounds)
        for i, message in enumerate(transcript.messages)
    ]


def training_mask(
    transcript: Transcript,
    convention: str | None = None,
    *,
    tokenizer: Counter | None = None,
    text: str | None = None,
) -> list[MessageMask]:
    """The mask of ``transcript`` under ``convention`` (its spec's default when None).

    For a text spec each mask has its ``parts`` in ``text`` (the transcript serialized when
    not given; it must be the transcript's own serialization); ``trained_tokens`` with a
    ``tokenizer``: the tokens of its trained spans (of its logical content, for a JSON spec).
    """
    convention = check_convention(convention or default_convention(transcript.spec))
    flags = trained_flags(transcript, convention)
    layout = message_parts(transcript, text) if transcript.spec in TEXT_SPECS else None
    masks = []
    for i, (message, (trained, reason)) in enumerate(zip(transcript.messages, flags, strict=True)):
        parts: tuple[Part, ...] = ()
        tokens = None
        if layout is not None:
            parts = tuple(
                Part(kind, a, b, trained and kind != "header") for kind, a, b in layout[1][i]
            )
        elif tokenizer is not None:
            tokens = (
                tokenizer.count(logical_text(transcript.spec, message.content)) if trained else 0
            )
        masks.append(MessageMask(i, message.role, message.channel, trained, reason, parts, tokens))
    if layout is not None and tokenizer is not None:
        masks = _with_tokens(masks, layout[0], tokenizer)
    return masks


def _with_tokens(masks: list[MessageMask], text: str, tokenizer: Counter) -> list[MessageMask]:
    """Each mask with the tokens of its trained parts: the tokens of the whole ``text`` that
    start inside them where the tokenizer can place its tokens (``segment_counts_batch``, as
    editor.formats.tokens counts), else the count of each trained span on its own."""
    parts = [p for m in masks for p in m.parts]
    segment = getattr(tokenizer, "segment_counts_batch", None)
    if segment is not None:
        cuts = sorted({c for p in parts for c in (p.start, p.end)} - {0, len(text)})
        pieces = segment([text], [cuts])[0]
        starts = [0, *cuts]
        by_start = dict(zip(starts, pieces, strict=True))

        def tokens_of(part: Part) -> int:
            return by_start.get(part.start, 0) if part.end > part.start else 0
    else:

        def tokens_of(part: Part) -> int:
            return tokenizer.count(text[part.start : part.end])

    return [
        dataclasses.replace(m, trained_tokens=sum(tokens_of(p) for p in m.parts if p.trained))
        for m in masks
    ]


def message_parts(
    transcript: Transcript, text: str | None = None
) -> tuple[str, list[list[tuple[str, int, int]]]] | None:
    """The serialized text and, per message, its (kind, start, end) header / content / end
    pieces; None when the text does not parse back into the same number of messages."""
    if text is None:
        text = serialize(transcript)
    parsed = parse(text, spec=transcript.spec).transcript
    if len(parsed.messages) != len(transcript.messages):
        return None
    bounds = []
    for message in parsed.messages:
        source = message.source
        if source is None:
            return None
        bounds.append(_pieces(text, source.begin, source.end, message.content))
    return text, bounds


def _pieces(text: str, begin: int, end: int, content: str) -> list[tuple[str, int, int]]:
    """Split ``text[begin:end]`` into header, content and end token. The content is the
    message's body as written; the end token is the closing control token (none for a
    message cut off). Where the body cannot be found the whole message is content."""
    raw = text[begin:end]
    closing = END_TOKEN_RE.search(raw)
    body_end = closing.start() if closing else len(raw)
    if content:
        at = raw.rfind(content, 0, body_end)
        if at == -1:
            return [("content", begin, end)]
        content_end = at + len(content)
    else:
        at = content_end = body_end
    pieces = [("header", begin, begin + at), ("content", begin + at, begin + content_end)]
    if content_end < len(raw):
        pieces.append(("end", begin + content_end, end))
    return pieces


def token_mask(
    transcript: Transcript,
    convention: str | None,
    tokenizer: Any,
    *,
    text: str | None = None,
) -> tuple[list[int], list[int]]:
    """The token ids of a text-spec transcript's serialization under ``tokenizer`` (an
    ``editor.formats.tokens`` tokenizer: ``encode`` and ``segment_counts_batch``) and, per
    token, 1 when it starts in a trained part: TRL's ``input_ids`` / ``assistant_masks``.
    ValueError for a JSON spec (no text to tokenize) or a text that does not parse back."""
    if transcript.spec not in TEXT_SPECS:
        raise ValueError(f"{transcript.spec} is not a text spec: no token mask")
    if text is None:
        text = serialize(transcript)
    masks = training_mask(transcript, convention, text=text)
    parts = [p for m in masks for p in m.parts]
    if len(parts) == 0 and transcript.messages:
        raise ValueError("the text does not parse back into its messages")
    cuts = sorted({c for p in parts for c in (p.start, p.end)} - {0, len(text)})
    counts = tokenizer.segment_counts_batch([text], [cuts])[0]
    trained_from = {p.start for p in parts if p.trained and p.end > p.start}
    flags: list[int] = []
    for start, count in zip([0, *cuts], counts, strict=True):
        flags.extend([int(start in trained_from)] * count)
    ids = tokenizer.encode(text)
    if len(ids) != len(flags):  # a tokenizer placing tokens unlike it encodes them
        raise ValueError("the tokenizer's token positions do not match its encoding")
    return ids, flags


def trained_token_total(masks: list[MessageMask]) -> int | None:
    counted = [m.trained_tokens for m in masks if m.trained_tokens is not None]
    return sum(counted) if counted else None


def render_training_text(
    transcript: Transcript,
    convention: str | None = None,
    *,
    terminal: bool = False,
    text: str | None = None,
) -> str:
    """Plain text for ``ocm render --audience training``: one block per message, labelled
    ``role/channel [trained]`` or ``[masked: reason]``. Every line of a masked block starts
    with ``│ `` so that masked text stays recognisable in a file or a diff; on a
    ``terminal`` masked blocks are also dimmed (ANSI)."""
    masks = training_mask(transcript, convention, text=text)
    blocks = []
    for mask, message in zip(masks, transcript.messages, strict=True):
        label = mask.role + (f"/{mask.channel}" if mask.channel else "")
        state = "trained" if mask.trained else f"masked: {mask.reason}"
        body = f"{label} [{state}]: {logical_text(transcript.spec, message.content)}"
        if not mask.trained:
            body = "\n".join("│ " + line for line in body.split("\n"))
            if terminal:
                body = f"{DIM}{body}{UNDIM}"
        blocks.append(body)
    return "\n\n".join(blocks) + ("\n" if blocks else "")


DIM, UNDIM = "\x1b[2m", "\x1b[0m"


def render_training(
    transcript: Transcript,
    convention: str | None = None,
    *,
    tokenizer: Counter | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """The ``training`` rendering (the API's): the annotator rendering, each item with
    ``trained``, ``trained_reason``, the ``parts`` / ``spans`` of a text spec (offsets into
    ``text``, the transcript's own serialization) and ``trained_tokens`` with a tokenizer;
    the ``convention`` used and the ``trained_tokens`` total when counted."""
    convention = check_convention(convention or default_convention(transcript.spec))
    rendered = render(transcript, ANNOTATOR).to_dict()
    masks = training_mask(transcript, convention, tokenizer=tokenizer, text=text)
    with_training(rendered["items"], masks)
    rendered["audience"] = TRAINING
    rendered["convention"] = convention
    total = trained_token_total(masks)
    if total is not None:
        rendered["trained_tokens"] = total
    return rendered


def training_json(
    transcript: Transcript, convention: str | None = None, *, text: str | None = None
) -> dict[str, Any]:
    """The mask as ``ocm render --audience training --json`` and the API give it."""
    convention = convention or default_convention(transcript.spec)
    masks = training_mask(transcript, convention, text=text)
    return {
        "audience": "training",
        "spec": transcript.spec,
        "convention": convention,
        "messages": [m.to_dict() for m in masks],
    }


# --- a page of the training rendering ---------------------------------------------------------
# A very long transcript is rendered a page of messages at a time (the API's offset/limit):
# what a page needs of the others is read from them a window at a time and not kept.

LAYOUT_WINDOW = 500  # messages serialized (and parsed back) at a time to find where a page is


@dataclass(frozen=True)
class PageLayout:
    """Where a page's messages are in the whole transcript's serialization, found without
    serializing the whole: ``text`` is the page written alone (the transcript's prologue,
    the page, the message after it), ``bounds`` each message's pieces in ``text`` and
    ``shift`` what turns an offset in ``text`` into one in the whole serialization."""

    text: str
    bounds: list[list[tuple[str, int, int]]]
    shift: int
    follow_begins_at: int | None  # where the message after the page begins in the whole text

    @property
    def begins_at(self) -> int:
        """Where the page's first message begins in the whole serialization."""
        return self.bounds[0][0][1] + self.shift


def _window(template: Transcript, messages: list[Message], follow: Message | None):
    """``messages`` (and ``follow``, the one after them) serialized alone: the text, the
    messages' pieces in it and where ``follow`` begins; None when it does not parse back."""
    written = dataclasses.replace(template, messages=[*messages, *([follow] if follow else [])])
    layout = message_parts(written)
    if layout is None:
        return None
    text, bounds = layout
    follow_begin = bounds[len(messages)][0][1] if follow is not None else None
    return text, bounds[: len(messages)], follow_begin


def page_layout(
    template: Transcript,
    before: Iterable[Message],
    page: list[Message],
    follow: Message | None,
    *,
    begins_at: int | None = None,
) -> PageLayout | None:
    """The layout of ``page`` in the serialization of ``template`` (its spec, header and
    attrs) with ``before`` (every message before the page, in order), ``page`` and the
    messages after it (``follow`` the first of them). None for a JSON spec or a text that
    does not parse back. With ``begins_at`` (where ``before``'s first message begins in the
    whole text, as an earlier layout found it: ``PageLayout.begins_at`` or
    ``follow_begins_at``), ``before`` may start at that message instead of the first.

    Each window of ``before`` is written with the message after it, so that what a writer
    puts between two messages, or after the last one only, is as in the whole text: the
    serialization of a text spec is its prologue, then each message and what follows it
    (tests/api/test_render_paging.py holds every spec's fixtures to it).
    """
    if template.spec not in TEXT_SPECS or not page:
        return None
    base = begins_at  # where the next window of ``before`` begins in the whole text
    remaining = iter(before)
    window = list(islice(remaining, LAYOUT_WINDOW))
    while window:
        after = list(islice(remaining, LAYOUT_WINDOW))
        follow_window = after[0] if after else page[0]
        if base is None:  # the first window, read back: where the prologue ends is in it
            written = _window(template, window, follow_window)
            if written is None:
                return None
            base = written[2]
        else:
            base += _written_length(template, window, follow_window)
        window = after
    written = _window(template, page, follow)
    if written is None:
        return None
    text, bounds, follow_begin = written
    shift = 0 if base is None else base - bounds[0][0][1]
    return PageLayout(text, bounds, shift, None if follow_begin is None else follow_begin + shift)


def parsed_page_layout(text: str, page: list[Message]) -> PageLayout | None:
    """The layout of ``page``, messages parsed from ``text`` (a text held whole: the one
    posted to ``POST /render``), in ``text`` itself: each message's pieces as
    ``message_parts`` finds them, read from the sources the parse kept (no second parse).
    None for an empty page or a message with no source."""
    bounds = []
    for message in page:
        source = message.source
        if source is None:
            return None
        bounds.append(_pieces(text, source.begin, source.end, message.content))
    return PageLayout(text, bounds, 0, None) if bounds else None


def _written_length(template: Transcript, messages: list[Message], follow: Message) -> int:
    """How much of the whole text ``messages`` take, ``follow`` coming after them: written
    with and without them, the difference (no parse: the before-page windows need only
    their length)."""

    def length(written: list[Message]) -> int:
        return len(serialize(dataclasses.replace(template, messages=written)))

    return length([*messages, follow]) - length([follow])


def page_masks(
    template: Transcript,
    first_index: int,
    page: list[Message],
    convention: str,
    bounds: TurnBounds,
    layout: PageLayout | None,
    *,
    tokenizer: Counter | None = None,
) -> list[MessageMask]:
    """The masks of ``page`` (messages ``first_index``…), as ``training_mask`` gives them for
    the whole transcript: its ``bounds`` (``turn_bounds``) and the page's ``layout``."""
    masks = []
    for offset, message in enumerate(page):
        index = first_index + offset
        trained, reason = trained_flag(index, message, convention, bounds)
        parts: tuple[Part, ...] = ()
        tokens = None
        if layout is not None:
            parts = tuple(
                Part(kind, a, b, trained and kind != "header")
                for kind, a, b in layout.bounds[offset]
            )
        elif tokenizer is not None:
            tokens = tokenizer.count(logical_text(template.spec, message.content)) if trained else 0
        masks.append(
            MessageMask(index, message.role, message.channel, trained, reason, parts, tokens)
        )
    if layout is None:
        return masks
    if tokenizer is not None:
        masks = _with_tokens(masks, layout.text, tokenizer)
    return [
        dataclasses.replace(
            m,
            parts=tuple(
                dataclasses.replace(p, start=p.start + layout.shift, end=p.end + layout.shift)
                for p in m.parts
            ),
        )
        for m in masks
    ]


def with_training(items: list[dict[str, Any]], masks: list[MessageMask]) -> list[dict[str, Any]]:
    """Annotator items (``RenderedItem.to_dict``) with their masks' ``trained``,
    ``trained_reason``, ``parts``, ``spans`` and ``trained_tokens``."""
    by_index = {mask.index: mask.to_dict() for mask in masks}
    for item in items:
        mask = by_index[item["index"]]
        item["trained"] = mask["trained"]
        item["trained_reason"] = mask["reason"]
        for key in ("parts", "spans", "trained_tokens"):
            if key in mask:
                item[key] = mask[key]
    return items
