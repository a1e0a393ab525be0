"""GET /datasets/{slug}/transcripts: every filter, sorting and stable pages."""

import pytest

from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcripts
from tests.editor.samples import conversation

from .conftest import assert_error

pytestmark = pytest.mark.django_db

EVERY = {"plain", "tool call", "analysis", "system prompt", "truncated", "json"}


def titles(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["title"] for item in response.json()["items"]}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, EVERY),
        ({"status": "approved"}, {"system prompt"}),
        ({"spec": "openai-messages"}, {"json"}),
        ({"has_errors": "true"}, {"truncated"}),
        ({"code": "E-STREAM-TRUNCATED"}, {"truncated"}),
        ({"has": "tool_calls"}, {"tool call"}),
        ({"has": "analysis"}, {"analysis"}),
        ({"has": "system_prompt"}, {"system prompt"}),
        ({"has": ["analysis", "system_prompt"]}, set()),
        ({"updated_by": "curator"}, {"system prompt"}),
        ({"updated_since": "2021-01-01"}, EVERY - {"plain"}),
        (
            {"updated_since": "2021-01-01T00:00:00Z", "has_errors": "false"},
            EVERY - {"plain", "truncated"},
        ),
    ],
)
def test_filters(as_annotator, dataset, varied, params, expected):
    assert titles(as_annotator.get(f"/datasets/{dataset.slug}/transcripts", params)) == expected


@pytest.mark.parametrize(
    ("params", "refused"),
    [
        ({"has": "analysis"}, ["has"]),
        ({"code": "W-HEADER-MISSING"}, ["code"]),
        ({"has": "system_prompt", "code": "E-STREAM-TRUNCATED"}, ["has", "code"]),
    ],
)
def test_a_viewer_may_not_filter_by_what_they_are_not_shown(
    as_viewer, dataset, varied, params, refused
):
    response = as_viewer.get(f"/datasets/{dataset.slug}/transcripts", params)
    body = assert_error(response, 403, "filter-not-allowed")
    assert body["details"] == {"filters": refused}
    # What a count of errors says names no part: allowed.
    assert (
        as_viewer.get(f"/datasets/{dataset.slug}/transcripts", {"has_errors": "true"}).status_code
        == 200
    )


def test_sort_and_message_count(as_viewer, dataset, varied):
    body = as_viewer.get(f"/datasets/{dataset.slug}/transcripts", {"sort": "-messages"}).json()
    counts = [item["message_count"] for item in body["items"]]
    assert counts == sorted(counts, reverse=True)
    assert body["items"][0] == {**body["items"][0], "title": "json", "message_count": 6}


def test_default_order_is_oldest_first(as_viewer, dataset, varied):
    body = as_viewer.get(f"/datasets/{dataset.slug}/transcripts").json()
    assert [item["id"] for item in body["items"]] == sorted(t.pk for t in varied.values())


@pytest.mark.parametrize(
    "params", [{"sort": "source_text"}, {"has": "images"}, {"updated_since": "soon"}]
)
def test_unknown_values_are_a_422(as_viewer, dataset, params):
    assert_error(
        as_viewer.get(f"/datasets/{dataset.slug}/transcripts", params), 422, "invalid-request"
    )


def test_pages_of_a_sorted_list_neither_overlap_nor_skip(
    as_viewer, dataset, annotator, django_assert_max_num_queries
):
    content = TranscriptContent.from_text(conversation())
    create_transcripts(
        dataset, [NewTranscript(content, title=f"t{n % 7}") for n in range(120)], author=annotator
    )
    seen = []
    for offset in (0, 50, 100):
        # token lookup (+ last-used update), dataset, count, page
        with django_assert_max_num_queries(5):
            response = as_viewer.get(
                f"/datasets/{dataset.slug}/transcripts",
                {"sort": "-title", "offset": offset, "limit": 50},
            )
        seen += [(item["title"], item["id"]) for item in response.json()["items"]]
    assert len(seen) == len(set(seen)) == 120
    assert seen == sorted(seen, key=lambda pair: (pair[0], pair[1]), reverse=True)
