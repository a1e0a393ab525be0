"""Role-aware rendering: the one pure function behind the HTML views, the API and exports.

``render(transcript, audience)``:

| audience | items | extra |
|---|---|---|
| ``end_user`` | only what ``visibility.visibility`` allows, with hidden parts removed from the text | — |
| ``annotator`` | every message, each marked ``visible_to_end_user`` with the reason | ``end_user_content`` per visible item |
| ``debug`` | as annotator | the raw source and the spans of its control tokens |

Hidden content is absent from an ``end_user`` result, not flagged: nothing of a hidden
message (not even its role or index) and nothing of a stripped part is in it.

``next_turn_prompt`` applies the CoT retention rule (2.2 §7, HIP-1 §7) and ``render_text`` is
the plain-text form ``ocm render`` prints.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from ..codecs import v01body
from ..codecs.bodytext import OCM22, logical_text
from ..codecs.scanner import ESCAPE, LITERAL, UNKNOWN, UNTERMINATED_LITERAL, scan
from ..model import Message, Transcript
from ..parsing import serialize
from ..stream import iter_messages, message_cuts
from ..validate.context import is_call
from .visibility import V01, visibility

END_USER = "end_user"
ANNOTATOR = "annotator"
DEBUG = "debug"
AUDIENCES = (END_USER, ANNOTATOR, DEBUG)

# Every control-token name of every supported text spec, for the debug highlighting.
ALL_TOKEN_NAMES = frozenset(
    {
        # OpenChatML 2.x / Harmony
        "start", "channel", "message", "call", "constrain", "return", "end", "literal", "endliteral",
        "start_reflect", "start_introspect", "start_reason",
        # ChatML
        "end_message",
        # OpenChatML 0.1
        "im_start", "im_end", "fim_prefix", "fim_middle", "fim_suffix", "file_separator",
        *v01body.VOCABULARY,
        # MMS tokens
        "role", "name", "format", "content", "end_turn",
    }
)  # fmt: skip
V01_SEQUENCE_MARKERS = ("[BOS]", "[EOS]")
SPAN_KINDS = {
    ESCAPE: "escape",
    LITERAL: "literal",
    UNTERMINATED_LITERAL: "literal",
    UNKNOWN: "unknown-token",
}
OPTIONAL_FIELDS = ("name", "recipient", "call_id", "intent", "content_type", "constrain", "end")


@dataclass(frozen=True)
class RenderedItem:
    index: int  # the message's index in the transcript
    role: str
    channel: str | None
    content: str  # logical text: for end users only the visible part
    visible_to_end_user: bool
    reason: str
    name: str | None = None
    recipient: str | None = None
    call_id: str | None = None
    intent: str | None = None
    content_type: str | None = None
    constrain: str | None = None
    end: str | None = None
    end_user_content: str | None = None  # annotator/debug: what the end user sees of it

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Span:
    """A control token (or escape, literal block, unknown token) in the debug source."""

    start: int
    end: int
    kind: str  # token / escape / literal / unknown-token / marker
    text: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class RenderedTranscript:
    audience: str
    spec: str
    items: tuple[RenderedItem, ...]
    source: str | None = None  # debug only
    spans: tuple[Span, ...] = ()  # debug only

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "audience": self.audience,
            "spec": self.spec,
            "items": [item.to_dict() for item in self.items],
        }
        if self.audience == DEBUG:
            out["source"] = self.source
            out["spans"] = [span.to_dict() for span in self.spans]
        return out


def render(
    transcript: Transcript, audience: str = END_USER, *, source_text: str | None = None
) -> RenderedTranscript:
    """Render ``transcript`` for ``audience`` (see the module docstring)."""
    if audience not in AUDIENCES:
        raise ValueError(f"unknown audience {audience!r}; expected one of {', '.join(AUDIENCES)}")
    items = []
    for index, message in enumerate(transcript.messages):
        item = render_item(transcript, index, message, audience)
        if item is not None:
            items.append(item)
    if audience != DEBUG:
        return RenderedTranscript(audience, transcript.spec, tuple(items))
    source = source_text if source_text is not None else _source_of(transcript)
    return RenderedTranscript(
        audience, transcript.spec, tuple(items), source, tuple(token_spans(source, transcript.spec))
    )


def render_item(
    transcript: Transcript, index: int, message: Message, audience: str
) -> RenderedItem | None:
    """Message ``index`` as ``audience`` sees it, None when hidden from an end user.

    Only ``transcript.spec`` is read of ``transcript`` (``visibility``): an item depends on
    its own message alone, so a page of items is rendered from the page's messages
    (``editor.presentation.render_pages``)."""
    seen = visibility(transcript, message)
    if audience == END_USER:
        if not seen.visible:
            return None
        return RenderedItem(
            index,
            message.role,
            message.channel,
            seen.end_user_text,
            True,
            seen.reason,
            name=message.name,
            intent=message.intent,
        )
    fields = {f: getattr(message, f) for f in OPTIONAL_FIELDS}
    return RenderedItem(
        index,
        message.role,
        message.channel,
        logical_text(transcript.spec, message.content),
        seen.visible,
        seen.reason,
        end_user_content=seen.end_user_text if seen.visible else None,
        **fields,
    )


def source_spans(source: str, spec: str, start: int, end: int) -> list[Span]:
    """The spans of ``token_spans`` inside ``source[start:end]``, at their offsets in
    ``source``, found by scanning that slice only. Exact when ``start`` and ``end`` are
    message starts (or the ends of the text): no control token, escape or literal block
    runs across a message start (``editor.formats.stream`` cuts the text there too)."""
    return [
        Span(span.start + start, span.end + start, span.kind, span.text)
        for span in token_spans(source[start:end], spec)
    ]


def message_starts(source: str, spec: str, wanted: tuple[int, ...], count: int) -> dict[int, int]:
    """Where messages ``wanted`` (indices, from 1) begin in ``source``, the text of a token-text spec
    that holds ``count`` messages; a message the text does not have is absent.

    The message-start tokens are found in one pass (``message_cuts``, a few milliseconds for
    megabytes); when they are one fewer than the messages, each starts one. Otherwise (FIM
    segments, messages with an implied start) the text is read as a stream, a chunk at a
    time, and stopped after the last message wanted. ValueError for a spec with no
    message-start token (a JSON document)."""
    cuts = message_cuts(source, spec)
    if len(cuts) + 1 == count:
        return {k: cuts[k - 1] for k in wanted if 0 < k <= len(cuts)}
    found: dict[int, int] = {}
    last = max(wanted, default=-1)
    chunks = (source[at : at + STREAM_CHUNK] for at in range(0, len(source), STREAM_CHUNK))
    for index, message in enumerate(iter_messages(chunks, spec)):
        if index > last:
            break
        if index in wanted and message.source is not None:
            found[index] = message.source.start
    return found


STREAM_CHUNK = 64 * 1024  # characters fed to the stream parser at a time


def _source_of(transcript: Transcript) -> str:
    """The transcript's own text; its canonical JSON when no serializer is available."""
    try:
        return serialize(transcript)
    except (ImportError, KeyError, ValueError):
        return json.dumps(transcript.to_dict(), ensure_ascii=False, indent=2)


def token_spans(source: str, spec: str) -> list[Span]:
    """Every control token of ``source`` as a span; escapes and literal blocks are 2.2 only."""
    ocm22 = spec == OCM22
    spans = []
    for tok in scan(source, ALL_TOKEN_NAMES, escapes=ocm22, literals=ocm22):
        kind = SPAN_KINDS.get(tok.kind, "token")
        spans.append(Span(tok.start, tok.end, kind, source[tok.start : tok.end]))
    if spec == V01:
        for marker in V01_SEQUENCE_MARKERS:
            at = source.find(marker)
            while at != -1:
                spans.append(Span(at, at + len(marker), "marker", marker))
                at = source.find(marker, at + len(marker))
        spans.sort(key=lambda s: s.start)
    return spans


def render_text(
    transcript: Transcript, audience: str = END_USER, *, source_text: str | None = None
) -> str:
    """Plain text for ``ocm render``: "role[/channel]: content" blocks, one blank line apart;
    hidden messages (annotator) are labelled; debug prints the raw source."""
    rendered = render(transcript, audience, source_text=source_text)
    if audience == DEBUG:
        return rendered.source or ""
    blocks = []
    for item in rendered.items:
        label = item.role + (f"/{item.channel}" if item.channel else "")
        if audience == ANNOTATOR and not item.visible_to_end_user:
            label += f" [hidden: {item.reason}]"
        blocks.append(f"{label}: {item.content}")
    return "\n\n".join(blocks) + ("\n" if blocks else "")


# --- next-turn prompt ----------------------------------------------------------------------
def _ends_in_final(transcript: Transcript, message: Message) -> bool:
    """An answer the end user saw: a visible assistant message on final (or no channel)."""
    return (
        message.role == "assistant"
        and message.channel in (None, "final")
        and not is_call(message)
        and visibility(transcript, message).visible
    )


def next_turn_prompt(transcript: Transcript) -> Transcript:
    """The prompt for the next sampling step under the CoT retention rule (2.2 §7, HIP-1 §7).

    Analysis written before the last final answer is dropped (its turn is over); analysis
    after it leads to calls that are still being resolved and is kept, as are the calls and
    their replies. v0.1 transcripts lose the thought blocks of assistant messages before the
    last one with visible text.
    """
    last_final = max(
        (i for i, m in enumerate(transcript.messages) if _ends_in_final(transcript, m)), default=-1
    )
    kept: list[Message] = []
    for i, message in enumerate(transcript.messages):
        if i < last_final and message.role == "assistant":
            if message.channel == "analysis":
                continue
            if transcript.spec == V01 and any(
                p.kind == v01body.THOUGHT for p in v01body.parts(message.content)
            ):
                body = "".join(
                    p.text for p in v01body.parts(message.content) if p.kind != v01body.THOUGHT
                )
                message = dataclasses.replace(message, content=body)
        kept.append(message)
    return dataclasses.replace(transcript, messages=kept)
