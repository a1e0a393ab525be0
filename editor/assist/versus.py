"""Judge vs people: per judged question of a queue, how far the judge agrees with the
annotators, the confusion table (judge's answer by the people's answer) and the items where
they differ.

The people's answer of an item is the one most of its annotators gave (submitted answers
only); an item where they split evenly has none and is left out of the comparison. The
judge's answer is its newest suggestion about the item at the question's current version.
Agreement reuses ``editor.labels.agreement`` (the measure that fits the question's kind):
``versus_people`` takes the judge and the people's answer as two raters (Cohen's kappa);
``with_annotators`` counts the judge as one more annotator among them (kappa with one person,
Krippendorff's alpha with more). Suggestions are never among the people's answers here or
anywhere: they are read from their own table.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from editor.labels.agreement import for_question_kind
from editor.models import Annotation, AnnotationState, Judge, ReviewQueue, Suggestion
from editor.queues import answer_label, queue_questions

JUDGE = "judge"
COMPARABLE_KINDS = ("choice", "multi_choice", "rating")


def _hashable(value: Any) -> Any:
    return tuple(sorted(value)) if isinstance(value, list) else value


def people_answer(by_annotator: dict) -> Any:
    """The answer most annotators gave; None when the most common ones tie."""
    counts = Counter(_hashable(v) for v in by_annotator.values()).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return next(v for v in by_annotator.values() if _hashable(v) == counts[0][0])


def judge_answers(transcript_ids, version_id: int, question: str) -> dict[int, Any]:
    """The newest suggestion per transcript."""
    newest: dict[int, Any] = {}
    for transcript_id, value in (
        Suggestion.objects.filter(
            transcript__in=transcript_ids,
            schema_version_id=version_id,
            question=question,
            message_index__isnull=True,
        )
        .order_by("-created_at", "-pk")
        .values_list("transcript_id", "value")
    ):
        newest.setdefault(transcript_id, value)
    return newest


def judge_figures(queue: ReviewQueue) -> list[dict]:
    """Per question of the queue (about whole transcripts) that has a judge: ``agreement``
    (judge vs the people's answer), ``with_annotators`` (the judge as one more annotator),
    ``compared`` (items with both answers), ``confusion`` {"labels", "rows": [(label,
    [count per people's label])]} and ``disagreeing`` (transcript ids, in order)."""
    judged = {
        (j.schema_id, j.question) for j in Judge.objects.filter(schema__dataset=queue.dataset_id)
    }
    transcripts = queue.items.values("transcript_id")
    figures = []
    for schema, question in queue_questions(queue):
        if (schema.pk, question.key) not in judged or question.kind not in COMPARABLE_KINDS:
            continue
        version = schema.current_version_id
        people: dict[int, dict] = {}
        for transcript_id, annotator_id, value in Annotation.objects.filter(
            transcript__in=transcripts,
            schema_version_id=version,
            question=question.key,
            message_index__isnull=True,
            state=AnnotationState.SUBMITTED,
        ).values_list("transcript_id", "annotator_id", "value"):
            people.setdefault(transcript_id, {})[annotator_id] = value
        model = judge_answers(transcripts, version, question.key)
        pairs, together = {}, {}
        for transcript_id, by_annotator in people.items():
            if transcript_id not in model:
                continue
            together[transcript_id] = {**by_annotator, JUDGE: model[transcript_id]}
            majority = people_answer(by_annotator)
            if majority is not None:
                pairs[transcript_id] = {JUDGE: model[transcript_id], "people": majority}
        figures.append(
            {
                "schema": schema,
                "question": question,
                "judged_items": len(model),
                "compared": len(pairs),
                "agreement": for_question_kind(question.kind, pairs) if pairs else None,
                "with_annotators": (
                    for_question_kind(question.kind, together) if together else None
                ),
                "confusion": _confusion(question, pairs),
                "disagreeing": sorted(
                    pk
                    for pk, pair in pairs.items()
                    if _hashable(pair[JUDGE]) != _hashable(pair["people"])
                ),
            }
        )
    return figures


def _confusion(question, pairs: dict) -> dict:
    if question.kind == "rating":
        values = list(range(1, question.scale + 1))
    else:
        values = [option.value for option in question.options]
    if question.kind == "multi_choice":  # each combination seen is a category of its own
        seen = {_hashable(p[k]) for p in pairs.values() for k in (JUDGE, "people")}
        keys = sorted(seen)
        labels = [answer_label(question, list(k)) or "(none)" for k in keys]
    else:
        keys = values
        labels = [answer_label(question, v) for v in values]
    counts = Counter((_hashable(p[JUDGE]), _hashable(p["people"])) for p in pairs.values())
    return {
        "labels": labels,
        "rows": [
            (label, [counts.get((judge, person), 0) for person in keys])
            for judge, label in zip(keys, labels, strict=True)
        ],
    }


def to_dict(figure: dict) -> dict:
    """A figure as the API gives it."""
    return {
        "label_schema": figure["schema"].pk,
        "question": figure["question"].key,
        "judged_items": figure["judged_items"],
        "compared": figure["compared"],
        "agreement": figure["agreement"].to_dict() if figure["agreement"] else None,
        "with_annotators": (
            figure["with_annotators"].to_dict() if figure["with_annotators"] else None
        ),
        "confusion": {
            "judge_by_people": figure["confusion"]["labels"],
            "rows": [
                {"judge": label, "people": counts} for label, counts in figure["confusion"]["rows"]
            ],
        },
        "disagreeing": figure["disagreeing"],
    }
