"""The schema builder's form: a schema's questions as rows of form fields and back.

A row holds what a curator types about one question, as text (``ROW_FIELDS``); options and
span tags are one per line, ``value | label | key`` (label and key optional); a pairwise
question's rubric is there too, one criterion a line, ``key | label | min | max``. Reading a row
gives the question as ``labels.parse_definition`` takes it, so the form, the JSON and the API
are checked by the same rules, and a problem found there points back at its row and field
(``field_of``). Pure functions: the view reads the request, this module only shapes data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from editor.labels import KINDS, MAX_QUESTIONS, Question

ROW_FIELDS = (
    "key",
    "kind",
    "prompt",
    "applies_to",
    "roles",
    "channels",
    "required",
    "scale",
    "max_length",
    "choices",
    "reason",
)
# Past this many rows the rest are not read: the schema allows 100 questions, and the
# 101st makes its "too many" message.
MAX_ROWS = MAX_QUESTIONS + 1
KIND_NAMES = {
    "rating": "Rating",
    "choice": "Single choice",
    "multi_choice": "Multiple choice",
    "text": "Free text",
    "span": "Span tags",
    "pairwise": "Pairwise comparison",
}
REASON_NAMES = (
    ("optional", "asked, optional"),
    ("required", "required"),
    ("off", "not asked"),
)
CHOICE_FIELD = {"choice": "options", "multi_choice": "options", "span": "tags"}
# A problem's field (as ``labels.parse_definition`` names it) -> the row field showing it.
FIELD_OF = {"options": "choices", "tags": "choices", "rubric": "choices"}


def rows_from_post(posted) -> list[dict]:
    """The rows a builder form posted, in the order they came (``q``: each row's prefix)."""
    rows = []
    for prefix in posted.getlist("q")[:MAX_ROWS]:
        row = {name: posted.get(f"q{prefix}-{name}", "") for name in ROW_FIELDS}
        row["required"] = bool(row["required"])
        rows.append(row)
    return rows


def question_from_row(row: Mapping[str, Any]) -> dict:
    """The question a row describes, as JSON (numbers that are not numbers are passed on as
    typed, for ``parse_definition`` to name the field)."""
    kind = row["kind"]
    question: dict[str, Any] = {
        "key": row["key"].strip(),
        "kind": kind,
        "prompt": row["prompt"].strip(),
        "required": bool(row["required"]),
    }
    if kind not in ("span", "pairwise"):  # a span is about messages, a pairwise about turns
        question["applies_to"] = row["applies_to"] or "transcript"
    for name in ("roles", "channels"):
        words = [word.strip() for word in row[name].split(",") if word.strip()]
        if words:
            question[name] = words
    if kind in CHOICE_FIELD:
        question[CHOICE_FIELD[kind]] = _choices_from_lines(row["choices"])
    elif kind == "rating":
        question["scale"] = _number(row["scale"])
    elif kind == "text" and row["max_length"].strip():
        question["max_length"] = _number(row["max_length"])
    elif kind == "pairwise":
        question["reason"] = row.get("reason") or "optional"
        rubric = _rubric_from_lines(row["choices"])
        if rubric:
            question["rubric"] = rubric
    return question


def _rubric_from_lines(text: str) -> list[dict]:
    """``key | label | min | max`` a line (label, min and max optional: 1 to 5)."""
    rubric = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")] + ["", "", ""]
        key, label, low, high = parts[:4]
        rubric.append(
            {
                "key": key,
                "label": label or key,
                "min": _number(low) if low else 1,
                "max": _number(high) if high else 5,
            }
        )
    return rubric


def _number(text: str) -> int | str:
    text = text.strip()
    return int(text) if text.isdigit() else text


def _choices_from_lines(text: str) -> list[dict]:
    choices = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")]
        value = parts[0]
        choice = {"value": value, "label": parts[1] if len(parts) > 1 and parts[1] else value}
        if len(parts) > 2 and parts[2]:
            choice["key"] = parts[2]
        choices.append(choice)
    return choices


def row_from_question(question: Mapping[str, Any]) -> dict:
    """The form row showing ``question`` (a stored or typed question; what is not a question
    gives an empty row of its kind, for the checks to name)."""
    kind = question.get("kind") if question.get("kind") in KINDS else "text"
    choices = question.get(CHOICE_FIELD.get(kind, ""), []) or []
    rubric = (question.get("rubric") or []) if kind == "pairwise" else []
    return {
        "key": _text(question.get("key")),
        "kind": kind,
        "prompt": _text(question.get("prompt")),
        "applies_to": _text(question.get("applies_to")) or "transcript",
        "roles": ", ".join(map(_text, question.get("roles") or [])),
        "channels": ", ".join(map(_text, question.get("channels") or [])),
        "required": bool(question.get("required")),
        "scale": _text(question.get("scale")),
        "max_length": _text(question.get("max_length")),
        "choices": "\n".join(_choice_line(choice) for choice in choices if isinstance(choice, dict))
        + "\n".join(_criterion_line(c) for c in rubric if isinstance(c, dict)),
        "reason": _text(question.get("reason")),
    }


def _criterion_line(criterion: Mapping[str, Any]) -> str:
    return " | ".join(_text(criterion.get(name)) for name in ("key", "label", "min", "max"))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _choice_line(choice: Mapping[str, Any]) -> str:
    value, label, key = (_text(choice.get(name)) for name in ("value", "label", "key"))
    parts = [value, label if label != value or key else "", key]
    return " | ".join(parts).rstrip(" |")


def rows_from_json(questions: Any) -> list[dict]:
    """The rows of a JSON list of questions (what is not a list of objects gives none)."""
    if not isinstance(questions, list):
        return []
    return [row_from_question(q) for q in questions[:MAX_ROWS] if isinstance(q, dict)]


def blank_row(kind: str, rows: list[dict]) -> dict:
    """A new question of ``kind``, with a key no other row has and choices to edit."""
    taken = {row["key"] for row in rows}
    number = next(n for n in range(1, MAX_ROWS + 2) if f"{kind}_{n}" not in taken)
    row = row_from_question({"kind": kind, "key": f"{kind}_{number}"})
    if kind == "rating":
        row["scale"] = "5"
    elif kind in ("choice", "multi_choice"):
        row["choices"] = "yes | Yes | 1\nno | No | 2"
    elif kind == "span":
        row["applies_to"] = "message"
        row["choices"] = "issue | Issue | i"
    elif kind == "pairwise":
        row["reason"] = "optional"
    return row


def moved(rows: list[dict], action: str) -> list[dict]:
    """``rows`` after a builder button: ``add:<kind>``, ``remove:<n>``, ``up:<n>``,
    ``down:<n>`` (n: the row's place); anything else leaves them as they are."""
    verb, _, argument = action.partition(":")
    rows = list(rows)
    if verb == "add" and argument in KINDS and len(rows) < MAX_ROWS:
        return [*rows, blank_row(argument, rows)]
    if not argument.isdigit() or int(argument) >= len(rows):
        return rows
    place = int(argument)
    if verb == "remove":
        del rows[place]
    elif verb in ("up", "down"):
        other = place - 1 if verb == "up" else place + 1
        if 0 <= other < len(rows):
            rows[place], rows[other] = rows[other], rows[place]
    return rows


def previewable(question: dict) -> Question | None:
    """``question`` checked on its own, to preview; None while it does not hold."""
    try:
        return Question.model_validate(question)
    except ValidationError:
        return None


def field_of(problem: Mapping[str, Any]) -> str:
    """The row field a ``parse_definition`` problem is about ("" for the whole question)."""
    first = (problem.get("field") or "").split(".")[0]
    return FIELD_OF.get(first, first if first in ROW_FIELDS else "")


def as_json(questions: list[dict]) -> str:
    return json.dumps(questions, indent=2, ensure_ascii=False)
