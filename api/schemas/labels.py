"""Label schemas and annotations."""

from datetime import datetime
from typing import Any, Literal

from ninja import Field, Schema

from api.schemas.common import AnchorStateName, AnnotationStateName, Int32


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
