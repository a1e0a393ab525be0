"""The expensive routes answer 429 with Retry-After past a caller's budget, per caller and per
kind; the cheap ones are never counted; a cache that fails lets requests through."""

from __future__ import annotations

from unittest import mock

import pytest
from django.test import override_settings

from editor.storage.create import create_transcript
from tests.editor.samples import conversation

from .conftest import api_client_for, assert_error

pytestmark = pytest.mark.django_db

TWO_RENDERS = override_settings(OCM_THROTTLES={"render": (2, 60), "search": (2, 60)})


@pytest.fixture
def transcript(dataset, curator):
    return create_transcript(dataset, text=conversation(), author=curator)


@TWO_RENDERS
def test_a_caller_past_the_render_budget_waits(as_curator, as_annotator, transcript):
    path = f"/transcripts/{transcript.pk}/render"
    for _ in range(2):
        assert as_curator.get(path).status_code == 200
    response = as_curator.get(path)
    body = assert_error(response, 429, "too-many-requests")
    assert 1 <= int(response["Retry-After"]) <= 60
    assert body["details"]["kind"] == "render"
    assert body["details"]["limit"] == 2
    # Another caller has a budget of their own; a cheap route is never counted.
    assert as_annotator.get(path).status_code == 200
    assert as_curator.get(f"/transcripts/{transcript.pk}").status_code == 200


@TWO_RENDERS
def test_two_tokens_of_one_user_are_two_callers(curator, transcript):
    path = f"/transcripts/{transcript.pk}/render"
    first, second = api_client_for(curator), api_client_for(curator)
    for _ in range(2):
        first.get(path)
    assert first.get(path).status_code == 429
    assert second.get(path).status_code == 200


@TWO_RENDERS
def test_a_list_is_a_search_only_with_words(as_curator, dataset, transcript):
    path = f"/datasets/{dataset.slug}/transcripts"
    for _ in range(5):
        assert as_curator.get(path).status_code == 200
    for _ in range(2):
        assert as_curator.get(path, {"q": "hello"}).status_code == 200
    assert_error(as_curator.get(path, {"q": "hello"}), 429, "too-many-requests")


@TWO_RENDERS
def test_pages_get_a_429_page_and_htmx_a_toast(client, curator, transcript, dataset):
    client.force_login(curator)
    source = f"/transcripts/{transcript.pk}/source/"
    for _ in range(2):
        assert client.get(source).status_code == 200
    page = client.get(source)
    assert page.status_code == 429
    assert "Too many render requests" in page.content.decode()
    assert page["Retry-After"]

    search = f"/datasets/{dataset.slug}/"
    for _ in range(2):
        client.get(search, {"q": "hi"}, headers={"HX-Request": "true"})
    fragment = client.get(search, {"q": "hi"}, headers={"HX-Request": "true"})
    assert fragment.status_code == 429
    assert fragment["HX-Reswap"] == "none"
    assert "Too many search requests" in fragment.content.decode()


@TWO_RENDERS
def test_the_debug_rendering_is_counted_the_others_are_not(client, curator, transcript):
    client.force_login(curator)
    page = f"/transcripts/{transcript.pk}/"
    for _ in range(4):
        assert client.get(page, {"audience": "annotator"}).status_code == 200
    for _ in range(2):
        assert client.get(page, {"audience": "debug"}).status_code == 200
    assert client.get(page, {"audience": "debug"}).status_code == 429


@TWO_RENDERS
def test_a_cache_that_does_not_answer_lets_requests_through(as_curator, transcript):
    path = f"/transcripts/{transcript.pk}/render"
    with mock.patch("editor.throttling.cache.incr", side_effect=ConnectionError("down")):
        for _ in range(4):
            assert as_curator.get(path).status_code == 200


@override_settings(OCM_THROTTLES={"format": (1, 60)})
def test_the_stateless_format_routes_are_counted(as_curator):
    body = {"text": "<|im_start|>user\nHi<|im_end|>\n", "spec": "openchatml-0.1"}
    assert as_curator.post("/validate", body).status_code == 200
    assert_error(as_curator.post("/convert", {**body, "to": "chatml"}), 429, "too-many-requests")
