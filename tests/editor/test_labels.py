"""Label schemas (editor/labels.py): definitions checked with errors naming the question,
versions never rewritten, answers checked against their question's kind."""

from __future__ import annotations

import pytest

from editor import labels
from editor.errors import NotAllowed
from editor.labels import InvalidAnswer, InvalidLabelSchema, parse_definition
from editor.models import LabelSchemaVersion
from tests.support.label_questions import TOPIC

QUESTIONS = [
    TOPIC,
    {
        "key": "issues",
        "kind": "multi_choice",
        "prompt": "What went wrong?",
        "required": True,
        "options": [
            {"value": "rude", "label": "Rude"},
            {"value": "wrong", "label": "Wrong"},
            {"value": "slow", "label": "Slow"},
        ],
    },
    {
        "key": "helpful",
        "kind": "rating",
        "prompt": "How helpful is this answer?",
        "applies_to": "message",
        "roles": ["assistant"],
        "channels": ["final"],
        "scale": 5,
    },
    {"key": "comment", "kind": "text", "prompt": "Anything else?", "max_length": 20},
    {
        "key": "claims",
        "kind": "span",
        "prompt": "Tag hallucinations in the final answer",
        "channels": ["final"],
        "tags": [{"value": "hallucination", "label": "Hallucination", "key": "h"}],
    },
]


def question(key: str):
    return parse_definition(QUESTIONS).question(key)


def test_every_kind_is_accepted_and_normalized():
    definition = parse_definition(QUESTIONS)
    assert [q.kind for q in definition.questions] == [
        "choice",
        "multi_choice",
        "rating",
        "text",
        "span",
    ]
    by_key = {q.key: q for q in definition.questions}
    assert by_key["topic"].applies_to == "transcript"
    assert by_key["claims"].applies_to == "message"  # a span is always in one message
    assert by_key["issues"].required is True
    assert by_key["helpful"].required is False


def with_change(index: int, **changes) -> list[dict]:
    questions = [dict(q) for q in QUESTIONS]
    questions[index] = {**questions[index], **changes}
    return questions


@pytest.mark.parametrize(
    ("questions", "named", "says"),
    [
        (with_change(0, options=[{"value": "a", "label": "A"}]), "'topic'", "at least 2 options"),
        (
            with_change(0, options=[{"value": "a", "label": "A"}, {"value": "a", "label": "B"}]),
            "'topic'",
            "same value twice",
        ),
        (
            with_change(
                0,
                options=[{"value": "a", "label": "A", "key": "0"}, {"value": "b", "label": "B"}],
            ),
            "'topic'",
            "shortcut key '0'",
        ),
        (with_change(2, scale=None), "'helpful'", "needs a scale"),
        (with_change(2, scale=11), "'helpful'", "less than or equal to 10"),
        (with_change(2, options=QUESTIONS[0]["options"]), "'helpful'", "options is not used"),
        (with_change(3, kind="essay"), "'comment'", "Input should be"),
        (with_change(4, applies_to="transcript"), "'claims'", "applies to messages"),
        (with_change(4, tags=[]), "'claims'", "at least 1 tags"),
        (
            with_change(4, tags=[{"value": "x", "label": "X", "key": "j"}]),
            "'claims'",
            "other than j, k and s",
        ),
        (with_change(0, roles=["assistant"]), "'topic'", "narrow a question"),
        (with_change(1, key="Bad Key"), "'Bad Key'", "should match pattern"),
        (with_change(1, colour="red"), "'issues'", "Extra inputs"),
        (with_change(1, prompt=""), "'issues'", "at least 1 character"),
        (with_change(2, scale="5"), "'helpful'", "valid integer"),
        ([{"kind": "text", "prompt": "No key"}], "#1", "Field required"),
    ],
)
def test_bad_definitions_are_refused_naming_the_question(questions, named, says):
    with pytest.raises(InvalidLabelSchema) as raised:
        parse_definition(questions)
    error = raised.value
    assert error.status == 422 and error.code == "invalid-label-schema"
    assert error.message.startswith(f"Question {named}"), error.message
    assert says in error.message, error.message
    assert error.details[0]["question"] == named


@pytest.mark.parametrize(
    ("questions", "says"),
    [
        ([], "at least 1 item"),
        ("not a list", "valid list"),
        ([*QUESTIONS, QUESTIONS[0]], "same key"),
        (
            with_change(
                4,
                tags=[
                    {"value": "x", "label": "X", "key": "h"},
                    {"value": "y", "label": "Y", "key": "h"},
                ],
            ),
            "same shortcut key",
        ),
        (
            [*QUESTIONS, {**QUESTIONS[4], "key": "claims_2"}],
            "two span tags have the same shortcut key",
        ),
    ],
)
def test_bad_schemas_are_refused(questions, says):
    with pytest.raises(InvalidLabelSchema) as raised:
        parse_definition(questions)
    assert says in raised.value.message


@pytest.mark.parametrize(
    ("text", "code", "named"),
    [
        ("nul\x00", "unstorable-text", "Question 'topic' (#1)"),
        # pydantic itself refuses a string that is not valid Unicode
        ("lone \ud800 surrogate", "invalid-label-schema", "Question 'topic' (prompt)"),
    ],
)
def test_text_postgresql_cannot_store_is_refused_naming_the_question(text, code, named):
    with pytest.raises(labels.InvalidContent) as raised:
        parse_definition(with_change(0, prompt=text))
    assert raised.value.code == code
    assert raised.value.message.startswith(named), raised.value.message


@pytest.mark.parametrize(
    ("key", "good", "bad"),
    [
        ("topic", ["billing", "bug"], ["refund", 1, None, ["billing"]]),
        ("issues", [[], ["rude"], ["slow", "wrong"]], ["rude", ["rude", "rude"], ["other"]]),
        ("helpful", [1, 3, 5], [0, 6, 2.5, "3", True]),
        ("comment", ["Fine.", "x" * 20], ["", "   ", 3, "x" * 21, "nul\x00"]),
        ("claims", ["hallucination"], ["other", ["hallucination"]]),
    ],
)
def test_values_are_checked_against_their_question(key, good, bad):
    asked = question(key)
    for value in good:
        asked.check_value(value)
    for value in bad:
        with pytest.raises(labels.InvalidContent):
            asked.check_value(value)


def test_a_wrong_value_names_the_question_and_what_fits():
    with pytest.raises(InvalidAnswer) as raised:
        question("helpful").check_value(9)
    assert (
        raised.value.message == "Question 'helpful': the answer must be a whole number from 1 to 5."
    )
    assert raised.value.details == {"question": "helpful"}


# --- writing schemas -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_create_makes_version_1(dataset, curator):
    schema = labels.create_label_schema(
        dataset, author=curator, name="Quality", questions=QUESTIONS, instructions="# Read me"
    )
    assert schema.current_version.number == 1
    assert schema.current_version.instructions == "# Read me"
    assert [q["key"] for q in schema.current_version.questions] == [q["key"] for q in QUESTIONS]


@pytest.mark.django_db
def test_only_curators_write_schemas(dataset, annotator, curator):
    with pytest.raises(NotAllowed):
        labels.create_label_schema(dataset, author=annotator, name="Q", questions=QUESTIONS)
    schema = labels.create_label_schema(dataset, author=curator, name="Q", questions=QUESTIONS)
    with pytest.raises(NotAllowed):
        labels.new_schema_version(schema, author=annotator, questions=QUESTIONS)
    with pytest.raises(NotAllowed):
        labels.set_archived(schema, author=annotator, archived=True)


@pytest.mark.django_db
def test_names_are_unique_per_dataset(dataset, curator):
    labels.create_label_schema(dataset, author=curator, name="Q", questions=QUESTIONS)
    with pytest.raises(labels.LabelSchemaExists):
        labels.create_label_schema(dataset, author=curator, name="Q", questions=QUESTIONS)


@pytest.mark.django_db
def test_a_change_makes_a_new_version_and_keeps_the_old_one(dataset, curator):
    schema = labels.create_label_schema(dataset, author=curator, name="Q", questions=QUESTIONS)
    first = schema.current_version
    version, created = labels.new_schema_version(
        schema, author=curator, questions=QUESTIONS[:2], expected_version=1
    )
    assert created and version.number == 2
    assert schema.current_version == version
    first.refresh_from_db()
    assert len(first.questions) == len(QUESTIONS)  # never rewritten
    assert LabelSchemaVersion.objects.filter(schema=schema).count() == 2


@pytest.mark.django_db
def test_the_same_content_makes_no_new_version(dataset, curator):
    schema = labels.create_label_schema(dataset, author=curator, name="Q", questions=QUESTIONS)
    version, created = labels.new_schema_version(schema, author=curator, questions=QUESTIONS)
    assert not created and version.number == 1


@pytest.mark.django_db
def test_a_version_made_from_a_stale_one_is_a_conflict(dataset, curator):
    schema = labels.create_label_schema(dataset, author=curator, name="Q", questions=QUESTIONS)
    labels.new_schema_version(schema, author=curator, questions=QUESTIONS[:1], expected_version=1)
    with pytest.raises(labels.LabelSchemaChanged) as raised:
        labels.new_schema_version(
            schema, author=curator, questions=QUESTIONS[:2], expected_version=1
        )
    assert raised.value.status == 409
    assert raised.value.details == {"current_version": 2}


@pytest.mark.django_db
def test_a_bad_new_version_changes_nothing(dataset, curator):
    schema = labels.create_label_schema(dataset, author=curator, name="Q", questions=QUESTIONS)
    with pytest.raises(InvalidLabelSchema):
        labels.new_schema_version(schema, author=curator, questions=with_change(2, scale=1))
    schema.refresh_from_db()
    assert schema.current_version.number == 1
