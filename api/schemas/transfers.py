"""Imports and exports."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.common import (
    ExportFormat,
    OnConflictChoice,
    SpecId,
    StatusName,
    TrainingConvention,
)
from editor.exporting.tasks import FILE_FORMATS, file_expired
from editor.exporting.tasks import progress_of as export_progress_of
from editor.exporting.training import MASK_STYLES, OVER_CONTEXT
from editor.formats.preference import IMPORT_SHAPES
from editor.formats.preference import SHAPES as PREFERENCE_SHAPES
from editor.importing.tasks import progress_of
from editor.pairs import SOURCES as PAIR_SOURCES


class ImportIn(Schema):
    spec: SpecId | None = Field(None, description="For items that do not name theirs.")
    on_conflict: OnConflictChoice = "update"
    partial: bool = Field(False, description="Import the readable items, report the rest.")
    shape: Literal[IMPORT_SHAPES] | None = Field(
        None,
        description="How rows are read: `preference` (TRL rows) or `hh` (HH-RLHF text) make "
        "each row a transcript with its two answers as alternatives, `transcripts` none; "
        "absent: rows with `chosen` and `rejected` keys are preference rows.",
    )


class ImportTaskOut(Schema):
    id: int
    dataset: str = Field(alias="dataset.slug")
    source_name: str
    spec: str
    on_conflict: str
    partial: bool
    shape: str = Field(description="How rows are read; empty: decided from each row's keys.")
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int = Field(description="How many times a task worker has started it.")
    progress: dict = Field(
        description="{items, counts, bytes_read, bytes_total, percent, seconds_left}: "
        "percent is 0 until the first report; seconds_left the reading still to do at the "
        "pace so far (null: unknown)."
    )
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
    with_suggestions: bool = Field(
        False,
        description="Add each transcript's judge suggestions (`suggestions`, each "
        '`"source": "model"`, with `"message"` for a question about each message), apart from '
        "the annotations; whole transcripts only (not viewers).",
    )
    preference_shape: Literal[PREFERENCE_SHAPES] = Field(
        "conversational",
        description="format=preference: TRL conversational or standard rows, or HH-RLHF text "
        "(docs/formats.md).",
    )
    sources: list[Literal[PAIR_SOURCES]] = Field(
        [], description="format=preference: the pairs of these sources; none given: all."
    )
    mask: Literal[MASK_STYLES] | None = Field(
        None,
        description="format=messages: write what a training run computes loss on, as a "
        "per-message `weight` (OpenAI fine-tuning), an `assistant_masks` column (one 0/1 "
        "per message), or `tokens`: `input_ids` (the transcript's text under the dataset's "
        "tokenizer) with TRL's per-token `assistant_masks`; docs/formats.md.",
    )
    convention: TrainingConvention | None = Field(
        None,
        description="With `mask`: all_assistant, last_assistant_turn or gpt_oss (default: "
        "gpt_oss for harmony transcripts, else all_assistant).",
    )
    over_context: Literal[OVER_CONTEXT] | None = Field(
        None,
        description="format=jsonl|messages: transcripts whose token count is over the "
        "dataset tokenizer's context length are left out (`drop`) or kept (`report`), each a "
        "`context_length` loss.",
    )

    def export_options(self) -> dict:
        """The options as ``export_dataset`` and ``start_export_task`` take them."""
        return {
            "spec": self.spec,
            "format": self.format,
            "statuses": self.status,
            "audience": self.audience,
            "with_annotations": self.with_annotations,
            "with_suggestions": self.with_suggestions,
            "preference_shape": self.preference_shape,
            "sources": self.sources or None,
            "convention": self.convention,
            "mask": self.mask,
            "over_context": self.over_context,
        }


class PreparedExportQuery(DatasetExportQuery):
    file_format: Literal[FILE_FORMATS] = Field(
        "jsonl", description="parquet: the same rows as a Parquet file (docs/formats.md)."
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
    expired: bool = Field(
        description="The export succeeded but its file was removed OCM_EXPORT_KEEP_DAYS days "
        "after it was prepared (7 by default): start the export again."
    )

    @staticmethod
    def resolve_progress(task) -> dict:
        return export_progress_of(task)

    @staticmethod
    def resolve_expired(task) -> bool:
        return file_expired(task)
