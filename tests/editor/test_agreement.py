"""Agreement figures against published worked examples and hand computations."""

from __future__ import annotations

import pytest

from editor.labels.agreement import (
    ALPHA,
    KAPPA,
    agreement,
    cohen_kappa,
    for_question_kind,
    krippendorff_alpha,
)


def pairs(counts: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    return [pair for pair, count in counts.items() for _ in range(count)]


def test_cohen_kappa_of_the_textbook_example():
    """Two readers, 50 proposals: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no:
    p_o = 0.7, p_e = 0.5, kappa = 0.4 (the worked example of Cohen's kappa on Wikipedia)."""
    data = pairs({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    assert cohen_kappa(data) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("counts", "kappa"),
    [
        # Same agreement (60 %), different marginals: Wikipedia's "same percentages" pair.
        ({("yes", "yes"): 45, ("yes", "no"): 15, ("no", "yes"): 25, ("no", "no"): 15}, 0.1304),
        ({("yes", "yes"): 25, ("yes", "no"): 35, ("no", "yes"): 5, ("no", "no"): 35}, 0.2593),
    ],
)
def test_cohen_kappa_depends_on_the_marginals(counts, kappa):
    assert cohen_kappa(pairs(counts)) == pytest.approx(kappa, abs=1e-4)


def test_linearly_weighted_kappa_by_hand():
    # Disagreements 0, 1/2, 0, 1/2 -> observed 0.25; expected from the marginals 8/16 = 0.5.
    assert cohen_kappa([(1, 1), (2, 3), (3, 3), (1, 2)], weights="linear") == pytest.approx(0.5)


def test_kappa_is_undefined_when_everyone_says_the_same():
    assert cohen_kappa([("a", "a"), ("a", "a")]) is None
    assert cohen_kappa([]) is None


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example of section C:
# four observers, twelve units, missing values; published alpha nominal 0.743, interval 0.849.
OBSERVERS = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}
UNITS = {
    unit: {o: values[unit] for o, values in OBSERVERS.items() if values[unit] is not None}
    for unit in range(12)
}


def test_krippendorff_alpha_of_the_published_example():
    assert krippendorff_alpha(UNITS, level="nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(UNITS, level="ordinal") == pytest.approx(0.815, abs=5e-4)


def test_two_annotators_get_kappa_more_get_alpha():
    two = agreement({1: {"x": "a", "y": "a"}, 2: {"x": "b", "y": "a"}, 3: {"x": "b", "y": "b"}})
    assert two.measure == KAPPA and two.items == 3 and two.annotators == 2
    many = agreement(UNITS)
    assert many.measure == ALPHA and many.annotators == 4
    assert many.items == 11  # unit 12 has one answer only


def test_question_kinds_pick_their_measure_and_level():
    rating = for_question_kind("rating", UNITS)
    assert (rating.measure, rating.level) == (ALPHA, "ordinal")
    assert rating.value == pytest.approx(0.815, abs=5e-4)
    assert for_question_kind("text", UNITS) is None
    assert for_question_kind("span", UNITS) is None
    multi = for_question_kind(
        "multi_choice",
        {1: {"x": ["a", "b"], "y": ["a"]}, 2: {"x": ["b"], "y": ["b"]}, 3: {"x": [], "y": ["a"]}},
    )
    assert multi.measure == KAPPA and multi.level == "nominal"
    # option a: (T,T) (F,F) (F,T) -> kappa 0.4; option b: (T,F) (T,T) (F,F) -> kappa 0.4
    assert multi.value == pytest.approx(0.4)
