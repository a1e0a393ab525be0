"""Judges, judge runs, suggestions and judge-vs-people figures (api/routers/judges.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Field, Schema

from .common import Int32


class JudgeIn(Schema):
    schema_id: Int32 = Field(alias="schema", description="A label schema of the dataset.")
    question: str = Field(
        description="The question's key: a choice, multi_choice, rating or text question "
        "about the whole transcript or each message (asked once per message in its scope)."
    )
    connection: Int32 = Field(description="A model connection of the dataset.")
    prompt_template: str | None = Field(
        None,
        description="With {transcript} and {question} (and {options}; and {message}, the "
        "message asked about, for a question about each message); the default when left out.",
    )


class JudgePatchIn(Schema):
    connection: Int32 | None = None
    prompt_template: str | None = None


class JudgeOut(Schema):
    id: int
    label_schema: int = Field(alias="schema_id")
    question: str
    connection: int = Field(alias="connection_id")
    model: str = Field(alias="connection.model")
    prompt_template: str
    created_at: datetime
    updated_at: datetime


class JudgeRunIn(Schema):
    dataset: str = Field(description="The dataset's slug.")
    schema_id: Int32 = Field(alias="schema")
    question: str
    filters: dict[str, str | list[str]] | str | None = Field(
        None,
        description="The dataset list's filters (its query string, or the same as an object: "
        '`{"status": ["in_review"], "q": "refund"}`); every live transcript when left out.',
    )


class RunProgressOut(Schema):
    done: int
    total: int
    failed: int
    percent: int


class TokensOut(Schema):
    requests: int
    failed: int
    tokens_in: int
    tokens_out: int


class JudgeRunOut(Schema):
    id: int
    dataset: str
    judge: int
    label_schema: int
    question: str
    status: Literal["queued", "running", "succeeded", "failed"]
    cancelled: bool
    progress: RunProgressOut
    error: str
    failures: list[dict[str, Any]] = Field(
        description='`{"transcript", "error", "attempts"}` per item that failed.'
    )
    filters: dict[str, Any]
    transcripts: int
    tokens: TokensOut
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class SuggestionOut(Schema):
    id: int
    transcript: int = Field(alias="transcript_id")
    label_schema: int = Field(alias="schema_version.schema_id")
    schema_version: int = Field(alias="schema_version.number")
    question: str
    message_index: int | None
    value: Any
    rationale: str
    model: str
    run: int | None = Field(alias="run_id")
    source: Literal["model"] = "model"
    accepted_by: str | None = Field(None, alias="accepted_by.username")
    accepted_at: datetime | None
    created_at: datetime


class AgreementOut(Schema):
    measure: str
    level: str
    value: float | None
    items: int
    annotators: int


class ConfusionRowOut(Schema):
    judge: str
    people: list[int]


class ConfusionOut(Schema):
    judge_by_people: list[str] = Field(description="The answers' labels, rows and columns.")
    rows: list[ConfusionRowOut]


class JudgeAgreementOut(Schema):
    label_schema: int
    question: str
    judged_items: int
    compared: int = Field(description="Items with the judge's and the people's answer.")
    agreement: AgreementOut | None = Field(description="Judge vs the people's answer.")
    with_annotators: AgreementOut | None = Field(
        description="The judge counted as one more annotator."
    )
    confusion: ConfusionOut
    disagreeing: list[int] = Field(description="Transcripts where the two differ.")
