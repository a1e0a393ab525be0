"""Message-level edits, fixes, drafts and workflow transitions."""

from typing import Literal

from ninja import Field, Schema

from api.schemas.common import Int32, SpecId, StatusName, TransitionName
from editor.formats.model import TERMINATORS

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
