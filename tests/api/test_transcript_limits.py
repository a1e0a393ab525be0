"""One transcript is bounded in bytes and messages wherever it comes from: create, save,
message edits, raw mode and an import's item get ``transcript-too-large`` (422) and nothing
is written (OCM_MAX_TRANSCRIPT_BYTES, OCM_MAX_TRANSCRIPT_MESSAGES)."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from editor.models import Transcript

from .conftest import assert_error
from .test_imports_exports import upload

pytestmark = pytest.mark.django_db


def chatml(messages: int, size: int = 5) -> str:
    body = "x" * size
    return "".join(
        f"<|start|>{'user' if i % 2 == 0 else 'assistant'}<|message|>{body}<|end_message|>\n"
        for i in range(messages)
    )


@override_settings(OCM_MAX_TRANSCRIPT_MESSAGES=4)
def test_a_transcript_with_too_many_messages_is_refused_on_create(as_curator, dataset):
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts", {"text": chatml(5), "spec": "chatml"}
    )
    body = assert_error(response, 422, "transcript-too-large")
    assert body["details"] == {"max_messages": 4, "messages": 5}
    assert not Transcript.all_objects.exists()


@override_settings(OCM_MAX_TRANSCRIPT_BYTES=1000)
def test_a_transcript_of_too_many_bytes_is_refused_before_it_is_parsed(as_curator, dataset):
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts", {"text": chatml(2, size=600), "spec": "chatml"}
    )
    body = assert_error(response, 422, "transcript-too-large")
    assert body["details"] == {"max_bytes": 1000}
    assert not Transcript.all_objects.exists()


def test_bytes_are_counted_in_utf8_not_in_characters(as_curator, dataset):
    text = chatml(1, size=300).replace("x", "é")  # 300 characters, 600 bytes of body
    with override_settings(OCM_MAX_TRANSCRIPT_BYTES=len(text) + 10):
        response = as_curator.post(
            f"/datasets/{dataset.slug}/transcripts", {"text": text, "spec": "chatml"}
        )
    assert_error(response, 422, "transcript-too-large")


@pytest.fixture
def four(as_curator, dataset):
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts", {"text": chatml(4), "spec": "chatml"}
    )
    assert response.status_code == 201, response.content
    return Transcript.objects.get(pk=response.json()["id"])


def assert_unchanged(transcript: Transcript) -> None:
    stored = Transcript.objects.get(pk=transcript.pk)
    assert (stored.version, stored.message_count) == (1, 4)
    assert stored.revisions.count() == 1


@override_settings(OCM_MAX_TRANSCRIPT_MESSAGES=4)
def test_an_insert_past_the_limit_is_refused(as_curator, four):
    response = as_curator.post(f"/transcripts/{four.pk}/messages", {"version": 1})
    assert_error(response, 422, "transcript-too-large")
    assert_unchanged(four)


@override_settings(OCM_MAX_TRANSCRIPT_MESSAGES=4)
def test_a_save_of_a_longer_text_is_refused(as_curator, four):
    response = as_curator.put(f"/transcripts/{four.pk}", {"expected_version": 1, "text": chatml(6)})
    assert_error(response, 422, "transcript-too-large")
    assert_unchanged(four)


@override_settings(OCM_MAX_TRANSCRIPT_BYTES=2000)
def test_raw_mode_refuses_a_text_past_the_limit_with_a_form_message(client, curator, four):
    client.force_login(curator)
    response = client.post(
        f"/transcripts/{four.pk}/source/",
        {"text": chatml(4, size=600), "version": 1, "spec": "chatml"},
    )
    assert response.status_code in (200, 422), response.status_code
    assert b"OCM_MAX_TRANSCRIPT_BYTES" in response.content
    assert_unchanged(four)


@override_settings(OCM_MAX_TRANSCRIPT_MESSAGES=3)
def test_an_import_reports_the_item_past_the_limit_and_keeps_the_others(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    lines = "".join(
        json.dumps({"id": name, "spec": "chatml", "text": chatml(count)}) + "\n"
        for name, count in (("small", 2), ("huge", 9))
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug, lines, partial="true")
    done = as_annotator.get(f"/imports/{response.json()['id']}").json()
    assert done["report"]["counts"]["created"] == 1, done
    assert done["report"]["counts"]["failed"] == 1
    assert "OCM_MAX_TRANSCRIPT_MESSAGES" in json.dumps(done["report"])
    assert list(Transcript.objects.values_list("external_id", flat=True)) == ["small"]
