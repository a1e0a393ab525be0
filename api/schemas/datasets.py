"""Datasets and their members."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.common import RoleName, SpecId
from editor import formats


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
    default_spec: SpecId = formats.DEFAULT_SPEC


class DatasetUpdateIn(Schema):
    """Only the fields sent change; the slug cannot."""

    name: str | None = Field(None, max_length=200)
    description: str | None = None
    default_spec: SpecId | None = None


class MemberOut(Schema):
    username: str = Field(alias="user.username")
    role: RoleName
    created_at: datetime


class InvitationOut(Schema):
    id: int
    dataset: str = Field(alias="dataset.slug")
    username: str
    role: RoleName
    invited_by: str | None = Field(
        description="The curator who invited (null: a user since deleted)."
    )
    created_at: datetime

    @staticmethod
    def resolve_invited_by(invitation) -> str | None:
        return invitation.invited_by.username if invitation.invited_by is not None else None


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
