"""Exporting transcripts: ``export_transcript`` (one, any spec) and ``export_dataset`` (a
stream of JSONL lines), for the UI, the API and the ``export_dataset`` management command.

A transcript exported in its own spec is its stored source text, byte for byte, whenever that
text says exactly what the canonical transcript says (``source_is_exact``); otherwise, and for
any other spec, it goes through the spec core's conversion, whose losses are reported, never
dropped silently.

Dataset lines (``format="jsonl"``), one per transcript, read back by ``import_transcripts``
as the same transcripts::

    {"id": external id or null, "title": …, "spec": …, "status": …, "metadata": {…},
     "text": "…"}            # a text spec: the transcript text
     "document": {…}         # a JSON spec: the JSON document itself, not a string

(a JSON-spec text that is not one JSON value, such as JSON Lines, goes out as ``"text"``).

``format="messages"``: one Hugging Face / TRL chat row per transcript,
``{"messages": [{"role", "content", …}], "tools": [...]}``, converted from the stored messages;
other top-level keys of the OpenAI document are left out and reported as losses.

``format="preference"``: the dataset's preference pairs, one TRL / HH-RLHF row each
(``editor.exporting.preference``; ``preference_shape``, ``sources``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from editor import formats
from editor.assist import suggestions
from editor.errors import InvalidContent
from editor.exporting.preference import PreferenceExport, check_options
from editor.exporting.summarized import SummarizedExport
from editor.exporting.training import (
    DROP,
    TOKENS,
    check_training_options,
    context_length_of,
    over_context_loss,
    training_row,
)
from editor.formats.convert import map_transcript_traced
from editor.formats.model import SEMANTIC_FIELDS
from editor.formats.preference import CONVERSATIONAL
from editor.formats.render import END_USER, render
from editor.labels.export import placed_annotations
from editor.models import Dataset, Status, Transcript, TranscriptQuerySet
from editor.pairs import SOURCES as PAIR_SOURCES
from editor.presentation.training import tokenizer_of

CHUNK_SIZE = 500
MESSAGES_SPEC = formats.CHAT_DATASET_SPEC  # the chat-dataset shape of TRL and Hugging Face
ID_ATTR = "id"
PREVIEW_LIMIT = 2000  # transcripts whose losses a page computes while the user waits (~1 s)
MAX_KEPT_LOSSES = 1000  # a dataset export counts every loss but keeps only this many
LOSS_EXAMPLES = 5  # transcripts named per lost field (the others are counted: "and N more")


class Format(StrEnum):
    JSONL = "jsonl"
    MESSAGES = "messages"
    PREFERENCE = "preference"


@dataclass
class ExportedTranscript:
    text: str
    spec: str
    losses: list[dict] = field(default_factory=list)
    # For each message written, the indexes of the stored messages it comes from (labels
    # follow their messages with it); None: the stored text, message for message.
    origins: list[tuple[int, ...]] | None = None


def export_transcript(
    transcript: Transcript, *, spec: str | None = None, audience: str | None = None
) -> ExportedTranscript:
    """``transcript`` written in ``spec`` (its own by default), with what could not be said.

    ``audience`` applies the rendering policy first (``"end_user"``: only what end users
    see); the result is then a conversion, never the stored source text.
    """
    return _export(transcript, transcript.canonical, spec=spec, audience=audience)


def _export(
    transcript: Transcript,
    load_canonical: Callable[[], formats.Transcript],
    *,
    spec: str | None,
    audience: str | None,
    one_line: bool = False,
) -> ExportedTranscript:
    """``one_line``: a JSON document written afresh goes on one line (``formats.serialize``),
    for a dataset line that embeds the document's value, not its text."""
    target = spec or transcript.spec
    if not formats.is_spec(target):
        raise InvalidContent(
            f"Unknown spec id {target!r}; expected one of: {', '.join(formats.spec_ids())}.",
            code="unknown-spec",
        )
    if audience is None and target == transcript.spec:
        if transcript.source_is_exact:
            return ExportedTranscript(transcript.source_text, target)
        # An edit the spec cannot say: the stored text is the closest the spec gets.
        return ExportedTranscript(
            transcript.source_text, target, _unsaid(load_canonical(), transcript.source_text)
        )
    canonical = load_canonical()
    shown = range(len(canonical.messages))
    if audience is not None:
        canonical, shown = _for_audience(canonical, audience)
    mapped, losses, origins = map_transcript_traced(canonical, target)
    text = formats.serialize(mapped, target, one_line=one_line)
    origins = [tuple(shown[index] for index in origin) for origin in origins]
    return ExportedTranscript(text, target, [loss.to_dict() for loss in losses], origins)


def _unsaid(canonical: formats.Transcript, text: str) -> list[dict]:
    """What ``canonical`` holds that ``text`` (in its own spec) does not say, as losses in the
    shape of the spec core's (``message_index``, ``field``, ``detail``)."""
    said = formats.parse(text, canonical.spec).transcript
    detail = f"not representable in {canonical.spec}"
    losses = [
        {"message_index": None, "field": name, "detail": detail}
        for name in ("header", "attrs")
        if getattr(said, name) != getattr(canonical, name)
    ]
    if len(said.messages) != len(canonical.messages):
        losses.append({"message_index": None, "field": "messages", "detail": detail})
    for index, (wanted, written) in enumerate(zip(canonical.messages, said.messages, strict=False)):
        losses.extend(
            {"message_index": index, "field": name, "detail": detail}
            for name in SEMANTIC_FIELDS
            if getattr(wanted, name) != getattr(written, name)
        )
    return losses


def _for_audience(
    canonical: formats.Transcript, audience: str
) -> tuple[formats.Transcript, list[int]]:
    """Only what ``audience`` sees, as a transcript that can be written in any spec, and the
    index in ``canonical`` of each message kept.

    The rendering policy decides; for ``end_user`` that drops system, developer, analysis,
    tool traffic and hidden parts of texts, and the header and document attributes too
    (model settings and tool lists are not shown to end users either).
    """
    if audience != END_USER:
        raise InvalidContent(
            f"Exports apply only the {END_USER} audience (got {audience!r}).",
            code="invalid-request",
        )
    rendered = render(canonical, END_USER)
    shown = formats.Transcript(
        spec=canonical.spec,
        messages=[
            formats.Message(
                role=item.role,
                content=item.content,
                channel=item.channel,
                name=item.name,
                intent=item.intent,
                end=canonical.messages[item.index].end,
            )
            for item in rendered.items
        ],
    )
    return shown, [item.index for item in rendered.items]


class DatasetExport(SummarizedExport):
    """An iterable of export lines (each ending in a newline) in constant memory.

    Transcripts are read in primary-key order through ``iterator(chunk_size)`` (a
    server-side cursor on PostgreSQL), their messages fetched per chunk only when a
    conversion needs them. While it runs it counts transcripts and losses; ``losses`` keeps
    the first ``MAX_KEPT_LOSSES`` as ``{"transcript": id, …loss}``.
    """

    def __init__(
        self,
        transcripts: TranscriptQuerySet,
        *,
        spec: str | None,
        format: Format,
        audience: str | None,
        chunk_size: int,
        with_annotations: bool = False,
        convention: str | None = None,
        mask: str | None = None,
        over_context: tuple[str, int] | None = None,
        tokenizer=None,
        with_suggestions: bool = False,
    ):
        self.transcripts = transcripts
        # (drop | report, the context length), or None (editor.exporting.training)
        self.over_context = over_context
        # format=messages with a training mask (editor.exporting.training)
        self.convention = convention
        self.mask = mask
        self.tokenizer = tokenizer  # mask=tokens: the dataset's
        self.with_annotations = with_annotations
        # A judge's suggestions, apart from the people's answers (editor.assist.suggestions)
        self.with_suggestions = with_suggestions
        self.spec = spec
        self.format = format
        self.audience = audience
        self.chunk_size = chunk_size
        self.count = 0
        self.dropped = 0  # left out: over the context length
        self.loss_count = 0
        self.losses: list[dict] = []
        # What is lost, by field: how many transcripts lose it, one detail as an example, and
        # the first ``LOSS_EXAMPLES`` of those transcripts (``{"id", "title"}``).
        self.loss_summary: dict[str, dict] = {}

    def __iter__(self) -> Iterator[str]:
        rows = self.transcripts.order_by("pk").defer("diagnostics")
        spec = MESSAGES_SPEC if self.format == Format.MESSAGES else self.spec
        # Each transcript in its own spec needs only the stored text, no messages (a
        # transcript whose text is not exact loads its messages itself, rarely).
        text_only = spec is None and self.audience is None
        if text_only:
            source = rows.iterator(chunk_size=self.chunk_size)
        else:
            source = rows.iterator_with_canonical(self.chunk_size)
        try:
            yield from self._lines(source, spec, text_only)
        finally:
            # Closed here, inside the transaction that opened it: PostgreSQL's server-side
            # cursor left to the garbage collector would be closed in a later transaction.
            source.close()

    def _lines(self, source, spec: str | None, text_only: bool) -> Iterator[str]:
        # A line embeds a JSON document's value, so its text may go on one line (the fast
        # encoder), unless labels are placed in that text.
        one_line = not self.with_annotations
        for item in source:
            if text_only:
                row, load_canonical = item, item.canonical
            else:
                row, canonical = item
                load_canonical = lambda canonical=canonical: canonical  # noqa: E731
            over = over_context_loss(row.token_count, self.over_context)
            if over is not None and self.over_context[0] == DROP:
                self.dropped += 1
                self._keep_losses(row, [over])
                continue
            if self.format == Format.MESSAGES and self.mask is not None:
                line, exported = training_row(
                    load_canonical(),
                    convention=self.convention,
                    mask_style=self.mask,
                    chat_row=_chat_row,
                    tokenizer=self.tokenizer,
                )
            elif self.format == Format.MESSAGES:
                line, exported = _chat_row(load_canonical(), self.audience, one_line=one_line)
            else:
                exported = _export(
                    row, load_canonical, spec=spec, audience=self.audience, one_line=one_line
                )
                line = self._line(row, exported)
            losses = exported.losses if over is None else [*exported.losses, over]
            if self.format == Format.JSONL and losses and row.external_id:
                losses = _not_carried_by_the_line(losses, row, load_canonical())
            if self.with_annotations:
                line["annotations"], label_losses = placed_annotations(
                    row.annotations.select_related("schema_version__schema", "annotator").order_by(
                        "pk"
                    ),
                    text=exported.text,
                    spec=exported.spec,
                    origins=exported.origins,
                )
                losses = [*losses, *label_losses]
            if self.with_suggestions:
                line["suggestions"] = suggestions.export_rows(row)
            self.count += 1
            self._keep_losses(row, losses)
            yield json.dumps(line, ensure_ascii=False) + "\n"

    def _line(self, transcript: Transcript, exported: ExportedTranscript) -> dict:
        line = {
            "id": transcript.external_id or None,
            "title": transcript.title,
            "spec": exported.spec,
            "status": transcript.status,
            "metadata": transcript.metadata,
        }
        text_spec = formats.spec_info(exported.spec).text
        document = None if text_spec else _json_document(exported)
        if document is None:
            line["text"] = exported.text
        else:
            line["document"] = document
        return line

    def summary(self) -> dict:
        """What the lines written so far could not carry: how many transcripts, how many
        losses, and for each lost field how many transcripts lose it (with one example and
        the first few of those transcripts, ``named``)."""
        return {
            "transcripts": self.count,
            "loss_count": self.loss_count,
            "losses": {
                field: {**kind, "more": kind["transcripts"] - len(kind["named"])}
                for field, kind in sorted(
                    self.loss_summary.items(), key=lambda kind: -kind[1]["transcripts"]
                )
            },
        }

    def _keep_losses(self, transcript: Transcript, losses: list[dict]) -> None:
        self.loss_count += len(losses)
        for lost, detail in {loss["field"]: loss["detail"] for loss in losses}.items():
            kind = self.loss_summary.setdefault(
                lost, {"transcripts": 0, "example": detail, "named": []}
            )
            kind["transcripts"] += 1
            if len(kind["named"]) < LOSS_EXAMPLES:
                kind["named"].append({"id": transcript.pk, "title": str(transcript)})
        room = MAX_KEPT_LOSSES - len(self.losses)
        if room > 0:
            who = transcript.external_id or transcript.pk
            self.losses.extend({"transcript": who, **loss} for loss in losses[:room])


def _not_carried_by_the_line(
    losses: list[dict], transcript: Transcript, canonical: formats.Transcript
) -> list[dict]:
    """An import line's ``id`` is both the transcript's external id and a key of the document
    it was read from: a spec without document keys drops the key, but the export line's own
    ``id`` still says it, so nothing is lost."""
    if canonical.attrs.get(ID_ATTR) != transcript.external_id:
        return losses
    return [loss for loss in losses if loss["field"] != f"attrs.{ID_ATTR}"]


def _json_document(exported: ExportedTranscript) -> dict | list | None:
    """The JSON value of a JSON-spec text, or None when the text is not one JSON document:
    an openchatml-json transcript kept as JSON Lines, or a draft imported with broken JSON.
    Those go out as ``"text"``, which the importer reads in the line's spec just the same."""
    try:
        return json.loads(exported.text)
    except ValueError:
        return None


# The columns of a TRL / Hugging Face chat dataset row.
CHAT_ROW_KEYS = ("messages", "tools")


def _chat_row(
    canonical: formats.Transcript, audience: str | None, *, one_line: bool = False
) -> tuple[dict, list[dict]]:
    """One ``{"messages": [...], "tools"?: [...]}`` row and what it could not carry.

    Written from the canonical transcript (the rows: no layout), never from a stored text,
    so that every row has the same shape whatever the transcript was imported as (a bare
    message array, a document with extra top-level keys, a draft with broken JSON).
    """
    shown = range(len(canonical.messages))
    if audience is not None:
        canonical, shown = _for_audience(canonical, audience)
    mapped, losses, origins = map_transcript_traced(canonical, MESSAGES_SPEC)
    text = formats.serialize(mapped, MESSAGES_SPEC, one_line=one_line)
    origins = [tuple(shown[index] for index in origin) for origin in origins]
    document = json.loads(text)
    if isinstance(document, list):
        document = {"messages": document}
    losses = [loss.to_dict() for loss in losses]
    losses.extend(
        {
            "message_index": None,
            "field": f"attrs.{key}",
            "detail": "dropped: a chat-dataset row holds only messages and tools",
        }
        for key in document
        if key not in CHAT_ROW_KEYS
    )
    row = {key: document[key] for key in CHAT_ROW_KEYS if key in document}
    return row, ExportedTranscript(text, MESSAGES_SPEC, losses, origins)


# A streamed export's response is written in pieces of about this many characters: the
# server sends each piece it is given on its own (one system call a line otherwise).
STREAM_PIECE_CHARS = 64 * 1024


def in_pieces(lines: Iterable[str], size: int = STREAM_PIECE_CHARS) -> Iterator[bytes]:
    """``lines`` joined into pieces of at least ``size`` characters (the last one shorter),
    UTF-8 encoded, for a ``StreamingHttpResponse``. The lines are still read one at a time,
    so memory stays bounded by a piece."""
    piece: list[str] = []
    length = 0
    for line in lines:
        piece.append(line)
        length += len(line)
        if length >= size:
            yield "".join(piece).encode()
            piece.clear()
            length = 0
    if piece:
        yield "".join(piece).encode()


def export_dataset(
    dataset: Dataset,
    *,
    spec: str | None = None,
    format: Format | str = Format.JSONL,
    statuses: tuple[str, ...] | list[str] = (),
    audience: str | None = None,
    transcripts: TranscriptQuerySet | None = None,
    chunk_size: int = CHUNK_SIZE,
    with_annotations: bool = False,
    with_suggestions: bool = False,
    preference_shape: str = CONVERSATIONAL,
    sources: tuple[str, ...] | list[str] | None = None,
    convention: str | None = None,
    mask: str | None = None,
    over_context: str | None = None,
) -> DatasetExport | PreferenceExport:
    """The live transcripts of ``dataset`` as a stream of lines (see the module docstring).

    ``spec`` None keeps each transcript's own spec. ``statuses`` keeps only those review
    states. ``transcripts`` narrows the selection further (any QuerySet of the dataset's
    transcripts: that is where label filters plug in). ``with_annotations`` adds each
    transcript's annotations to its line, placed in the exported messages
    (``editor.labels.export``); a label that cannot follow is a loss. ``with_suggestions``
    adds the judge's newest suggestion per question (``suggestions``, each ``"source":
    "model"``), apart from the people's answers and never counted among them.

    ``format="preference"``: the pairs of the selected transcripts instead, as rows of
    ``preference_shape`` (conversational, standard, hh) from ``sources`` (any of edit,
    import, pairwise; all when None), their messages in ``spec``; no audience, no annotations.

    ``mask`` (``weight`` | ``assistant_masks``, format=messages only): each chat row carries
    what ``convention`` trains on (``editor.exporting.training``); whole transcripts, so no
    audience. ``over_context`` (``drop`` | ``report``): transcripts whose stored token count is
    over the dataset tokenizer's context length are left out or kept, a loss either way.
    """
    if spec is not None and not formats.is_spec(spec):
        raise InvalidContent(
            f"Unknown spec id {spec!r}; expected one of: {', '.join(formats.spec_ids())}.",
            code="unknown-spec",
        )
    try:
        format = Format(format)
    except ValueError:
        raise InvalidContent(
            f"Unknown export format {format!r}; expected one of: {', '.join(Format)}.",
            code="invalid-request",
        ) from None
    unknown = set(statuses) - set(Status.values)
    if unknown:
        raise InvalidContent(
            f"Unknown status {', '.join(sorted(unknown))}; expected one of: "
            f"{', '.join(Status.values)}.",
            code="invalid-request",
        )
    selection = (Transcript.objects.all() if transcripts is None else transcripts).filter(
        dataset=dataset
    )
    _check_mask_options(format, audience, convention, mask)
    context = context_length_of(dataset, over_context)
    if context is not None and format == Format.PREFERENCE:
        raise InvalidContent(
            "Dropping or reporting transcripts over the context length applies to "
            "format=jsonl and format=messages.",
            code="invalid-request",
        )
    if format == Format.PREFERENCE:
        sources = PAIR_SOURCES if sources is None else tuple(sources)
        check_options(preference_shape, spec, sources)
        if audience is not None or with_annotations or with_suggestions:
            raise InvalidContent(
                "Preference rows are whole messages: no audience, no annotations.",
                code="invalid-request",
            )
        return PreferenceExport(
            dataset,
            transcripts=selection.with_status(*statuses),
            shape=preference_shape,
            spec=spec,
            sources=sources,
            chunk_size=chunk_size,
        )
    return DatasetExport(
        selection.with_status(*statuses),
        spec=spec,
        format=format,
        audience=audience,
        chunk_size=chunk_size,
        with_annotations=with_annotations,
        with_suggestions=with_suggestions,
        convention=convention,
        mask=mask,
        over_context=context,
        tokenizer=_tokenizer_for(dataset, mask),
    )


def _tokenizer_for(dataset: Dataset, mask: str | None):
    """``mask=tokens`` tokenizes with the dataset's tokenizer: refused without one."""
    if mask != TOKENS:
        return None
    tokenizer = tokenizer_of(dataset)
    if tokenizer is None:
        raise InvalidContent(
            "A token mask needs the dataset's tokenizer, available on this server: name one "
            "on the dataset's Tokenizer page first.",
            code="invalid-request",
        )
    return tokenizer


def _check_mask_options(
    format: Format, audience: str | None, convention: str | None, mask: str | None
) -> None:
    """A training mask goes on chat rows of whole transcripts (format=messages, no audience)."""
    check_training_options(convention, mask)
    if mask is None and convention is None:
        return
    if format != Format.MESSAGES:
        raise InvalidContent(
            "A training mask (convention, mask) goes with format=messages only.",
            code="invalid-request",
        )
    if mask is None:
        raise InvalidContent(
            "Name the mask to write with the convention: weight or assistant_masks.",
            code="invalid-request",
        )
    if audience is not None:
        raise InvalidContent(
            "A training mask covers whole transcripts: export it without an audience.",
            code="invalid-request",
        )
