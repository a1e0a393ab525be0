"""Filtering transcripts by label: the ``holds`` lookup, the dataset page, bulk and the API."""

from __future__ import annotations

import pytest

from editor.errors import InvalidContent
from editor.labels import create_label_schema
from editor.labels.annotations import create_annotation, submit_annotation
from editor.labels.filters import filter_choices, parse_label_filter, pickable_questions
from editor.models import Transcript, TranscriptFilter
from tests.editor.test_dataset_pages import add_transcripts, row_ids

pytestmark = pytest.mark.django_db

QUESTIONS = [
    {
        "key": "topic",
        "kind": "choice",
        "prompt": "Topic?",
        "options": [{"value": "billing", "label": "Billing"}, {"value": "bug", "label": "A bug"}],
    },
    {
        "key": "issues",
        "kind": "multi_choice",
        "prompt": "Issues?",
        "options": [{"value": "rude", "label": "Rude"}, {"value": "wrong", "label": "Wrong"}],
    },
    {"key": "quality", "kind": "rating", "prompt": "Quality?", "scale": 5},
    {"key": "note", "kind": "text", "prompt": "Notes"},
]


@pytest.fixture
def labelled(dataset, curator, annotator):
    """Four transcripts: t0000 billing / [rude, wrong] / 3, t0001 bug / [wrong] / 5 and a
    draft answer billing (not submitted), t0002 answered "3" as text only, t0003 nothing."""
    schema = create_label_schema(dataset, author=curator, name="Triage", questions=QUESTIONS)
    add_transcripts(dataset, curator, 4)
    t = {row.title: row for row in Transcript.objects.filter(dataset=dataset)}

    def answer(title, question, value, user=annotator, submit=True):
        made = create_annotation(
            t[title], annotator=user, schema=schema, question=question, value=value
        )
        if submit:
            submit_annotation(made, user=user)

    answer("t0000", "topic", "billing")
    answer("t0000", "issues", ["rude", "wrong"])
    answer("t0000", "quality", 3)
    answer("t0001", "topic", "bug")
    answer("t0001", "issues", ["wrong"])
    answer("t0001", "quality", 5)
    answer("t0001", "topic", "billing", user=curator, submit=False)
    answer("t0002", "note", "3")
    return dataset


def titles(dataset, label) -> set[str]:
    rows = Transcript.objects.filter(dataset=dataset).matching(TranscriptFilter(label=label))
    return {row.title for row in rows}


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        (("topic", "billing"), {"t0000"}),  # a draft answer does not count
        (("topic", "bug"), {"t0001"}),
        (("issues", "wrong"), {"t0000", "t0001"}),  # one of a multi-choice answer's options
        (("issues", "rude"), {"t0000"}),
        (("quality", 3), {"t0000"}),
        (("quality", "3"), set()),  # the rating 3 is a number, not the text "3"
        (("note", "3"), {"t0002"}),
        (("quality", 4), set()),
    ],
)
def test_a_label_filter_keeps_the_transcripts_with_that_submitted_answer(labelled, label, expected):
    assert titles(labelled, label) == expected


def test_the_choices_are_the_answers_one_can_pick(labelled):
    groups = dict(filter_choices(pickable_questions(labelled)))
    assert groups["Topic?"] == [
        ("topic:billing", "Billing (topic)"),
        ("topic:bug", "A bug (topic)"),
    ]
    assert groups["Quality?"][0] == ("quality:1", "1 of 5 (quality)")
    assert "Notes" not in groups  # free text: nothing to pick


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("topic", "QUESTION:VALUE"),
        ("nope:billing", "No active label question"),
        ("topic:refund", "not an answer"),
        ("quality:9", "not an answer"),
        ("note:3", "No active label question"),  # free text: nothing to pick
    ],
)
def test_bad_label_filters_are_refused_with_what_is_wrong(labelled, token, message):
    with pytest.raises(InvalidContent) as refused:
        parse_label_filter(pickable_questions(labelled), token)
    assert refused.value.code == "invalid-filter"
    assert message in str(refused.value)


def test_the_dataset_page_filters_by_label_and_keeps_it_in_the_url(client, curator, labelled):
    client.force_login(curator)
    response = client.get(f"/datasets/{labelled.slug}/", {"label": "issues:wrong"})
    html = response.content.decode()
    assert len(row_ids(html)) == 2
    assert '<option value="issues:wrong" selected>Wrong (issues)</option>' in html
    assert '<optgroup label="Issues?">' in html
    # An unknown answer is shown as the field's error and ignored.
    bad = client.get(f"/datasets/{labelled.slug}/", {"label": "topic:refund"}).content.decode()
    assert len(row_ids(bad)) == 4 and "Select a valid choice" in bad


def test_a_dataset_without_labels_offers_no_label_filter(client, curator, dataset):
    client.force_login(curator)
    assert 'name="label"' not in client.get(f"/datasets/{dataset.slug}/").content.decode()


def test_the_api_list_filters_by_label(client, curator, labelled):
    client.force_login(curator)
    url = f"/api/v1/datasets/{labelled.slug}/transcripts"
    found = client.get(url, {"label": "quality:5"}).json()
    assert [item["title"] for item in found["items"]] == ["t0001"]
    refused = client.get(url, {"label": "quality:five"})
    assert refused.status_code == 422 and refused.json()["code"] == "invalid-filter"


def test_bulk_everything_matching_a_label(client, curator, labelled):
    client.force_login(curator)
    response = client.post(
        f"/api/v1/datasets/{labelled.slug}/bulk",
        {"action": "transition", "transition": "submit", "filter": {"label": "issues:wrong"}},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    statuses = dict(Transcript.objects.filter(dataset=labelled).values_list("title", "status"))
    assert statuses == {
        "t0000": "in_review",
        "t0001": "in_review",
        "t0002": "draft",
        "t0003": "draft",
    }


def test_a_label_filter_on_a_dataset_without_labels_is_refused_not_ignored(
    client, curator, dataset
):
    add_transcripts(dataset, curator, 2)
    client.force_login(curator)
    response = client.post(
        f"/api/v1/datasets/{dataset.slug}/bulk",
        {"action": "transition", "transition": "submit", "filter": {"label": "topic:billing"}},
        content_type="application/json",
    )
    assert response.status_code == 422 and response.json()["code"] == "invalid-filter"
    assert set(Transcript.objects.values_list("status", flat=True)) == {"draft"}
    listed = client.get(f"/api/v1/datasets/{dataset.slug}/transcripts", {"label": "topic:billing"})
    assert listed.status_code == 422
