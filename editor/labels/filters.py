"""Filtering transcripts by their labels: ``label=QUESTION:VALUE`` on the dataset page, in
bulk selections and in the API's transcript list.

A transcript matches when someone submitted that answer about it or one of its messages: the
chosen option of a choice question, one of the options of a multi-choice answer, a rating, or
a span's tag (``TranscriptQuerySet.matching``, through the ``holds`` lookup). Which question a
key names, and so how its value is read (a rating is a number), comes from the dataset's
active label schemas; free-text questions have nothing to pick and cannot be filtered on.
"""

from __future__ import annotations

from typing import Any

from editor.errors import InvalidContent
from editor.labels import Question, definition_of
from editor.models import Dataset

SEPARATOR = ":"  # question keys are [a-z][a-z0-9_]*: the first colon ends the key
PICKABLE_KINDS = ("choice", "multi_choice", "rating", "span")


def pickable_questions(dataset: Dataset) -> list[Question]:
    """The questions of the dataset's active schemas whose answers can be picked (one query)."""
    schemas = dataset.label_schemas.active().with_current_version().order_by("name", "pk")
    return [
        question
        for schema in schemas
        if schema.current_version is not None
        for question in definition_of(schema.current_version).questions
        if question.kind in PICKABLE_KINDS
    ]


def filter_choices(questions: list[Question]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every answer one may filter on, grouped by question: ``[(prompt, [(QUESTION:VALUE,
    label)…])…]`` (a key asked in several schemas is listed once)."""
    groups, seen = [], set()
    for question in questions:
        if question.key in seen:
            continue
        seen.add(question.key)
        groups.append(
            # The key beside each answer: a closed select shows the answer alone.
            (
                question.prompt,
                [
                    (_token(question.key, v), f"{label} ({question.key})")
                    for v, label in _answers(question)
                ],
            )
        )
    return groups


def parse_label_filter(questions: list[Question], token: str) -> tuple[str, Any]:
    """``QUESTION:VALUE`` as the (question, value) an answer would store, or
    ``InvalidContent`` (``invalid-filter``) naming what does not fit."""
    key, separator, text = token.partition(SEPARATOR)
    if not separator:
        raise _refused(f"A label filter is QUESTION{SEPARATOR}VALUE, not {token!r}.")
    asked = [q for q in questions if q.key == key]
    if not asked:
        raise _refused(f"No active label question of this dataset has the key {key!r}.")
    for question in asked:
        for value, _label in _answers(question):
            if str(value) == text:
                return key, value
    raise _refused(f"{text!r} is not an answer to the question {key!r}.")


def _answers(question: Question) -> list[tuple[Any, str]]:
    if question.kind == "rating":
        return [(n, f"{n} of {question.scale}") for n in range(1, question.scale + 1)]
    choices = question.tags if question.kind == "span" else question.options
    return [(choice.value, choice.label) for choice in choices]


def _token(key: str, value: Any) -> str:
    return f"{key}{SEPARATOR}{value}"


def _refused(message: str) -> InvalidContent:
    return InvalidContent(message, code="invalid-filter")
