"""Agreement between annotators: Cohen's kappa for two, Krippendorff's alpha for more.

Answers come as ``{item: {annotator: value}}`` (an item is whatever was labelled: a
transcript, a message, …). Which measure and which level of measurement fit a question depend
on its kind (``for_question_kind``):

| kind | two annotators | more annotators |
|---|---|---|
| choice | Cohen's kappa | Krippendorff's alpha, nominal |
| rating | Cohen's kappa, linearly weighted | Krippendorff's alpha, ordinal |
| multi_choice | per option (chosen or not): as choice, averaged over the options | same |
| pairwise | as choice, on the alternative chosen (its id, or "tie") | same |
| text, span | none: free text and character ranges have no agreement measure here | none |

Cohen's kappa is computed here (a few lines, checked against published worked examples);
Krippendorff's alpha comes from the ``krippendorff`` package (checked against Krippendorff's
own example, 2011). Items one annotator alone answered count for alpha (it handles missing
values) but not for kappa (which needs both). Pairwise answers are compared by the
alternative chosen, never by its place: each annotator is shown the candidates in an order
of their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NOMINAL, ORDINAL = "nominal", "ordinal"
KAPPA, ALPHA = "cohen_kappa", "krippendorff_alpha"
NO_MEASURE_KINDS = frozenset({"text", "span"})


@dataclass(frozen=True)
class Agreement:
    measure: str  # cohen_kappa | krippendorff_alpha
    level: str  # nominal | ordinal
    value: float | None  # None: not enough data to say (one category only, no shared item…)
    items: int  # items that took part
    annotators: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "level": self.level,
            "value": self.value,
            "items": self.items,
            "annotators": self.annotators,
        }


def cohen_kappa(
    pairs: Sequence[tuple[Hashable, Hashable]], *, weights: str | None = None
) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (``(first, second)`` pairs).

    ``weights="linear"`` weighs disagreements by their distance on the numeric scale of the
    labels (weighted kappa for ratings). None when chance agreement is total (every label the
    same category), where kappa is undefined.
    """
    if not pairs:
        return None
    categories = sorted({label for pair in pairs for label in pair})
    n = len(pairs)
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    observed = Counter(pairs)
    span = (max(categories) - min(categories)) if weights == "linear" else None

    def disagreement(a, b) -> float:
        if weights == "linear":
            return abs(a - b) / span if span else 0.0
        return 0.0 if a == b else 1.0

    seen = sum(disagreement(a, b) * count for (a, b), count in observed.items()) / n
    expected = sum(
        disagreement(a, b) * first[a] * second[b] for a in categories for b in categories
    ) / (n * n)
    if expected == 0:
        return None
    return 1 - seen / expected


def krippendorff_alpha(
    answers: Mapping[Hashable, Mapping[Hashable, Any]], *, level: str = NOMINAL
) -> float | None:
    """Krippendorff's alpha over ``{item: {annotator: value}}`` (missing answers allowed)."""
    # Deliberately lazy: numpy and krippendorff cost a tenth of a second to import, and only
    # the queue dashboard computes alpha.
    import krippendorff
    import numpy as np

    annotators = sorted({a for by_annotator in answers.values() for a in by_annotator}, key=str)
    values = sorted(
        {v for by_annotator in answers.values() for v in by_annotator.values()}, key=str
    )
    if len(annotators) < 2 or len(values) < 2:
        return None
    # Nominal codes need not be numbers; ordinal ones keep their order.
    code = (
        {v: float(v) for v in values} if level == ORDINAL else {v: i for i, v in enumerate(values)}
    )
    matrix = np.full((len(annotators), len(answers)), np.nan)
    for column, by_annotator in enumerate(answers.values()):
        for row, annotator in enumerate(annotators):
            if annotator in by_annotator:
                matrix[row, column] = code[by_annotator[annotator]]
    try:
        return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    except ValueError:  # no item with two answers: nothing to compare
        return None


def agreement(
    answers: Mapping[Hashable, Mapping[Hashable, Any]], *, level: str = NOMINAL
) -> Agreement:
    """Kappa when exactly two annotators answered, alpha when more did."""
    annotators = {a for by_annotator in answers.values() for a in by_annotator}
    if len(annotators) == 2:
        first, second = sorted(annotators, key=str)
        pairs = [(by[first], by[second]) for by in answers.values() if first in by and second in by]
        weights = "linear" if level == ORDINAL else None
        return Agreement(KAPPA, level, cohen_kappa(pairs, weights=weights), len(pairs), 2)
    shared = {item: by for item, by in answers.items() if len(by) >= 2}
    return Agreement(
        ALPHA, level, krippendorff_alpha(shared, level=level), len(shared), len(annotators)
    )


def for_question_kind(
    kind: str, answers: Mapping[Hashable, Mapping[Hashable, Any]]
) -> Agreement | None:
    """The agreement that fits a question of ``kind`` (see the table above); None for kinds
    without a measure. Multi-choice answers are lists of the options chosen."""
    if kind in NO_MEASURE_KINDS:
        return None
    if kind == "rating":
        return agreement(answers, level=ORDINAL)
    if kind == "multi_choice":
        return _per_option(answers)
    if kind == "pairwise":
        return agreement(
            {item: {a: chosen(value) for a, value in by.items()} for item, by in answers.items()}
        )
    return agreement(answers, level=NOMINAL)


def chosen(pairwise_value: Mapping[str, Any]) -> str:
    """What a pairwise answer says: the id of the alternative chosen, or "tie" (as text: the
    measures sort the categories, and ids and "tie" do not compare)."""
    return str(pairwise_value["choice"])


def _per_option(answers: Mapping[Hashable, Mapping[Hashable, Sequence]]) -> Agreement | None:
    options = sorted(
        {o for by in answers.values() for chosen in by.values() for o in chosen}, key=str
    )
    results = [
        agreement(
            {
                item: {annotator: option in chosen for annotator, chosen in by.items()}
                for item, by in answers.items()
            }
        )
        for option in options
    ]
    defined = [r.value for r in results if r.value is not None]
    if not results:
        return None
    first = results[0]
    return Agreement(
        first.measure,
        NOMINAL,
        sum(defined) / len(defined) if defined else None,
        first.items,
        first.annotators,
    )
