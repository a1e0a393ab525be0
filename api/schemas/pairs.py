"""Preference pairs (``editor.pairs``): listed per transcript and per dataset, excluded and
included one by one."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from editor.models import PairSource

StoredPairSource = Literal[tuple(PairSource.values)]


class PairSummaryOut(Schema):
    """A stored pair without its message lists (a dataset's list: prompts can be long)."""

    id: int
    transcript: int = Field(alias="transcript_id")
    message_index: int = Field(description="The first message of the completion.")
    source: str = Field(description="`edit` or `import`.")
    revision: int | None = Field(None, description="The revision an edit made (its number).")
    author: str | None = Field(None, alias="author.username")
    created_at: datetime
    excluded: bool = Field(description="Left out of exports.")
    excluded_at: datetime | None
    excluded_by: str | None = Field(None, alias="excluded_by.username")

    @staticmethod
    def resolve_revision(pair) -> int | None:
        # Listed pairs carry it (editor.pairs.with_names): no revision row, no snapshot, read.
        return pair.revision_number

    @staticmethod
    def resolve_excluded(pair) -> bool:
        return pair.excluded_at is not None


class PairOut(PairSummaryOut):
    """A stored pair with its messages: canonical message dicts, in the transcript's spec."""

    prompt: list[dict] = Field(description="The messages before the completion, as they were.")
    chosen: list[dict]
    rejected: list[dict]


class PairFilters(Schema):
    source: StoredPairSource | None = None
    excluded: bool | None = Field(None, description="true: only excluded; false: only included.")
