"""What the transcript page shows of a transcript: message cards, a page at a time.

No rules here: visibility is ``formats.render``'s, call pairing ``formats.pairing``'s; this
module cuts the rendered transcript into pages, links calls with their replies, counts each
message's diagnostics and names the editor's form fields in the transcript's own spec's words.
"""

from __future__ import annotations

import json
import threading
from bisect import bisect_left
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import NamedTuple

from editor import formats
from editor import tokens as stored_tokens
from editor.formats import training
from editor.formats.model import SEMANTIC_FIELDS
from editor.formats.render import (
    ANNOTATOR,
    DEBUG,
    END_USER,
    RenderedItem,
    render,
    render_item,
    token_spans,
)
from editor.formats.validate.pairing import pair_calls
from editor.labels import annotations
from editor.models import Message, Transcript
from editor.presentation.display import Part, Turn, display_turns, file_turn
from editor.presentation.render_pages import (
    ROW_CHUNK,
    messages_of,
    page_training_masks,
)
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

    @property
    def held(self) -> int:
        """What it weighs among the views kept: its messages."""
        return self.transcript.message_count

    @property
    def trained_tokens(self) -> int | None:
        """The training rendering's trained tokens in all (None: not counted)."""
        return training.trained_token_total(self.masks)

    def _turn(self, turn: Turn) -> TurnView:
        masks = self.masks
        return _turn_view(self, turn, lambda index: masks[index] if masks else None)

    def _card(self, part: Part, parts: int) -> MessageCard:
        index = part.item.index
        return _card(self, part, parts, self.masks[index] if self.masks else None)


def _turn_view(view, turn: Turn, mask_of) -> TurnView:
    return TurnView(
        turn.number,
        turn.role,
        [_card(view, part, len(turn.parts), mask_of(part.item.index)) for part in turn.parts],
    )


def _card(view, part: Part, parts: int, mask) -> MessageCard:
    """The card of ``part`` (one of ``parts`` of its turn) with ``view``'s facts about its
    message: the calls and replies it pairs with, its diagnostics, its training ``mask``."""
    index = part.item.index
    return MessageCard(
        part.item,
        badges=_badges(part.badges, parts),
        answers=view.pairs.get(index),
        replies=view.replies.get(index, []),
        errors=view.counts.get((index, "error"), 0),
        warnings=view.counts.get((index, "warning"), 0),
        trained=mask,
    )


class _Facts(NamedTuple):
    """What call pairing (``formats.validate.pairing``) and the training conventions'
    bounds (``formats.training.turn_bounds``) read of a message: no content."""

    role: str
    channel: str | None
    recipient: str | None
    call_id: str | None
    name: str | None
    end: str | None


FACT_FIELDS = _Facts._fields


@dataclass
class PagedView:
    """A long transcript's view built from its message rows a page at a time
    (``PAGED_VIEW_MIN_MESSAGES``): the same pages, turns and cards as ``TranscriptView``'s,
    with no request holding more than a page of messages. What a card needs of the whole
    transcript comes from light queries: the pairs of calls and replies and the training
    bounds from a few short columns of every row (``FACT_FIELDS``), the diagnostics counts
    from the stored diagnostics, the end user's turns from the rows' ``end_user_text``.

    Only for specs whose file message is one canonical message (``SpecInfo.splits_messages``
    false): a turn is then its message, numbered by its index, and no turn crosses a page."""

    transcript: Transcript
    audience: str
    shown: list[int] | None = None  # end_user: the indexes of the messages shown; else all
    source: str | None = None
    spans: tuple = ()
    pairs: dict[int, int] = field(default_factory=dict)
    replies: dict[int, list[int]] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)
    convention: str | None = None
    bounds: training.TurnBounds | None = None  # training: the whole transcript's
    trained_tokens: int | None = None  # training: from the stored counts while current

    @property
    def held(self) -> int:
        """What it weighs among the views kept (``FACTS_PER_MESSAGE``)."""
        facts = len(self.pairs) + len(self.replies) + len(self.counts) + len(self.shown or ())
        return 1 + facts // FACTS_PER_MESSAGE

    @property
    def page_count(self) -> int:
        shown = self.transcript.message_count if self.shown is None else len(self.shown)
        return max(1, -(-shown // PAGE_SIZE))

    def page(self, number: int) -> list[TurnView]:
        return self.pages(number, number)

    def pages(self, first: int, last: int) -> list[TurnView]:
        """The turns of pages ``first`` to ``last``, both included: their rows alone."""
        start, stop = first * PAGE_SIZE, (last + 1) * PAGE_SIZE
        if start < 0 or stop <= start:
            return []
        rows = self._rows()
        if self.shown is None:
            rows = rows.filter(index__gte=start, index__lt=stop)
        else:
            wanted = self.shown[start:stop]
            if not wanted:
                return []
            rows = rows.filter(index__gte=wanted[0], index__lte=wanted[-1])
        return self._turns(list(messages_of(self.transcript, rows.order_by("index"))))

    def page_holding(self, index: int) -> int:
        """As ``TranscriptView.page_holding``: the page of the first turn shown at or after
        message ``index``; the last page when it is past the end."""
        if self.shown is None:
            position = min(index, self.transcript.message_count - 1)
        else:
            position = min(bisect_left(self.shown, index), len(self.shown) - 1)
        return max(position, 0) // PAGE_SIZE

    def card(self, index: int) -> MessageCard | None:
        if index < 0:
            return None
        page = list(messages_of(self.transcript, self._rows().filter(index=index)))
        turns = self._turns(page)
        return turns[0].cards[0] if turns else None

    def _rows(self):
        rows = Message.objects.filter(transcript=self.transcript)
        if self.audience == END_USER:
            rows = rows.exclude(end_user_text="")  # NULL (the whole content) is visible too
        return rows

    def _turns(self, page: list[tuple[int, formats.Message]]) -> list[TurnView]:
        """The turns of ``page`` ((index, message) pairs, in order): one a message."""
        transcript = self.transcript
        read = formats.Transcript(
            spec=transcript.spec,
            header=transcript.header,
            messages=[message for _, message in page],
            attrs=transcript.attrs,
        )
        shown_as = ANNOTATOR if self.audience == TRAINING else self.audience
        items = {
            position: item
            for position, (index, message) in enumerate(page)
            if (item := render_item(read, index, message, shown_as)) is not None
        }
        masks = {}
        if self.audience == TRAINING and page:
            ordered = Message.objects.filter(transcript=transcript).order_by("index")
            found = page_training_masks(
                transcript, read, ordered, page, page[0][0], self.convention, self.bounds
            )
            masks = {mask.index: mask for mask in found}
        turns = (
            file_turn(read, index + 1, [position], items, end_user=self.audience == END_USER)
            for position, (index, _) in enumerate(page)
        )
        return [_turn_view(self, turn, masks.get) for turn in turns if turn is not None]


def pages_from_rows(transcript: Transcript, audience: str) -> bool:
    """Whether ``transcript`` is shown to ``audience`` a page of rows at a time
    (``PagedView``) rather than rendered whole (``TranscriptView``)."""
    return (
        transcript.message_count >= PAGED_VIEW_MIN_MESSAGES
        and not formats.spec_info(transcript.spec).splits_messages
        and (audience != DEBUG or bool(transcript.source_text))
    )


def _paged_view(transcript: Transcript, audience: str, convention: str | None) -> PagedView:
    view = PagedView(transcript, audience, convention=convention)
    if audience == END_USER:
        view.shown = list(
            Message.objects.filter(transcript=transcript)
            .exclude(end_user_text="")
            .order_by("index")
            .values_list("index", flat=True)
            .iterator(chunk_size=ROW_CHUNK)
        )
        return view
    view.counts = _diagnostic_counts(transcript.diagnostics)
    facts = _facts(transcript)
    view.pairs = pair_calls(facts)
    view.replies = _replies_by_call(view.pairs)
    if audience == DEBUG:
        view.source, view.spans = _debug_source(transcript)
    elif audience == TRAINING:
        view.bounds = training.turn_bounds(facts)
        view.trained_tokens = _trained_tokens(transcript, facts, convention, view.bounds)
    return view


def _facts(transcript: Transcript) -> list[_Facts]:
    """Every message's ``FACT_FIELDS``, in order; a word that recurs (roles, channels) is
    held once, however many rows spell it."""
    held: dict[str, str] = {}
    word = held.setdefault
    rows = (
        Message.objects.filter(transcript=transcript)
        .order_by("index")
        .values_list(*FACT_FIELDS)
        .iterator(chunk_size=ROW_CHUNK)
    )
    return [
        _Facts(
            word(role, role),
            channel and word(channel, channel),
            recipient and word(recipient, recipient),
            call_id,
            name and word(name, name),
            end and word(end, end),
        )
        for role, channel, recipient, call_id, name, end in rows
    ]


def _trained_tokens(
    transcript: Transcript, facts: list[_Facts], convention: str, bounds: training.TurnBounds
) -> int | None:
    """The trained tokens in all, from the stored counts while they are current (None
    otherwise: counting every message is what a page spares; each card counts its own)."""
    stored = stored_tokens.trainable_counts(transcript)
    if stored is None:
        return None
    return sum(
        stored[index]
        for index, message in enumerate(facts)
        if training.trained_flag(index, message, convention, bounds)[0]
    )


def _debug_source(transcript: Transcript) -> tuple[str, tuple]:
    """The source as the debug rendering shows it: its first part when it is too long to
    highlight whole (``source_window``), else all of it, with its control-token spans."""
    source_text = transcript.source_text
    if is_windowed(source_text):
        source_text = source_window(source_text, transcript.spec).text
    return source_text, tuple(token_spans(source_text, transcript.spec))


# The views of long transcripts are kept, per process, for the requests that follow the first
# (the next page as the list scrolls, G, the go-to box, a card after a save of another
# message's labels): a version's view never changes. Bounded by the messages held, all views
# together (a ``PagedView`` holds no message: its facts, a few numbers a message, count as
# ``FACTS_PER_MESSAGE`` to a message); shorter transcripts render afresh faster than the
# bound is worth.
CACHED_VIEW_MIN_MESSAGES = 500
FACTS_PER_MESSAGE = 20
CACHED_VIEWS_MAX_MESSAGES = 30_000
_views: OrderedDict[tuple, TranscriptView | PagedView] = OrderedDict()
_views_lock = threading.Lock()


# Transcripts of this many messages or more are shown from their rows a page at a time
# (``PagedView``), when their spec's file messages are one canonical message each: rendering
# and grouping the whole transcript cost 1.6-2.1 s and 72 MB at 50,000 messages.
PAGED_VIEW_MIN_MESSAGES = 2_000


def transcript_view(
    transcript: Transcript, audience: str, convention: str | None = None
) -> TranscriptView | PagedView:
    """``transcript`` rendered for ``audience`` (which the caller checked the user may see),
    in turns as its file has them; ``training``: the annotator's rendering with each card's
    mask under ``convention`` (the spec's default when None; editor.presentation.training).
    A long transcript is a ``PagedView``: built a page at a time from its rows."""
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
    if pages_from_rows(transcript, audience):
        view = _paged_view(transcript, audience, convention)
    else:
        view = _view(transcript, audience, convention)
    with _views_lock:
        _views[key] = view
        held = sum(v.held for v in _views.values())
        while held > CACHED_VIEWS_MAX_MESSAGES and len(_views) > 1:
            _, oldest = _views.popitem(last=False)
            held -= oldest.held
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


def message_labels(
    transcript: Transcript, user, asked=None, *, decorate=None
) -> dict[int, MessageLabels] | LabelsByPage:
    """For every message some question ``asked`` ((schema, question) pairs; by default every
    active one about messages) applies to: those questions, ``user``'s answers, and their span
    tags (empty when nothing is asked about messages). ``decorate``: called on each batch of
    labels found (``assist.suggestions.with_message_suggestions`` adds the model's
    suggestions). A long transcript's (``PAGED_VIEW_MIN_MESSAGES``) are found a page of
    messages at a time, as its cards ask (``LabelsByPage``)."""
    if asked is None:
        asked = annotations.active_questions(transcript.dataset, "message")
    if not asked:
        return {}
    if transcript.message_count >= PAGED_VIEW_MIN_MESSAGES:
        return LabelsByPage(transcript, user, asked, decorate)
    found = _labels(transcript, user, asked, annotations.my_answers(transcript, user))
    return decorate(found) if decorate is not None else found


def _labels(transcript: Transcript, user, asked, mine: dict, within: range | None = None):
    """``message_labels`` of the messages ``within`` (all when None)."""
    rows = Message.objects.filter(transcript=transcript)
    spans_asked = transcript.annotations.filter(annotator=user, start__isnull=False)
    if within is not None:
        rows = rows.filter(index__gte=within.start, index__lt=within.stop)
        spans_asked = spans_asked.filter(
            message_index__gte=within.start, message_index__lt=within.stop
        )
    spans: dict[int, list] = {}
    for span in spans_asked.exclude(anchor_state="orphaned").order_by("start"):
        spans.setdefault(span.message_index, []).append(span)
    out: dict[int, MessageLabels] = {}
    # What a question reads of a message to know whether it applies: its role and channel.
    for index, role, channel in rows.order_by("index").values_list("index", "role", "channel"):
        message = formats.Message(role, channel=channel)
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


class LabelsByPage:
    """``message_labels`` of a long transcript, found for a page of messages (``PAGE_SIZE``
    indexes) when a card of that page first asks (``get``): no request reads the labels of
    every message. Truthy: there are questions about messages."""

    def __init__(self, transcript: Transcript, user, asked, decorate=None):
        self.transcript, self.user, self.asked, self.decorate = transcript, user, asked, decorate
        self._mine: dict | None = None
        self._found: dict[int, MessageLabels] = {}
        self._pages: set[int] = set()

    def __bool__(self) -> bool:
        return True

    def get(self, index, default=None):
        if not isinstance(index, int) or index < 0:
            return default
        page = index // PAGE_SIZE
        if page not in self._pages:
            self._pages.add(page)
            if self._mine is None:
                self._mine = annotations.my_answers(self.transcript, self.user)
            within = range(page * PAGE_SIZE, (page + 1) * PAGE_SIZE)
            found = _labels(self.transcript, self.user, self.asked, self._mine, within)
            if found and self.decorate is not None:
                found = self.decorate(found)
            self._found.update(found)
        return self._found.get(index, default)

    def __getitem__(self, index):
        found = self.get(index)
        if found is None:
            raise KeyError(index)
        return found


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
