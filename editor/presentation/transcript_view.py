"""What the transcript page shows of a transcript: message cards, a page at a time.

No rules here: visibility is ``formats.render``'s, call pairing ``formats.pairing``'s; this
module cuts the rendered transcript into pages, links calls with their replies, counts each
message's diagnostics and names the editor's form fields in the transcript's own spec's words.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from itertools import pairwise

from editor import formats
from editor.formats.model import SEMANTIC_FIELDS
from editor.formats.render import ANNOTATOR, DEBUG, END_USER, RenderedItem, render, token_spans
from editor.formats.validate.pairing import pair_calls
from editor.labels import annotations
from editor.models import Transcript
from editor.presentation.display import Part, Turn, display_turns
from editor.presentation.source_window import is_windowed, source_window
from editor.presentation.training import TRAINING, convention_of, training_masks

PAGE_SIZE = 50

# A message's canonical fields besides its body, in the form's order: the spec's own first
# (``SpecInfo.fields``), the others under "More fields" (the model is a superset of every spec).
EVERY_FIELD = tuple(name for name in SEMANTIC_FIELDS if name != "content")


@dataclass
class MessageCard:
    """One canonical message as the page shows it."""

    item: RenderedItem
    badges: tuple = ()  # (label, value) in the spec's own words (editor.formats.as_written)
    answers: int | None = None  # a reply: the index of the call it answers
    replies: list[int] = field(default_factory=list)  # a call: the indexes of its replies
    errors: int = 0
    warnings: int = 0
    trained: object = None  # the training rendering: its editor.formats.training.MessageMask

    @property
    def index(self) -> int:
        return self.item.index


@dataclass
class TurnView:
    """One message of the file: one card, or several where the spec's file message holds
    several canonical ones (an OpenAI assistant message with reasoning and tool calls)."""

    number: int  # 1-based, among the file's messages
    role: str  # as the file writes it
    cards: list[MessageCard]

    @property
    def grouped(self) -> bool:
        return len(self.cards) > 1


@dataclass
class FormField:
    name: str
    label: str
    value: str
    primary: bool
    choices: tuple[str, ...] = ()  # the spec's own words for it, offered as a combobox


def _choices(info, name: str) -> tuple[str, ...]:
    vocabulary = info.vocabulary
    return {
        "role": vocabulary.roles,
        "channel": vocabulary.channels,
        "recipient": vocabulary.recipients,
    }.get(name, ())


@dataclass
class TranscriptView:
    """The rendered transcript as turns of cards, a page at a time: ``page(n)`` builds the
    cards of page ``n`` only, so that a page of a 10,000-message transcript costs what a page
    of a short one does (beyond rendering and grouping, which are linear and cheap)."""

    transcript: Transcript
    audience: str
    display: list[Turn]
    source: str | None = None
    spans: tuple = ()
    pairs: dict[int, int] = field(default_factory=dict)  # a reply's index: its call's
    replies: dict[int, list[int]] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)  # (index, severity): diagnostics
    convention: str | None = None  # the training rendering's
    masks: list = field(default_factory=list)  # the training rendering's, by message index

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.display) // PAGE_SIZE))

    def page(self, number: int) -> list[TurnView]:
        return self.pages(number, number)

    def pages(self, first: int, last: int) -> list[TurnView]:
        """The turns of pages ``first`` to ``last``, both included."""
        return [
            self._turn(turn) for turn in self.display[first * PAGE_SIZE : (last + 1) * PAGE_SIZE]
        ]

    def page_holding(self, index: int) -> int:
        """The page on which message ``index`` is shown (or would be, were it visible): the
        last page when it is past the end."""
        position = next(
            (n for n, turn in enumerate(self.display) if turn.parts[-1].item.index >= index),
            len(self.display) - 1,
        )
        return max(position, 0) // PAGE_SIZE

    def card(self, index: int) -> MessageCard | None:
        for turn in self.display:
            for part in turn.parts:
                if part.item.index == index:
                    return self._card(part, len(turn.parts))
        return None

    def _turn(self, turn: Turn) -> TurnView:
        return TurnView(
            turn.number, turn.role, [self._card(part, len(turn.parts)) for part in turn.parts]
        )

    def _card(self, part: Part, parts: int) -> MessageCard:
        index = part.item.index
        return MessageCard(
            part.item,
            badges=_badges(part.badges, parts),
            answers=self.pairs.get(index),
            replies=self.replies.get(index, []),
            errors=self.counts.get((index, "error"), 0),
            warnings=self.counts.get((index, "warning"), 0),
            trained=self.masks[index] if self.masks else None,
        )


# The views of long transcripts are kept, per process, for the requests that follow the first
# (the next page as the list scrolls, G, the go-to box, a card after a save of another
# message's labels): a version's view never changes. Bounded by the messages held, all views
# together; shorter transcripts render afresh faster than the bound is worth.
CACHED_VIEW_MIN_MESSAGES = 500
CACHED_VIEWS_MAX_MESSAGES = 30_000
_views: OrderedDict[tuple, TranscriptView] = OrderedDict()
_views_lock = threading.Lock()


def transcript_view(
    transcript: Transcript, audience: str, convention: str | None = None
) -> TranscriptView:
    """``transcript`` rendered for ``audience`` (which the caller checked the user may see),
    in turns as its file has them; ``training``: the annotator's rendering with each card's
    mask under ``convention`` (the spec's default when None; editor.presentation.training)."""
    if audience == TRAINING:
        convention = convention_of(transcript, convention)
    if transcript.message_count < CACHED_VIEW_MIN_MESSAGES:
        return _view(transcript, audience, convention)
    key = (transcript.pk, transcript.created_at, transcript.version, audience, convention)
    with _views_lock:
        view = _views.get(key)
        if view is not None:
            _views.move_to_end(key)
            return view
    view = _view(transcript, audience, convention)
    with _views_lock:
        _views[key] = view
        held = sum(v.transcript.message_count for v in _views.values())
        while held > CACHED_VIEWS_MAX_MESSAGES and len(_views) > 1:
            _, oldest = _views.popitem(last=False)
            held -= oldest.transcript.message_count
    return view


def _view(transcript: Transcript, audience: str, convention: str | None = None) -> TranscriptView:
    canonical = formats.Transcript(
        spec=transcript.spec,
        header=transcript.header,
        messages=transcript.stored_messages(),
        attrs=transcript.attrs,
    )
    masks = []
    if audience == TRAINING:
        masks = training_masks(transcript, convention, canonical=canonical)
    shown_as = ANNOTATOR if audience == TRAINING else audience
    source_text = transcript.source_text or None
    if audience == DEBUG and source_text is not None and is_windowed(source_text):
        # A source too long to edit whole is too long to highlight whole in the page (a mark
        # per control token: 106 MB of HTML for 19.5 MB): its first part is shown, and the
        # source page has the rest, a part at a time (presentation.source_window).
        rendered = render(canonical, ANNOTATOR)
        window = source_window(source_text, transcript.spec)
        source, spans = window.text, tuple(token_spans(window.text, transcript.spec))
    else:
        rendered = render(canonical, shown_as, source_text=source_text)
        source, spans = rendered.source, rendered.spans
    pairs = pair_calls(canonical.messages) if audience != END_USER else {}
    return TranscriptView(
        transcript,
        audience,
        display_turns(canonical, rendered, source_text=transcript.source_text),
        source,
        spans,
        pairs=pairs,
        replies=_replies_by_call(pairs),
        counts=_diagnostic_counts(transcript.diagnostics) if audience != END_USER else Counter(),
        convention=convention if audience == TRAINING else None,
        masks=masks,
    )


def _badges(badges: tuple, parts: int) -> tuple:
    """A part's badges; a lone part needs no "content" badge to say which field it is."""
    if parts == 1:
        return tuple(b for b in badges if not (b.label == "content" and b.value is None))
    return badges


def _replies_by_call(pairs: dict[int, int]) -> dict[int, list[int]]:
    """The replies to each call, in order (``pairs`` maps a reply to its call): found once, not
    once a card (which would be quadratic in the transcript's length)."""
    replies: dict[int, list[int]] = {}
    for reply, call in sorted(pairs.items()):
        replies.setdefault(call, []).append(reply)
    return replies


def _diagnostic_counts(diagnostics: list[dict]) -> Counter:
    return Counter((d.get("message_index"), d["severity"]) for d in diagnostics)


def ordered_diagnostics(diagnostics: list[dict]) -> list[dict]:
    """In document order: by message, then position (transcript-wide ones first)."""
    return sorted(
        diagnostics,
        key=lambda d: (
            -1 if d.get("message_index") is None else d["message_index"],
            d.get("offset", 0),
        ),
    )


def form_fields(spec: str, message: formats.Message) -> list[FormField]:
    """The editor form's fields for ``message`` (content apart), labelled in ``spec``'s words;
    a secondary field that holds a value is shown as primary, so nothing set is tucked away."""
    info = formats.spec_info(spec)
    fields = []
    for name in EVERY_FIELD:
        value = getattr(message, name)
        if name == "attrs":
            text = json.dumps(value, ensure_ascii=False, indent=2) if value else ""
        else:
            text = "" if value is None else value
        fields.append(
            FormField(
                name,
                info.label(name),
                text,
                name in info.fields or (name not in ("end", "attrs") and value is not None),
                _choices(info, name),
            )
        )
    return fields


def end_choices(spec: str) -> list[tuple[str, str]]:
    """The terminator choices, ``(value, label)`` in ``spec``'s words ("" for cut off)."""
    return list(formats.spec_info(spec).end_labels.items())


MARKDOWN_CHANNELS = (None, "final")


def body_kind(item: RenderedItem) -> str:
    """How a body is shown: ``markdown`` for what an assistant says to the user, ``json`` for
    JSON bodies (calls, tool results), ``text`` for everything else (shown as written)."""
    stripped = item.content.lstrip()
    if stripped[:1] in ("{", "[") and item.constrain != "text":
        return "json"
    if item.role == "assistant" and (
        item.channel in MARKDOWN_CHANNELS or item.intent == "preamble"
    ):
        return "markdown"
    return "text"


@dataclass
class MessageLabels:
    """The label questions about one message and the user's answers, for its card."""

    questions: list[dict] = field(default_factory=list)  # {schema, question, value}
    tags: list[dict] = field(default_factory=list)  # {schema, question, tag}: span tags
    spans: list = field(default_factory=list)  # the user's span annotations, by start

    @property
    def spannable(self) -> bool:
        return bool(self.tags)


def message_labels(transcript: Transcript, user, asked=None) -> dict[int, MessageLabels]:
    """For every message some question ``asked`` ((schema, question) pairs; by default every
    active one about messages) applies to: those questions, ``user``'s answers, and their span
    tags (empty when nothing is asked about messages)."""
    if asked is None:
        asked = annotations.active_questions(transcript.dataset, "message")
    if not asked:
        return {}
    mine = annotations.my_answers(transcript, user)
    spans: dict[int, list] = {}
    for span in (
        transcript.annotations.filter(annotator=user, start__isnull=False)
        .exclude(anchor_state="orphaned")
        .order_by("start")
    ):
        spans.setdefault(span.message_index, []).append(span)
    out: dict[int, MessageLabels] = {}
    for index, message in enumerate(transcript.stored_messages()):
        labels = MessageLabels(spans=spans.get(index, []))
        for schema, question in asked:
            if not question.applies_to_message(message):
                continue
            if question.kind == "span":
                labels.tags += [
                    {"schema": schema, "question": question, "tag": t} for t in question.tags
                ]
                continue
            answer = mine.get((index, schema.current_version_id, question.key))
            labels.questions.append(
                {"schema": schema, "question": question, "value": getattr(answer, "value", None)}
            )
        if labels.questions or labels.tags or labels.spans:
            out[index] = labels
    return out


def span_segments(text: str, spans) -> list[tuple[str, list]]:
    """``text`` cut where spans start and end: (piece, the spans covering it) pairs, so that
    overlapping tags show as nested highlights without moving a character."""
    cuts = sorted({0, len(text), *(s.start for s in spans), *(s.end for s in spans)})
    pieces = []
    for begin, end in pairwise(cuts):
        if begin < end:
            covering = [s for s in spans if s.start <= begin and end <= s.end]
            pieces.append((text[begin:end], covering))
    return pieces
