"""Alternatives of an assistant turn (``editor.alternatives``): listed, added, deleted,
promoted."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.common import INT32_MAX
from api.schemas.editing import VersionedIn


class AlternativeOut(Schema):
    id: int
    message_index: int = Field(description="The turn's first message.")
    messages: list[dict] = Field(description="The turn's messages: canonical message dicts.")
    content_hash: str = Field(description="SHA-256 of the messages' compact canonical JSON.")
    source: str = Field(description="`transcript` (the own turn), `import`, `hand` or `model`.")
    note: str
    generation: dict = Field(description='source "model": which model, options, usage.')
    created_by: str | None
    created_at: datetime
    current: bool = Field(description="What the transcript holds at this turn now.")


class AlternativeIn(Schema):
    message_index: int = Field(
        ge=0, le=INT32_MAX, description="The turn's first message (an assistant's)."
    )
    messages: list[dict] = Field(
        description="One turn: an assistant message, then assistant or tool messages."
    )
    source: Literal["hand", "import", "model"] = "hand"
    note: str = ""
    generation: dict | None = Field(None, description='For source "model".')


class AlternativeFilters(Schema):
    message_index: int | None = Field(None, ge=0, le=INT32_MAX, description="Only this turn's.")


class PromoteIn(VersionedIn):
    """The version the caller saw (or `If-Match`); the revision's note is written for it."""
