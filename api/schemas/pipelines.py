"""Webhooks (``editor.webhooks``) and dataset versions (``editor.versions``)."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from editor.webhooks import EVENTS

from .common import SpecId

EventName = Literal[EVENTS]


class WebhookIn(Schema):
    url: str = Field(description="http(s) URL; its host must resolve to public addresses.")
    events: list[EventName] = Field([], description="The event types sent; empty: all of them.")
    description: str = ""


class WebhookPatchIn(Schema):
    url: str | None = None
    events: list[EventName] | None = None
    description: str | None = None
    enabled: bool | None = Field(
        None, description="false disables it; true enables it again (its failures start over)."
    )


class WebhookOut(Schema):
    id: int
    url: str
    description: str
    events: list[str]
    secret: str = Field(description="`whsec_…`: verify the `webhook-signature` header with it.")
    enabled: bool
    failures_in_a_row: int
    disabled_at: datetime | None
    disabled_reason: str
    created_at: datetime

    @staticmethod
    def resolve_enabled(endpoint) -> bool:
        return endpoint.disabled_at is None


class DeliveryOut(Schema):
    id: int
    message_id: str = Field(description="The `webhook-id` header, the same on every attempt.")
    event_type: str
    payload: dict
    status: str = Field(description="pending, succeeded or failed (after every attempt).")
    attempts: int
    next_attempt_at: datetime | None
    response_status: int | None
    response_body: str
    error: str
    created_at: datetime
    delivered_at: datetime | None


class VersionIn(Schema):
    name: str = Field(description="Letters, digits, `.`, `_`, `-` (1-100); unique per dataset.")
    description: str = ""
    filters: dict = Field(
        {},
        description="The dataset list's query parameters (`status`, `spec`, `q`, `has_errors`, "
        "`code`, `has`, `updated_by`, `updated_since`, `label`); empty: every live transcript.",
    )


class VersionOut(Schema):
    name: str
    description: str
    filters: dict
    transcript_count: int
    content_hash: str = Field(description="SHA-256 over the members (`id:version:status`).")
    created_by: str | None = Field(None, alias="created_by.username")
    created_at: datetime


class VersionDetailOut(VersionOut):
    members: list[tuple[int, int, str]] = Field(
        description="`[transcript id, transcript version, status]`, in id order."
    )


class VersionExportQuery(Schema):
    spec: SpecId | None = Field(None, description="Each transcript's own spec when absent.")
    format: Literal["jsonl", "messages"] = "jsonl"


class ChangedMemberOut(Schema):
    id: int
    from_version: int
    to_version: int
    from_status: str
    to_status: str
    history_url: str = Field(description="The transcript's history page comparing the two.")


class VersionDiffOut(Schema):
    from_name: str = Field(description="The version compared from (`{name}`).")
    to_name: str = Field(description="The version compared to (`{other}`).")
    added: list[int]
    removed: list[int]
    changed: list[ChangedMemberOut]
    unchanged: int
