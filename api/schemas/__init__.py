"""Request (``…In``) and response (``…Out``) shapes of the API.

Enumerated inputs (spec ids, statuses, audiences, formats) are typed as literals: the
OpenAPI schema lists their values and anything else is a 422 naming the field.
"""

from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Field, Schema

from editor import formats
from editor.exporting import Format
from editor.exporting.tasks import progress_of as export_progress_of
from editor.formats.model import TERMINATORS
from editor.formats.render import AUDIENCES
from editor.importing import OnConflict
from editor.importing.tasks import progress_of
from editor.labels.filters import parse_label_filter, pickable_questions
from editor.models import (
    AnchorState,
    AnnotationState,
    AssignmentState,
    Contains,
    Role,
    Status,
    TranscriptFilter,
    sort_choices,
)
from editor.search import MAX_SEARCH_LENGTH
from editor.workflow import TRANSITIONS

# Numbers sent to the API end up in integer columns (PostgreSQL's are 32 bits) or in lookups
# on them: a larger one can only be a wrong one, and would reach the database driver as an
# OverflowError or a DataError (a 500). Refused by the schema instead (found by fuzzing).
INT32_MAX = 2**31 - 1
Int32 = Annotated[int, Field(ge=-INT32_MAX - 1, le=INT32_MAX)]

SpecId = Literal[tuple(formats.SPEC_IDS)]
StatusName = Literal[tuple(Status.values)]
Audience = Literal[AUDIENCES]
ExportFormat = Literal[tuple(f.value for f in Format)]
OnConflictChoice = Literal[tuple(c.value for c in OnConflict)]
RoleName = Literal[tuple(Role.values)]
TransitionName = Literal[tuple(TRANSITIONS)]
AssignmentStateName = Literal[tuple(AssignmentState.values)]
AnnotationStateName = Literal[tuple(AnnotationState.values)]
AnchorStateName = Literal[tuple(AnchorState.values)]
ContainsName = Literal[tuple(Contains.values)]
TranscriptSort = Literal[tuple(sort_choices())]


# --- datasets -------------------------------------------------------------------------------


class DatasetOut(Schema):
    slug: str
    name: str
    description: str
    default_spec: str
    role: RoleName = Field(alias="user_role", description="Your role in the dataset.")
    transcript_count: int
    created_at: datetime
    updated_at: datetime


class DatasetCreateIn(Schema):
    name: str = Field(max_length=200)
    slug: str = Field(description="Letters, digits, -, _ and dots; in every URL of the dataset.")
    description: str = ""
    default_spec: SpecId = "openchatml-2.2"


class DatasetUpdateIn(Schema):
    """Only the fields sent change; the slug cannot."""

    name: str | None = Field(None, max_length=200)
    description: str | None = None
    default_spec: SpecId | None = None


class MemberOut(Schema):
    username: str = Field(alias="user.username")
    role: RoleName
    created_at: datetime


class MemberChangeOut(Schema):
    actor: str | None = Field(
        description="Who made the change (null: a user since deleted, or a command)."
    )
    username: str
    action: Literal["added", "role_changed", "removed"]
    old_role: RoleName | None
    new_role: RoleName | None
    created_at: datetime

    @staticmethod
    def resolve_actor(change) -> str | None:
        return change.actor.username if change.actor is not None else None

    @staticmethod
    def resolve_old_role(change) -> str | None:
        return change.old_role or None

    @staticmethod
    def resolve_new_role(change) -> str | None:
        return change.new_role or None


class DatasetEditOut(Schema):
    actor: str | None = Field(description="Who made the edit (null: a user since deleted).")
    created: bool = Field(description="True for the dataset's creation.")
    changes: dict[str, list[str]] = Field(
        description="{field: [old, new]} for name, description and default_spec."
    )
    created_at: datetime

    @staticmethod
    def resolve_actor(edit) -> str | None:
        return edit.actor.username if edit.actor is not None else None


class MemberIn(Schema):
    username: str
    role: RoleName = "viewer"


class RoleIn(Schema):
    role: RoleName


# --- transcripts ----------------------------------------------------------------------------


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
        "id", description="id, updated, title, messages or errors; a leading - reverses."
    )
    deleted: bool = Field(False, description="List the deleted transcripts instead.")
    label: str | None = Field(
        None,
        max_length=300,
        description="QUESTION:VALUE — only those with that submitted answer (a multi-choice "
        "answer including it; a rating as its number; a span's tag), e.g. topic:billing. "
        "422 invalid-filter when the dataset's active label schemas have no such answer.",
    )

    def to_filter(self, dataset, *, search_hidden: bool) -> TranscriptFilter:
        return TranscriptFilter(
            text=(self.q or "").strip() or None,
            search_hidden=search_hidden,
            statuses=self.status,
            spec=self.spec,
            has_errors=self.has_errors,
            code=self.code,
            contains=self.has,
            updated_by=self.updated_by,
            updated_since=self.updated_since,
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
    audience: Audience
    spec: str
    items: list[dict]
    source: str | None = None
    spans: list[dict] | None = None


class NoteIn(Schema):
    note: str = ""


# --- editing ----------------------------------------------------------------------------------

Terminator = Literal[tuple(TERMINATORS)]


class VersionedIn(Schema):
    """Every write names the version it was made from (or sends it as `If-Match`)."""

    version: Int32 | None = Field(
        None, description='The version you edited; or send `If-Match: "<version>"`.'
    )
    note: str = Field("", description="Kept with the revision this write makes.")


class MessageFieldsIn(Schema):
    """Canonical message fields; in a PATCH only those sent change (null clears a field)."""

    role: str | None = None
    content: str | None = None
    channel: str | None = None
    recipient: str | None = None
    name: str | None = None
    call_id: str | None = None
    intent: str | None = None
    content_type: str | None = None
    constrain: str | None = None
    end: Terminator | None = Field(None, description="null: the message was cut off.")
    attrs: dict | None = None


class MessagePatchIn(VersionedIn, MessageFieldsIn):
    pass


class MessageInsertIn(VersionedIn):
    after: Int32 | None = Field(
        None, ge=0, description="Insert after this index; null or absent: at the start."
    )
    message: MessageFieldsIn | None = Field(
        None, description="The new message (default: an empty user message)."
    )


class MessageMoveIn(VersionedIn):
    to: Int32 = Field(ge=0, description="The index the message ends up at.")


class FixIn(VersionedIn):
    code: str = Field(description="The diagnostic's code.")
    message_index: int | None = Field(description="The diagnostic's message index.")
    fix_id: str = Field(description="The diagnostic's `fix.id`.")


class SourceIn(VersionedIn):
    text: str
    spec: SpecId | None = Field(None, description="The spec of `text`; the transcript's own.")
    convert_to: SpecId | None = Field(
        None, description="Convert the text to this spec before saving; losses are returned."
    )
    draft: bool = Field(
        False, description="Save text with errors anyway, as a draft (status draft)."
    )


class DraftIn(Schema):
    """A message draft (`index` and its changed `fields`) or a whole draft `text`."""

    index: Int32 | None = Field(None, ge=0, description="The message the draft replaces.")
    fields: MessageFieldsIn | None = Field(None, description="Its changed fields.")
    text: str | None = Field(None, description="A whole draft source text.")
    spec: SpecId | None = Field(None, description="The spec of `text`; the transcript's own.")


class EditOut(Schema):
    id: int
    version: int = Field(description="The new version: send it with your next write.")
    status: StatusName
    message_count: int
    diagnostics: list[dict]
    error_count: int
    warning_count: int
    losses: list[dict] = Field(description="What a conversion could not carry (raw mode).")
    message: dict | None = Field(None, description="The message written, where there is one.")


class MessageOut(Schema):
    index: int
    message: dict


class TransitionIn(VersionedIn):
    name: TransitionName = Field(description="The workflow move (editor/workflow.py).")


class TransitionOut(Schema):
    name: TransitionName
    label: str
    target: StatusName = Field(description="The status the move leads to.")


# --- review queues ------------------------------------------------------------------------------


class LabelFilterIn(Schema):
    question: str = Field(description="A question's key.")
    value: str | int | bool | list = Field(description="The answer someone submitted.")


class QueueFilterIn(Schema):
    status: list[StatusName] = []
    spec: list[SpecId] = []
    has_errors: bool | None = None
    label: LabelFilterIn | None = Field(
        None, description="Only transcripts with this submitted answer."
    )
    text: str | None = Field(
        None, max_length=500, description="Words in one message (as the dataset search)."
    )


class QueueIn(Schema):
    name: str
    instructions: str = ""
    overlap: int = Field(1, ge=1, le=20, description="Distinct annotators per item.")
    reservation_minutes: Int32 = Field(30, ge=1, description="How long a claim is held.")
    assignees: list[str] = Field([], description="Usernames; empty: every editor.")
    filters: QueueFilterIn = Field(
        default_factory=QueueFilterIn, description="Which transcripts become items."
    )


class QueueOut(Schema):
    id: int
    dataset: str = Field(alias="dataset.slug")
    name: str
    instructions: str
    overlap: int
    reservation_minutes: int
    filters: dict
    assignees: list[str]
    created_at: datetime
    progress: dict = Field(
        description="{items, open_items, claimed, submitted, skipped, expired, approved, rejected}."
    )

    @staticmethod
    def resolve_assignees(queue) -> list[str]:
        return [user.get_username() for user in queue.assignees.all()]

    @staticmethod
    def resolve_progress(queue) -> dict:
        from editor.queues import progress

        return progress(queue)


class AssignmentOut(Schema):
    id: int
    queue: int = Field(alias="item.queue_id")
    position: int = Field(alias="item.position")
    transcript: int = Field(alias="item.transcript_id")
    annotator: str = Field(alias="annotator.username")
    state: AssignmentStateName
    claimed_at: datetime
    expires_at: datetime
    submitted_at: datetime | None
    reviewed_at: datetime | None
    reviewer: str | None = Field(None, alias="reviewer.username")
    review_comment: str


class QueueFiguresOut(Schema):
    progress: dict = Field(description="As in the queue: items, open_items, counts per state.")
    annotators: list[dict] = Field(
        description="{name, done, states, median_seconds, per_hour} each."
    )
    labels: list[dict] = Field(
        description="{schema, question, kind, answered_items, distribution: [{label, count}], "
        "agreement: {measure, level, value, items, annotators} | null} per question."
    )


class ReviewIn(Schema):
    decision: Literal["approve", "reject"]
    comment: str = Field("", description="Required when rejecting: the annotator reads it.")


# --- revisions ------------------------------------------------------------------------------


class RevisionOut(Schema):
    number: int
    kind: str
    author: str | None = Field(None, alias="author.username")
    created_at: datetime
    note: str


class RevisionDetailOut(RevisionOut):
    snapshot: dict = Field(
        alias="full_snapshot", description="{title, metadata, source_text, transcript}."
    )


class RestoreIn(Schema):
    expected_version: Int32
    note: str = ""


class DiffQuery(Schema):
    from_: Int32 = Field(alias="from", description="A revision number.")
    to: Int32 = Field(description="A revision number.")


# --- imports and exports --------------------------------------------------------------------


class ImportIn(Schema):
    spec: SpecId | None = Field(None, description="For items that do not name theirs.")
    on_conflict: OnConflictChoice = "update"
    partial: bool = Field(False, description="Import the readable items, report the rest.")


class ImportTaskOut(Schema):
    id: int
    dataset: str = Field(alias="dataset.slug")
    source_name: str
    spec: str
    on_conflict: str
    partial: bool
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int = Field(description="How many times a task worker has started it.")
    progress: dict = Field(description="{items, counts, bytes_read, bytes_total, percent}.")
    report: dict = Field(description="The import report, once finished.")
    error: str

    @staticmethod
    def resolve_progress(task) -> dict:
        return progress_of(task)


class DatasetExportQuery(Schema):
    spec: SpecId | None = Field(None, description="Each transcript's own spec when absent.")
    format: ExportFormat = "jsonl"
    status: list[StatusName] = []
    audience: Literal["end_user"] | None = Field(
        None, description="end_user: only what end users see."
    )
    with_annotations: bool = Field(
        False,
        description="Add each transcript's annotations, placed in the exported messages "
        "(reviewers and curators).",
    )


class StreamedExportQuery(DatasetExportQuery):
    summary: bool = Field(
        False,
        description='End with one more line, `{"summary": {"transcripts", "loss_count", '
        '"losses": {field: {"transcripts", "example"}}}}`: what the export could not carry '
        "(a header cannot say it: headers go before the lines are written).",
    )


class ExportTaskOut(Schema):
    id: int
    dataset: str = Field(alias="dataset.slug")
    options: dict = Field(description="spec, format, statuses, audience, with_annotations.")
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int
    progress: dict = Field(description="{transcripts, total, percent}.")
    file_name: str
    size_bytes: int
    transcript_count: int
    losses: dict = Field(
        description="Once done: {loss_count, summary: {field: {transcripts, example}}, "
        "losses: the first 1,000, each naming its transcript}."
    )
    error: str

    @staticmethod
    def resolve_progress(task) -> dict:
        return export_progress_of(task)


# --- stateless format routes ----------------------------------------------------------------


class ValidateIn(Schema):
    text: str
    spec: SpecId | None = Field(None, description="Detected when absent.")


class ValidateOut(Schema):
    spec: str = Field(description='The spec read ("unknown" when none was detected).')
    messages: list[dict]
    diagnostics: list[dict] = Field(description="Syntax, then semantic diagnostics.")
    error_count: int
    warning_count: int


class ConvertIn(Schema):
    text: str
    source: SpecId | None = Field(None, alias="from", description="Detected when absent.")
    to: SpecId


class ConvertOut(Schema):
    spec: str = Field(description="The spec written (`to`).")
    text: str
    losses: list[dict] = Field(description="What `to` cannot say: {message_index, field, detail}.")
    diagnostics: list[dict] = Field(description="The input's parse diagnostics.")


class RenderIn(Schema):
    text: str
    spec: SpecId | None = Field(None, description="Detected when absent.")
    audience: Audience = "end_user"


# --- labels -----------------------------------------------------------------------------------


class LabelSchemaIn(Schema):
    name: str
    instructions: str = Field("", description="Markdown, shown to annotators.")
    questions: list[dict] = Field(description="The questions (docs/labels.md).")


class LabelSchemaVersionIn(Schema):
    expected_version: Int32 | None = Field(
        None, description="The version you edited (409 when the schema moved on since)."
    )
    instructions: str = ""
    questions: list[dict]


class LabelSchemaVersionOut(Schema):
    number: int
    instructions: str
    questions: list[dict] = Field(description="As stored: every default written out.")
    created_by: str | None = Field(None, alias="created_by.username")
    created_at: datetime


class LabelSchemaOut(Schema):
    id: int
    dataset: str = Field(alias="dataset.slug")
    name: str
    archived_at: datetime | None
    created_at: datetime
    current_version: LabelSchemaVersionOut


class LabelSchemaFilters(Schema):
    archived: bool = Field(False, description="List the archived schemas instead.")


class ArchiveIn(Schema):
    archived: bool = Field(True, description="false brings an archived schema back.")


class AnnotationIn(Schema):
    label_schema: Int32 = Field(
        description="The schema's id: the answer is given under its current version."
    )
    question: str = Field(description="The question's key.")
    value: Any = Field(description="An option's value, a list of them, 1..scale, text, a tag.")
    message_index: Int32 | None = Field(
        None, ge=0, description="For questions about messages (and spans)."
    )
    start: Int32 | None = Field(None, ge=0, description="Span: offset in the logical text.")
    end: Int32 | None = Field(None, ge=0, description="Span: end offset (exclusive).")


class AnnotationUpdateIn(Schema):
    value: Any
    start: Int32 | None = Field(None, ge=0, description="Span: new offsets anchor it again.")
    end: Int32 | None = Field(None, ge=0)


class AnnotationFilters(Schema):
    label_schema: Int32 | None = None
    question: str | None = None
    annotator: str | None = Field(None, description="A username.")
    state: AnnotationStateName | None = None
    anchor_state: AnchorStateName | None = None
    message_index: Int32 | None = None


class AnnotationOut(Schema):
    id: int
    transcript: int = Field(alias="transcript_id")
    label_schema: int = Field(alias="schema_version.schema_id")
    schema_version: int = Field(alias="schema_version.number")
    question: str
    annotator: str = Field(alias="annotator.username")
    target: Literal["transcript", "message", "span"]
    message_index: int | None
    start: int | None
    end: int | None
    text: str = Field(description="Span: the text it covered when it was given.")
    value: Any
    state: AnnotationStateName
    anchor_state: AnchorStateName = Field(
        description="ok; flagged (its text changed: check it); orphaned (its message was deleted)."
    )
    created_at: datetime
    updated_at: datetime
    submitted_at: datetime | None
