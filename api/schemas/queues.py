"""Review queues, their assignments and reviews."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.common import AssignmentStateName, Int32, SpecId, StatusName
from editor import queues


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
    schemas: list[int] = Field(
        [],
        description="Ids of the dataset's label schemas whose questions the queue asks, each at "
        "its current version; empty: every active schema of the dataset.",
    )


class QueueSchemasIn(Schema):
    schemas: list[int] = Field(
        description="Ids of the dataset's label schemas the queue asks; empty: every active one."
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
    schemas: list[int] = Field(
        description="The label schemas the queue asks (ids); empty: every active schema."
    )
    created_at: datetime
    progress: dict = Field(
        description="{items, open_items, claimed, submitted, skipped, expired, approved, rejected}."
    )

    @staticmethod
    def resolve_assignees(queue) -> list[str]:
        return [user.get_username() for user in queue.assignees.all()]

    @staticmethod
    def resolve_schemas(queue) -> list[int]:
        return sorted(schema.pk for schema in queue.schemas.all())

    @staticmethod
    def resolve_progress(queue) -> dict:
        return queues.progress(queue)


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
