"""Revisions, diffs and restores."""

from datetime import datetime

from ninja import Field, Schema

from api.schemas.common import Int32


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
