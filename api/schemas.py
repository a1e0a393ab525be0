"""Request (``…In``) and response (``…Out``) shapes of the API.

Enumerated inputs (spec ids, statuses, audiences, formats) are typed as literals: the
OpenAPI schema lists their values and anything else is a 422 naming the field.
"""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from editor import formats
from editor.exporting import Format
from editor.formats.render import AUDIENCES
from editor.import_tasks import progress_of
from editor.importing import OnConflict
from editor.models import Role, Status

SpecId = Literal[tuple(formats.SPEC_IDS)]
StatusName = Literal[tuple(Status.values)]
Audience = Literal[AUDIENCES]
ExportFormat = Literal[tuple(f.value for f in Format)]
OnConflictChoice = Literal[tuple(c.value for c in OnConflict)]
RoleName = Literal[tuple(Role.values)]


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
        return [message.to_dict() for message in transcript.canonical().messages]


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

    expected_version: int = Field(description="The version you edited (409 when stale).")
    text: str | None = None
    spec: SpecId | None = Field(None, description="The spec of `text`; the transcript's own.")
    messages: list[dict] | None = None
    canonical: dict | None = None
    title: str | None = None
    metadata: dict | None = None
    note: str = ""


class TranscriptFilters(Schema):
    status: list[StatusName] = Field([], description="Repeat for several statuses.")
    spec: SpecId | None = None
    has_errors: bool | None = None
    deleted: bool = Field(False, description="List the deleted transcripts instead.")


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


# --- revisions ------------------------------------------------------------------------------


class RevisionOut(Schema):
    number: int
    kind: str
    author: str | None = Field(None, alias="author.username")
    created_at: datetime
    note: str


class RevisionDetailOut(RevisionOut):
    snapshot: dict = Field(description="{title, metadata, source_text, transcript}.")


class RestoreIn(Schema):
    expected_version: int
    note: str = ""


class DiffQuery(Schema):
    from_: int = Field(alias="from", description="A revision number.")
    to: int = Field(description="A revision number.")


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
    finished_at: datetime | None
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
