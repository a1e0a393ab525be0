"""Transcripts: lists, reads, creation, updates and renderings."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import model_serializer

from api.pagination import MAX_OFFSET
from api.schemas.common import (
    ContainsName,
    Int32,
    RenderAudience,
    SpecId,
    StatusName,
    TrainingConvention,
    TranscriptSort,
)
from editor.labels.filters import parse_label_filter, pickable_questions
from editor.models import (
    TranscriptFilter,
)
from editor.presentation.render_pages import RENDER_PAGE_MAX
from editor.search import MAX_SEARCH_LENGTH


class TranscriptSummaryOut(Schema):
    id: int
    title: str
    spec: str
    status: StatusName
    version: int
    external_id: str
    message_count: int
    error_count: int
    warning_count: int
    token_count: int | None = Field(
        None, description="Tokens under the dataset's tokenizer (null: not counted)."
    )
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None


class TranscriptOut(Schema):
    """The canonical transcript (spec, header, messages, attrs) and what is stored about it."""

    id: int
    dataset: str = Field(alias="dataset.slug", description="The dataset's slug.")
    title: str
    spec: str
    header: dict
    messages: list[dict]
    attrs: dict
    status: StatusName
    version: int = Field(description="Send it back as expected_version when saving.")
    external_id: str
    metadata: dict
    diagnostics: list[dict]
    error_count: int
    warning_count: int
    source_text: str = Field(description="The text in `spec`, as last saved (layout kept).")
    source_is_exact: bool = Field(
        description="False when `spec` cannot say everything the messages hold."
    )
    token_count: int | None = Field(
        None, description="Tokens under the dataset's tokenizer (null: not counted)."
    )
    token_counts: dict | None = Field(
        None,
        description="{tokenizer, version, total, framing, messages: [tokens per message], "
        'channels: {channel: tokens, "": no channel}, trainable: [tokens each message trains '
        "on when trained]} (docs/tokens.md); null: not counted.",
    )
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None

    @staticmethod
    def resolve_messages(transcript) -> list[dict]:
        return transcript.message_dicts()

    @classmethod
    def of(cls, transcript) -> "TranscriptOut":
        """The schema filled from a stored transcript without validating it again.

        What the database and the message cache hold already has these types; validating
        a read of 50 messages field by field was a fifth of the API's most frequent request
        (docs/performance.md). tests/api/test_transcript_out.py holds it equal to the
        validated schema."""
        fields = {name: getattr(transcript, name) for name in _STORED_TRANSCRIPT_FIELDS}
        return cls.model_construct(
            dataset=transcript.dataset.slug, messages=transcript.message_dicts(), **fields
        )


# TranscriptOut's fields that are the transcript's attributes of the same name.
_STORED_TRANSCRIPT_FIELDS = tuple(
    name for name in TranscriptOut.model_fields if name not in ("dataset", "messages")
)


class TranscriptCreateIn(Schema):
    """Give `text` (in `spec`, detected when absent) or `canonical` (a canonical transcript)."""

    text: str | None = None
    canonical: dict | None = None
    spec: SpecId | None = None
    title: str = ""
    external_id: str = ""
    metadata: dict | None = None
    note: str = ""


class TranscriptUpdateIn(Schema):
    """At most one of `text`, `messages`, `canonical`; `title`/`metadata` replace theirs."""

    expected_version: Int32 = Field(description="The version you edited (409 when stale).")
    text: str | None = None
    spec: SpecId | None = Field(None, description="The spec of `text`; the transcript's own.")
    messages: list[dict] | None = None
    canonical: dict | None = None
    title: str | None = None
    metadata: dict | None = None
    note: str = ""


class TranscriptFilters(Schema):
    q: str | None = Field(
        None,
        max_length=MAX_SEARCH_LENGTH,
        description="Words searched in message content (all of them, in one message; on "
        'PostgreSQL also "a phrase", -word and or). A viewer searches only what the end '
        "user sees.",
    )
    status: list[StatusName] = Field([], description="Repeat for several statuses.")
    spec: SpecId | None = None
    has_errors: bool | None = None
    code: str | None = Field(None, description="Only those with a diagnostic of this code.")
    has: list[ContainsName] = Field(
        [], description="Only those with messages of these kinds (repeat: all of them)."
    )
    updated_by: str | None = Field(None, description="Username of the last revision's author.")
    updated_since: datetime | None = Field(
        None, description="Changed at or after this time (a date: from its start)."
    )
    sort: TranscriptSort = Field(
        "id",
        description="id, updated, title, messages, errors or tokens; a leading - reverses.",
    )
    deleted: bool = Field(False, description="List the deleted transcripts instead.")
    tokens_over: int | None = Field(
        None,
        ge=0,
        le=2**31 - 1,
        description="Only those with more than this many tokens under the dataset's "
        "tokenizer (uncounted ones never match).",
    )
    label: str | None = Field(
        None,
        max_length=300,
        description="QUESTION:VALUE — only those with that submitted answer (a multi-choice "
        "answer including it; a rating as its number; a span's tag), e.g. topic:billing. "
        "422 invalid-filter when the dataset's active label schemas have no such answer.",
    )
    judge: Literal["disagrees"] | None = Field(
        None,
        description="disagrees: only those where a person's submitted answer differs from the "
        "judge's newest suggestion for that question (not viewers: 403).",
    )

    def to_filter(self, dataset) -> TranscriptFilter:
        """The filters; where the words are searched is the list's (``TranscriptList.of``)."""
        return TranscriptFilter(
            text=(self.q or "").strip() or None,
            statuses=self.status,
            spec=self.spec,
            has_errors=self.has_errors,
            code=self.code,
            contains=self.has,
            updated_by=self.updated_by,
            updated_since=self.updated_since,
            tokens_over=self.tokens_over,
            judge_disagrees=self.judge == "disagrees",
            label=parse_label_filter(pickable_questions(dataset), self.label)
            if self.label
            else None,
        )


class ExportOut(Schema):
    spec: str
    text: str
    losses: list[dict] = Field(
        description="What the text cannot say: {message_index, field, detail}."
    )


class DiagnosticsOut(Schema):
    diagnostics: list[dict]
    error_count: int
    warning_count: int


class RenderOut(Schema):
    audience: RenderAudience
    spec: str
    items: list[dict]
    source: str | None = None
    spans: list[dict] | None = None
    convention: TrainingConvention | None = Field(
        None, description="audience=training: the convention the items' `trained` follow."
    )
    trained_tokens: int | None = Field(
        None, description="audience=training, when the dataset's tokenizer counts here."
    )


class RenderPageQuery(Schema):
    offset: int = Field(
        0, ge=0, le=MAX_OFFSET, description="The first item of the page (0: the first one)."
    )
    limit: int = Field(
        RENDER_PAGE_MAX,
        ge=1,
        le=RENDER_PAGE_MAX,
        description=f"Items in the page, at most {RENDER_PAGE_MAX:,} (the default).",
    )


class RenderPageOut(RenderOut):
    total: int = Field(description="The items of the whole rendering (every page's).")
    offset: int
    limit: int
    next: str | None = Field(
        description="The URL of the next page (same parameters, the next offset); null on "
        "the last page."
    )
    source_offset: int | None = Field(
        None,
        description="audience=debug: where the page's `source` begins in the whole source "
        "(the spans' offsets are in the whole source).",
    )

    @model_serializer(mode="wrap")
    def _next_even_when_null(self, handler):
        # The route leaves out None fields (a rendering has only its audience's), but a
        # null `next` is the answer's way of saying "last page": it is always written.
        data = handler(self)
        data.setdefault("next", self.next)
        return data


class NoteIn(Schema):
    note: str = ""
