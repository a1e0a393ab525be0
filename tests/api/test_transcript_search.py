"""GET /datasets/{slug}/transcripts?q=: the text search, per role, with hostile input."""

import pytest

from tests.api.conftest import assert_error
from tests.editor.test_search import HOSTILE

pytestmark = pytest.mark.django_db


def titles(client, dataset, **params) -> set[str]:
    response = client.get(f"/datasets/{dataset.slug}/transcripts", params)
    assert response.status_code == 200, response.content
    return {item["title"] for item in response.json()["items"]}


def test_q_finds_the_transcripts_with_the_words(as_viewer, as_annotator, dataset, searchable):
    assert titles(as_viewer, dataset, q="lighthouse") == {"visible"}
    assert titles(as_viewer, dataset, q="harbour") == {"visible", "hidden"}
    assert titles(as_annotator, dataset, q="harbour", has="analysis") == {"hidden"}
    # Which transcripts hold an analysis is not the viewer's to learn (docs/security.md).
    response = as_viewer.get(
        f"/datasets/{dataset.slug}/transcripts", {"q": "harbour", "has": "analysis"}
    )
    assert_error(response, 403, "filter-not-allowed")


@pytest.mark.parametrize("word", ["zephyr", "quasar", "walrus", "narwhal", "mango"])
def test_hidden_words_are_found_for_editors_only(
    as_annotator,
    as_viewer,
    dataset,
    searchable,
    word,
):
    assert titles(as_annotator, dataset, q=word) == {"hidden"}
    assert titles(as_viewer, dataset, q=word) == set()


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_fail(as_viewer, dataset, searchable, query):
    titles(as_viewer, dataset, q=query)


def test_a_too_long_query_is_a_422(as_viewer, dataset, searchable):
    response = as_viewer.get(f"/datasets/{dataset.slug}/transcripts", {"q": "x" * 10_000})
    assert_error(response, 422, "invalid-request")
