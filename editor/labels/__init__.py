"""Label schemas: what a schema may say, and writing one (create, new version, archive).

A schema's content is a list of questions (``SchemaDefinition``), checked here with pydantic
before anything is stored; an error names the question it is about. Versions are never
rewritten: a change makes a new ``LabelSchemaVersion`` and answers keep the one they were
given under (docs/labels.md). Which values fit a question is the question's own rule
(``Question.check_value``), used by ``editor.labels.annotations``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from django.db import IntegrityError, transaction
from django.utils import timezone
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from editor import formats
from editor.db.storable import check_storable_text
from editor.errors import (
    InvalidAnswer,
    InvalidContent,
    InvalidLabelSchema,
    LabelSchemaChanged,
    LabelSchemaExists,
    NotAllowed,
)
from editor.models import Dataset, LabelSchema, LabelSchemaVersion

KINDS = ("choice", "multi_choice", "rating", "text", "span", "pairwise")
# "turn": a pairwise question compares the alternatives of each assistant turn that has some
# (editor.alternatives); its answers are about the turn's first message.
TARGETS = ("transcript", "message", "turn")
REASONS = ("optional", "required", "off")
# Fields only a pairwise question has: the others' stored questions are written without them.
PAIRWISE_FIELDS = ("rubric", "reason")
PAIRWISE_VALUE_KEYS = frozenset({"order", "choice", "reason", "ratings"})
# A pairwise item shows at most this many candidates (keys 1-9).
MAX_CANDIDATES = 9
# Keys the queue view keeps for itself (j/k move between messages, s skips): a tag may not
# take them.
RESERVED_TAG_KEYS = frozenset("jks")
OPTION_KEYS = frozenset("123456789")
DEFAULT_TEXT_LENGTH = 10_000
MAX_QUESTIONS = 100

Text = Annotated[str, Field(min_length=1, max_length=200)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Choice(_Strict):
    """An option of a (multi-)choice question or a tag of a span question."""

    value: Text
    label: Text
    key: str | None = Field(None, description="Shortcut: 1-9 for options, a letter for tags.")


class Criterion(_Strict):
    """One rating criterion of a pairwise question's rubric, rated per side from min to max."""

    key: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    label: Text
    min: int = Field(1, ge=0, le=100)
    max: int = Field(5, ge=1, le=100)

    @model_validator(mode="after")
    def _a_range(self) -> Criterion:
        if self.min >= self.max:
            raise ValueError(f"criterion {self.key!r}: min must be below max")
        return self


class Question(_Strict):
    key: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    kind: Literal[KINDS]
    prompt: str = Field(min_length=1, max_length=1000)
    # Where the question applies: the whole transcript, or each message (a span is always in
    # one message); ``roles``/``channels`` narrow "each message" ("each assistant final").
    applies_to: Literal[TARGETS] | None = None
    roles: list[Text] = []
    channels: list[Text] = []
    required: bool = False
    options: list[Choice] = Field([], validate_default=True)  # choice, multi_choice
    scale: int | None = Field(
        None, ge=2, le=10, validate_default=True, description="rating: answers 1..scale"
    )
    tags: list[Choice] = Field([], validate_default=True)  # span
    max_length: int | None = Field(None, ge=1, le=DEFAULT_TEXT_LENGTH)  # text
    rubric: list[Criterion] = Field([], max_length=20)  # pairwise: ratings per side
    reason: Literal[REASONS] | None = None  # pairwise: asking why ("optional" by default)

    # The checks of one field are field validators, so that a problem names its field (the
    # schema builder marks it); ``kind`` is declared before them, so they can read it.
    @field_validator("options")
    @classmethod
    def _options_fit(cls, options: list[Choice], info: ValidationInfo) -> list[Choice]:
        if info.data.get("kind") in ("choice", "multi_choice"):
            _check_choices(options, "options", OPTION_KEYS, "a digit 1-9", minimum=2)
        return options

    @field_validator("tags")
    @classmethod
    def _tags_fit(cls, tags: list[Choice], info: ValidationInfo) -> list[Choice]:
        if info.data.get("kind") == "span":
            letters = frozenset("abcdefghijklmnopqrstuvwxyz") - RESERVED_TAG_KEYS
            _check_choices(tags, "tags", letters, "a letter other than j, k and s")
        return tags

    @field_validator("scale")
    @classmethod
    def _rating_has_a_scale(cls, scale: int | None, info: ValidationInfo) -> int | None:
        if info.data.get("kind") == "rating" and scale is None:
            raise ValueError("a rating question needs a scale (answers 1..scale, 2 to 10)")
        return scale

    @model_validator(mode="after")
    def _fits_its_kind(self) -> Question:
        kind = self.kind
        if self.applies_to is None:
            self.applies_to = {"span": "message", "pairwise": "turn"}.get(kind, "transcript")
        if (kind == "pairwise") != (self.applies_to == "turn"):
            raise ValueError("a pairwise question applies to turns, and only it does")
        if kind == "pairwise" and self.reason is None:
            self.reason = "optional"
        if kind == "span" and self.applies_to != "message":
            raise ValueError("a span question applies to messages")
        if (self.roles or self.channels) and self.applies_to != "message":
            raise ValueError("roles and channels narrow a question that applies to messages")
        _only_for(self, "options", kind in ("choice", "multi_choice"))
        _only_for(self, "scale", kind == "rating")
        _only_for(self, "tags", kind == "span")
        _only_for(self, "max_length", kind == "text")
        _only_for(self, "rubric", kind == "pairwise")
        _only_for(self, "reason", kind == "pairwise")
        if len({c.key for c in self.rubric}) != len(self.rubric):
            raise ValueError("two rubric criteria have the same key")
        return self

    def stored(self) -> dict:
        """The question as a version stores it: every default written out, the pairwise
        fields only on a pairwise question (older versions were stored without them)."""
        out = self.model_dump()
        if self.kind != "pairwise":
            for name in PAIRWISE_FIELDS:
                del out[name]
        return out

    def applies_to_message(self, message: formats.Message) -> bool:
        if self.applies_to == "turn":  # a turn starts at an assistant message
            return message.role == "assistant"
        return (
            self.applies_to == "message"
            and (not self.roles or message.role in self.roles)
            and (not self.channels or message.channel in self.channels)
        )

    def check_value(self, value: Any) -> None:
        """Raise ``InvalidAnswer`` unless ``value`` answers this question (a span's tag here;
        its offsets are checked against its message by ``editor.labels.annotations``)."""
        kind = self.kind
        if kind in ("choice", "span"):
            choices = self.options if kind == "choice" else self.tags
            if not _is_one_of(value, choices):
                raise self.refuse(f"the answer must be one of: {_values(choices)}")
        elif kind == "multi_choice":
            if (
                not isinstance(value, list)
                or not all(_is_one_of(v, self.options) for v in value)
                or len(set(value)) != len(value)
            ):
                raise self.refuse(f"the answer must be a list of distinct {_values(self.options)}")
        elif kind == "rating":
            if type(value) is not int or not 1 <= value <= self.scale:
                raise self.refuse(f"the answer must be a whole number from 1 to {self.scale}")
        elif kind == "pairwise":
            self._check_pairwise(value)
        elif not isinstance(value, str) or not value.strip():
            raise self.refuse("the answer must be some text")
        else:
            limit = self.max_length or DEFAULT_TEXT_LENGTH
            if len(value) > limit:
                raise self.refuse(f"the answer is longer than {limit} characters")
            check_storable_text(value, f"The answer to {self.key!r}")

    def _check_pairwise(self, value: Any) -> None:
        """``{"order": [id, …] (as shown), "choice": id | "tie", "reason": str, "ratings":
        {str(id): {criterion: int}}}``; which ids are the turn's candidates is checked
        against the transcript by ``editor.labels.annotations``."""
        if not isinstance(value, dict) or not {"order", "choice"} <= value.keys():
            raise self.refuse("the answer must be an object with order and choice")
        unknown = sorted(value.keys() - PAIRWISE_VALUE_KEYS)
        if unknown:
            raise self.refuse(f"unknown field {unknown[0]!r} (order, choice, reason, ratings)")
        order = value["order"]
        if (
            not isinstance(order, list)
            or not 2 <= len(order) <= MAX_CANDIDATES
            or not all(type(item) is int for item in order)
            or len(set(order)) != len(order)
        ):
            raise self.refuse("order must list the 2 or more distinct alternative ids shown")
        choice = value["choice"]
        if choice != "tie" and (type(choice) is not int or choice not in order):
            raise self.refuse('choice must be one of the ids in order, or "tie"')
        reason = value.get("reason", "")
        if not isinstance(reason, str):
            raise self.refuse("reason must be text")
        if self.reason == "required" and not reason.strip():
            raise self.refuse("give a reason for the choice")
        if self.reason == "off" and reason:
            raise self.refuse("this question asks for no reason")
        if len(reason) > DEFAULT_TEXT_LENGTH:
            raise self.refuse(f"the reason is longer than {DEFAULT_TEXT_LENGTH} characters")
        check_storable_text(reason, f"The reason given to {self.key!r}")
        self._check_ratings(value.get("ratings", {}), order)

    def _check_ratings(self, ratings: Any, order: list[int]) -> None:
        if not isinstance(ratings, dict):
            raise self.refuse("ratings must be an object by alternative id")
        criteria = {c.key: c for c in self.rubric}
        shown = {str(item) for item in order}
        for side, by_criterion in ratings.items():
            if side not in shown:
                raise self.refuse(f"ratings of {side!r}: not an alternative in order")
            if not isinstance(by_criterion, dict):
                raise self.refuse(f"ratings of {side}: an object by criterion")
            for key, rating in by_criterion.items():
                criterion = criteria.get(key)
                if criterion is None:
                    raise self.refuse(f"the rubric has no criterion {key!r}")
                if type(rating) is not int or not criterion.min <= rating <= criterion.max:
                    raise self.refuse(
                        f"{key!r} is rated with a whole number from {criterion.min} "
                        f"to {criterion.max}"
                    )

    def refuse(self, reason: str) -> InvalidAnswer:
        """The error for an answer to this question that does not fit, saying why."""
        return InvalidAnswer(f"Question {self.key!r}: {reason}.", details={"question": self.key})


def _only_for(question: Question, name: str, allowed: bool) -> None:
    if not allowed and getattr(question, name) not in (None, []):
        raise ValueError(f"{name} is not used by a {question.kind} question")


def _check_choices(
    choices: list[Choice], name: str, keys: frozenset[str], key_rule: str, minimum: int = 1
) -> None:
    if len(choices) < minimum:
        raise ValueError(f"needs at least {minimum} {name}")
    values = [c.value for c in choices]
    if len(set(values)) != len(values):
        raise ValueError(f"{name} have the same value twice")
    used = [c.key for c in choices if c.key is not None]
    for key in used:
        if key not in keys:
            raise ValueError(f"shortcut key {key!r} of {name}: use {key_rule}")
    if len(set(used)) != len(used):
        raise ValueError(f"{name} have the same shortcut key twice")


def _is_one_of(value: Any, choices: list[Choice]) -> bool:
    return isinstance(value, str) and any(c.value == value for c in choices)


def _values(choices: list[Choice]) -> str:
    return ", ".join(repr(c.value) for c in choices)


class SchemaDefinition(_Strict):
    questions: list[Question] = Field(min_length=1, max_length=MAX_QUESTIONS)

    @model_validator(mode="after")
    def _keys_are_distinct(self) -> SchemaDefinition:
        keys = [q.key for q in self.questions]
        if len(set(keys)) != len(keys):
            raise ValueError("two questions have the same key")
        # The queue view tags a selected span with one key press: across the schema.
        tag_keys = [t.key for q in self.questions for t in q.tags if t.key]
        if len(set(tag_keys)) != len(tag_keys):
            raise ValueError("two span tags have the same shortcut key")
        return self

    def stored(self) -> list[dict]:
        """The questions as a version stores them (every default written out)."""
        return [question.stored() for question in self.questions]

    def question(self, key: str) -> Question | None:
        return next((q for q in self.questions if q.key == key), None)


def parse_definition(questions: Any) -> SchemaDefinition:
    """The checked, normalized definition of ``questions`` (a JSON list), or
    ``InvalidLabelSchema`` listing every problem with the question it is about."""
    try:
        definition = SchemaDefinition.model_validate({"questions": questions})
    except ValidationError as invalid:
        problems = [_problem(error, questions) for error in invalid.errors()]
        first = problems[0]
        where = f"Question {first['question']}" if first["question"] else "The schema"
        field = f" ({first['field']})" if first["field"] else ""
        raise InvalidLabelSchema(f"{where}{field}: {first['message']}.", details=problems) from None
    for index, question in enumerate(definition.stored()):
        for text in _strings(question):
            check_storable_text(text, f"Question {question['key']!r} (#{index + 1})")
    return definition


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _problem(error: dict, questions: Any) -> dict:
    """One pydantic error as ``{question, index, field, message}`` (``index``: the question's
    place in the list, which the schema builder's form marks; None for the whole schema)."""
    loc = list(error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    if len(loc) < 2 or loc[0] != "questions" or not isinstance(loc[1], int):
        return {
            "question": None,
            "index": None,
            "field": ".".join(map(str, loc[1:])),
            "message": message,
        }
    index = loc[1]
    raw = questions[index] if isinstance(questions, list) else None
    key = raw.get("key") if isinstance(raw, dict) else None
    name = repr(key) if isinstance(key, str) and key else f"#{index + 1}"
    return {
        "question": name,
        "index": index,
        "field": ".".join(map(str, loc[2:])),
        "message": message,
    }


def definition_of(version: LabelSchemaVersion) -> SchemaDefinition:
    """A stored version's questions (stored already checked and normalized)."""
    return SchemaDefinition.model_validate({"questions": version.questions}, strict=False)


# --- writing schemas ----------------------------------------------------------------------------


def create_label_schema(
    dataset: Dataset, *, author, name: str, questions: Any, instructions: str = ""
) -> LabelSchema:
    """A new schema of ``dataset`` with its first version (curators only)."""
    _require_curator(dataset, author)
    name = name.strip()
    if not name or len(name) > LabelSchema._meta.get_field("name").max_length:
        raise InvalidContent("A schema needs a name of 1 to 200 characters.", code="invalid-name")
    check_storable_text(name, "The name")
    definition = parse_definition(questions)
    check_storable_text(instructions, "The instructions")
    try:
        with transaction.atomic():
            schema = LabelSchema.objects.create(dataset=dataset, name=name, created_by=author)
            _add_version(schema, definition, instructions, author, number=1)
    except IntegrityError:
        raise LabelSchemaExists(f"The dataset has a schema named {name!r} already.") from None
    return schema


def new_schema_version(
    schema: LabelSchema,
    *,
    author,
    questions: Any,
    instructions: str = "",
    expected_version: int | None = None,
) -> tuple[LabelSchemaVersion, bool]:
    """Make ``questions``/``instructions`` the schema's current content: ``(version, created)``.

    The old versions stay as they are, with their answers. Content equal to the current
    version's makes no new version (``created`` False). ``expected_version``: the number the
    curator edited; a newer current version is a ``LabelSchemaChanged`` (409).
    """
    _require_curator(schema.dataset, author)
    definition = parse_definition(questions)
    check_storable_text(instructions, "The instructions")
    with transaction.atomic():
        # The row lock orders concurrent new versions: each sees the one before.
        locked = LabelSchema.objects.select_for_update().get(pk=schema.pk)
        current = locked.current_version
        if expected_version is not None and expected_version != current.number:
            raise LabelSchemaChanged(
                f"The schema is at version {current.number}, not {expected_version}: "
                "someone changed it since you read it.",
                details={"current_version": current.number},
            )
        if current.questions == definition.stored() and current.instructions == instructions:
            return current, False
        version = _add_version(locked, definition, instructions, author, current.number + 1)
    schema.current_version = version
    return version, True


def _add_version(
    schema: LabelSchema,
    definition: SchemaDefinition,
    instructions: str,
    author,
    number: int,
) -> LabelSchemaVersion:
    version = LabelSchemaVersion.objects.create(
        schema=schema,
        number=number,
        questions=definition.stored(),
        instructions=instructions,
        created_by=author,
    )
    schema.current_version = version
    schema.save(update_fields=["current_version"])
    return version


def set_archived(schema: LabelSchema, *, author, archived: bool) -> LabelSchema:
    """Archive a schema (no new answers; every version and answer kept) or bring it back."""
    _require_curator(schema.dataset, author)
    schema.archived_at = timezone.now() if archived else None
    schema.save(update_fields=["archived_at"])
    return schema


def _require_curator(dataset: Dataset, user) -> None:
    if not dataset.can_curate(user):
        raise NotAllowed("Only a curator of the dataset may change its label schemas.")
