"""Pairwise questions (editor/labels): the definition, the value's contract ({order, choice,
reason, ratings}) checked against the turn's alternatives, agreement by the alternative
chosen whatever order each annotator saw, and the queue's figures and review."""

from __future__ import annotations

import pytest

from editor import alternatives, labels, queues
from editor.errors import MissingAnswers, NotAllowed
from editor.labels import InvalidAnswer, InvalidLabelSchema, annotations, builder, parse_definition
from editor.labels.agreement import KAPPA, for_question_kind
from editor.models import Annotation, Membership, Role
from editor.storage.create import create_transcript

pytestmark = pytest.mark.django_db

PAIRWISE = {
    "key": "better",
    "kind": "pairwise",
    "prompt": "Which answer is better?",
    "reason": "optional",
    "rubric": [{"key": "helpful", "label": "Helpful", "min": 1, "max": 5}],
}


def chat(final: str = "Paris.") -> list[dict]:
    return [
        {"role": "user", "content": "Capital of France?", "end": "end"},
        {"role": "assistant", "channel": "final", "content": final, "end": "end"},
    ]


@pytest.fixture
def schema(dataset, curator):
    return labels.create_label_schema(dataset, author=curator, name="Prefs", questions=[PAIRWISE])


@pytest.fixture
def transcript(dataset, curator):
    transcript = create_transcript(
        dataset, author=curator, canonical={"spec": "openchatml-2.2", "messages": chat()}
    )
    alternatives.add_alternative(
        transcript,
        1,
        [{"role": "assistant", "content": "It is Paris, on the Seine."}],
        source="hand",
        author=curator,
    )
    return transcript


def ids(transcript) -> list[int]:
    return [a.pk for a in alternatives.candidates(transcript, 1)]


def give(transcript, user, schema, value, index=1):
    return annotations.create_annotation(
        transcript, annotator=user, schema=schema, question="better", value=value,
        message_index=index,
    )  # fmt: skip


# --- the definition -------------------------------------------------------------------------


def test_a_pairwise_question_is_about_turns_with_optional_reasons_by_default():
    [question] = parse_definition([{"key": "p", "kind": "pairwise", "prompt": "?"}]).questions
    assert (question.applies_to, question.reason, question.rubric) == ("turn", "optional", [])
    stored = parse_definition([PAIRWISE]).stored()[0]
    assert stored["rubric"] == PAIRWISE["rubric"] and stored["reason"] == "optional"


def test_other_kinds_are_stored_without_the_pairwise_fields():
    stored = parse_definition([{"key": "c", "kind": "text", "prompt": "?"}]).stored()[0]
    assert "rubric" not in stored and "reason" not in stored


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"applies_to": "transcript"}, ""),
        ({"reason": "sometimes"}, "reason"),
        ({"rubric": [{"key": "x", "label": "X", "min": 5, "max": 5}]}, "rubric"),
        ({"rubric": [{"key": "x", "label": "X"}, {"key": "x", "label": "Y"}]}, ""),
        ({"options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]}, ""),
    ],
)
def test_bad_pairwise_definitions_are_refused(change, field):
    with pytest.raises(InvalidLabelSchema) as refused:
        parse_definition([{**PAIRWISE, **change}])
    assert refused.value.details[0]["field"].startswith(field)


def test_only_a_pairwise_question_has_a_rubric_or_a_reason():
    with pytest.raises(InvalidLabelSchema, match="reason is not used"):
        parse_definition([{"key": "c", "kind": "text", "prompt": "?", "reason": "off"}])
    with pytest.raises(InvalidLabelSchema, match="applies to turns"):
        parse_definition([{"key": "c", "kind": "text", "prompt": "?", "applies_to": "turn"}])


# --- the value ------------------------------------------------------------------------------


def test_a_valid_answer_is_stored_as_given(transcript, annotator, schema):
    first, second = ids(transcript)
    value = {
        "order": [second, first],
        "choice": first,
        "reason": "More precise.",
        "ratings": {str(first): {"helpful": 5}, str(second): {"helpful": 3}},
    }
    answer = give(transcript, annotator, schema, value)
    assert Annotation.objects.get(pk=answer.pk).value == value
    assert answer.message_index == 1
    tie = {"order": [first, second], "choice": "tie"}
    assert annotations.update_annotation(answer, user=annotator, value=tie).value == tie


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda a, b: [a, b], "an object with order and choice"),
        (lambda a, b: {"order": [a, b]}, "an object with order and choice"),
        (lambda a, b: {"order": [a, b], "choice": a, "winner": a}, "unknown field 'winner'"),
        (lambda a, b: {"order": [a], "choice": a}, "2 or more distinct"),
        (lambda a, b: {"order": [a, a], "choice": a}, "2 or more distinct"),
        (lambda a, b: {"order": [str(a), b], "choice": b}, "2 or more distinct"),
        (lambda a, b: {"order": [a, b], "choice": 0}, "one of the ids in order"),
        (lambda a, b: {"order": [a, b], "choice": "left"}, "one of the ids in order"),
        (lambda a, b: {"order": [a, b], "choice": a, "reason": 3}, "reason must be text"),
        (lambda a, b: {"order": [a, b], "choice": a, "ratings": []}, "by alternative id"),
        (lambda a, b: {"order": [a, b], "choice": a, "ratings": {"9": {}}}, "not an alternative"),
        (
            lambda a, b: {"order": [a, b], "choice": a, "ratings": {str(a): {"tone": 1}}},
            "no criterion 'tone'",
        ),
        (
            lambda a, b: {"order": [a, b], "choice": a, "ratings": {str(a): {"helpful": 6}}},
            "from 1 to 5",
        ),
        (lambda a, b: {"order": [a, b + 1000], "choice": a}, "is not one of the turn's"),
    ],
)
def test_answers_that_break_the_contract_are_refused(transcript, annotator, schema, make, says):
    with pytest.raises(InvalidAnswer, match=says):
        give(transcript, annotator, schema, make(*ids(transcript)))
    assert not Annotation.objects.exists()


def test_alternatives_of_another_turn_or_transcript_are_refused(
    dataset, transcript, annotator, curator, schema
):
    other = create_transcript(
        dataset, author=curator, canonical={"spec": "openchatml-2.2", "messages": chat("Lyon?")}
    )
    alternatives.add_alternative(
        other, 1, [{"role": "assistant", "content": "Paris!"}], source="hand", author=curator
    )
    theirs = [a.pk for a in alternatives.candidates(other, 1)]
    with pytest.raises(InvalidAnswer, match="not one of the turn's"):
        give(transcript, annotator, schema, {"order": theirs, "choice": theirs[0]})
    with pytest.raises(InvalidAnswer, match="does not apply to message 0"):
        give(transcript, annotator, schema, {"order": ids(transcript), "choice": "tie"}, index=0)


def test_a_turn_without_two_alternatives_takes_no_answer(dataset, annotator, curator, schema):
    bare = create_transcript(
        dataset, author=curator, canonical={"spec": "openchatml-2.2", "messages": chat()}
    )
    with pytest.raises(InvalidAnswer, match="has 0 alternative"):
        give(bare, annotator, schema, {"order": [1, 2], "choice": 1})


def test_a_required_reason_and_no_reason_at_all(dataset, curator, annotator, transcript):
    required = labels.create_label_schema(
        dataset, author=curator, name="R", questions=[{**PAIRWISE, "reason": "required"}]
    )
    off = labels.create_label_schema(
        dataset, author=curator, name="O", questions=[{**PAIRWISE, "reason": "off"}]
    )
    a, b = ids(transcript)
    with pytest.raises(InvalidAnswer, match="give a reason"):
        give(transcript, annotator, required, {"order": [a, b], "choice": a, "reason": "  "})
    with pytest.raises(InvalidAnswer, match="asks for no reason"):
        give(transcript, annotator, off, {"order": [a, b], "choice": a, "reason": "because"})
    give(transcript, annotator, off, {"order": [a, b], "choice": a})


def test_viewers_answer_nothing(transcript, viewer, schema):
    with pytest.raises(NotAllowed):
        give(transcript, viewer, schema, {"order": ids(transcript), "choice": "tie"})


# --- agreement and results: the order shown never matters ------------------------------------


def test_agreement_compares_the_alternative_chosen_not_its_place():
    same_choice_other_order = {
        ("t1", 1): {"ann": {"order": [1, 2], "choice": 1}, "bob": {"order": [2, 1], "choice": 1}},
        ("t2", 1): {"ann": {"order": [3, 4], "choice": 4}, "bob": {"order": [4, 3], "choice": 4}},
        ("t3", 1): {"ann": {"order": [5, 6], "choice": "tie"}, "bob": {"order": [6, 5], "choice": "tie"}},
    }  # fmt: skip
    result = for_question_kind("pairwise", same_choice_other_order)
    assert (result.measure, result.value, result.items) == (KAPPA, 1.0, 3)
    # The same places chosen (the first shown), so other alternatives: no agreement.
    same_place = {
        item: {name: {**value, "choice": value["order"][0]} for name, value in by.items()}
        for item, by in list(same_choice_other_order.items())[:2]
    }
    assert for_question_kind("pairwise", same_place).value <= 0


def test_the_queue_shows_agreement_and_where_the_chosen_one_was_shown(
    dataset, curator, annotator, transcript, schema, django_user_model
):
    bob = django_user_model.objects.create_user("bob")
    Membership.objects.create(user=bob, dataset=dataset, role=Role.ANNOTATOR)
    queue = queues.create_queue(dataset, [transcript], name="P", author=curator, overlap=2)
    own, hand = ids(transcript)
    for user in (annotator, bob):
        assignment = queues.claim_next(queue, user)
        order = alternatives.shuffled_order([own, hand], user.pk, f"{transcript.pk}:1")
        give(transcript, user, schema, {"order": order, "choice": hand})
        queues.submit(assignment, user)

    [figure] = queues.label_figures(queue)
    assert figure["question"].key == "better"
    assert figure["agreement"].value is None  # one category only: kappa undefined
    assert figure["agreement"].items == 1
    places = dict(figure["distribution"])
    assert places["Shown first"] + places["Shown second"] == 2 and places["Tie"] == 0

    review = queues.item_review(queue.items.get())
    [compared] = review.messages[1].questions
    assert [label for _, label in compared.answers] == [f"alternative {hand}"] * 2
    assert not compared.disagree


def test_the_order_recorded_is_the_order_shown_and_results_name_ids(
    transcript, annotator, curator, schema
):
    own, hand = ids(transcript)
    order = alternatives.shuffled_order([own, hand], annotator.pk, f"{transcript.pk}:1")
    answer = give(transcript, annotator, schema, {"order": order, "choice": order[1]})
    assert answer.value["order"] == order
    assert queues.answer_label(schema_question(schema), answer.value) == f"alternative {order[1]}"


def schema_question(schema):
    return labels.definition_of(schema.current_version).question("better")


# --- the schema builder ---------------------------------------------------------------------


def test_the_builder_writes_and_reads_a_pairwise_question():
    row = {
        **builder.blank_row("pairwise", []),
        "prompt": "Which is better?",
        "reason": "required",
        "choices": "helpful | Helpful | 1 | 5\ntone",
    }
    question = builder.question_from_row(row)
    assert question == {
        "key": "pairwise_1",
        "kind": "pairwise",
        "prompt": "Which is better?",
        "required": False,
        "reason": "required",
        "rubric": [
            {"key": "helpful", "label": "Helpful", "min": 1, "max": 5},
            {"key": "tone", "label": "tone", "min": 1, "max": 5},
        ],
    }
    stored = parse_definition([question]).stored()[0]
    again = builder.row_from_question(stored)
    assert again["choices"] == "helpful | Helpful | 1 | 5\ntone | tone | 1 | 5"
    assert again["reason"] == "required"


def test_the_builder_page_offers_the_kind_and_marks_a_bad_rubric(client, curator, dataset):
    client.force_login(curator)
    url = f"/datasets/{dataset.slug}/labels/save/"
    added = client.post(url, {"action": "add:pairwise"}, headers={"HX-Request": "true"})
    html = added.content.decode()
    assert 'data-kind="pairwise"' in html and "Rubric" in html and 'name="q0-reason"' in html
    fields = {name: "" for name in builder.ROW_FIELDS}
    fields.update(key="better", kind="pairwise", prompt="Better?", reason="off", choices="x|X|3|2")
    posted = {"q": ["0"], "name": "Prefs", **{f"q0-{k}": v for k, v in fields.items()}}
    refused = client.post(url, posted).content.decode()
    assert "min must be below max" in refused
    posted["q0-choices"] = "x | X | 1 | 3"
    client.post(url, posted)
    [question] = labels.definition_of(labels.LabelSchema.objects.get().current_version).questions
    assert (question.kind, question.reason, question.rubric[0].max) == ("pairwise", "off", 3)


def test_a_required_comparison_is_answered_before_the_item_is_submitted(
    dataset, curator, annotator, transcript
):
    labels.create_label_schema(
        dataset, author=curator, name="Must", questions=[{**PAIRWISE, "required": True}]
    )
    queue = queues.create_queue(dataset, [transcript], name="P", author=curator)
    assignment = queues.claim_next(queue, annotator)
    with pytest.raises(MissingAnswers, match=r"Which answer is better\? \(message #1\)"):
        queues.submit(assignment, annotator)
    schema = labels.LabelSchema.objects.get(name="Must")
    give(transcript, annotator, schema, {"order": ids(transcript), "choice": "tie"})
    assert queues.submit(assignment, annotator).state == "submitted"
