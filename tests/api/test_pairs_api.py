"""The preference pairs routes (api/routers/pairs.py): who reads them (not viewers: pairs
hold hidden channels), pages and filters, and who excludes a pair (a curator or its author)."""

from __future__ import annotations

import pytest

from editor import editing
from editor.models import PreferencePair, Transcript
from editor.storage.save import delete_transcript

from .conftest import api_client_for, assert_error

pytestmark = pytest.mark.django_db

ANSWER = 1  # the conversation fixture: user, assistant, user, assistant


def edit(transcript: Transcript, index: int, text: str, author) -> Transcript:
    current = Transcript.objects.get(pk=transcript.pk)
    editing.edit_message(
        current, index, {"content": text}, expected_version=current.version, author=author
    )
    return Transcript.objects.get(pk=transcript.pk)


@pytest.fixture
def edited(transcript, annotator, curator):
    edit(transcript, ANSWER, "A better answer.", annotator)
    edit(transcript, 3, "Another answer.", curator)
    return transcript


def test_a_transcripts_pairs_with_their_messages(as_annotator, edited, annotator):
    response = as_annotator.get(f"/transcripts/{edited.pk}/pairs")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == 2
    newest, oldest = body["items"]
    assert (newest["message_index"], oldest["message_index"]) == (3, ANSWER)
    assert oldest["author"] == annotator.username
    assert oldest["source"] == "edit"
    assert oldest["revision"] == 2
    assert oldest["excluded"] is False and oldest["excluded_by"] is None
    [chosen] = oldest["chosen"]
    assert (chosen["role"], chosen["content"]) == ("assistant", "A better answer.")
    assert oldest["rejected"][0]["content"] == "Answer 0."
    assert [m["role"] for m in oldest["prompt"]] == ["user"]
    assert len(newest["prompt"]) == 3
    assert newest["prompt"][ANSWER]["content"] == "A better answer."


def test_viewers_do_not_read_pairs_outsiders_do_not_find_them(as_viewer, as_outsider, edited):
    assert_error(as_viewer.get(f"/transcripts/{edited.pk}/pairs"), 403, "E-PERM-VISIBILITY")
    assert_error(as_viewer.get(f"/datasets/{edited.dataset.slug}/pairs"), 403, "E-PERM-VISIBILITY")
    pair = PreferencePair.objects.first()
    assert_error(as_viewer.post(f"/pairs/{pair.pk}/exclude"), 403, "E-PERM-VISIBILITY")
    assert as_outsider.get(f"/transcripts/{edited.pk}/pairs").status_code == 404
    assert as_outsider.get(f"/datasets/{edited.dataset.slug}/pairs").status_code == 404
    assert as_outsider.post(f"/pairs/{pair.pk}/exclude").status_code == 404
    assert as_outsider.post("/pairs/999999/include").status_code == 404


def test_a_datasets_pairs_page_and_filter(as_curator, as_annotator, edited, annotator):
    slug = edited.dataset.slug
    body = as_curator.get(f"/datasets/{slug}/pairs", {"limit": 1}).json()
    assert body["count"] == 2 and len(body["items"]) == 1
    assert "prompt" not in body["items"][0]
    assert body["items"][0]["transcript"] == edited.pk

    mine = PreferencePair.objects.get(author=annotator)
    response = as_annotator.post(f"/pairs/{mine.pk}/exclude")
    assert response.status_code == 200, response.content
    assert response.json()["excluded"] is True
    assert response.json()["excluded_by"] == annotator.username

    excluded = as_curator.get(f"/datasets/{slug}/pairs", {"excluded": "true"}).json()
    assert [p["id"] for p in excluded["items"]] == [mine.pk]
    included = as_curator.get(f"/datasets/{slug}/pairs", {"excluded": "false"}).json()
    assert mine.pk not in [p["id"] for p in included["items"]] and included["count"] == 1
    assert as_curator.get(f"/datasets/{slug}/pairs", {"source": "import"}).json()["count"] == 0
    assert as_curator.get(f"/datasets/{slug}/pairs", {"source": "pairwise"}).status_code == 422
    assert as_curator.get(f"/datasets/{slug}/pairs", {"limit": 500}).status_code == 422


def test_only_a_curator_or_the_author_excludes(as_annotator, as_curator, edited, reviewer, curator):
    theirs = PreferencePair.objects.get(author=curator)
    assert_error(as_annotator.post(f"/pairs/{theirs.pk}/exclude"), 403, "forbidden")
    assert_error(api_client_for(reviewer).post(f"/pairs/{theirs.pk}/exclude"), 403, "forbidden")
    assert PreferencePair.objects.get(pk=theirs.pk).excluded_at is None

    mine_of_annotator = PreferencePair.objects.exclude(pk=theirs.pk).get()
    assert as_curator.post(f"/pairs/{mine_of_annotator.pk}/exclude").json()["excluded"] is True
    back = as_annotator.post(f"/pairs/{mine_of_annotator.pk}/include")
    assert back.status_code == 200 and back.json()["excluded"] is False
    assert back.json()["excluded_at"] is None


def test_pairs_of_a_deleted_transcript(as_curator, edited, curator):
    pair = PreferencePair.objects.first()
    delete_transcript(Transcript.objects.get(pk=edited.pk), author=curator)
    assert_error(as_curator.get(f"/transcripts/{edited.pk}/pairs"), 410, "transcript-deleted")
    assert as_curator.get(f"/datasets/{edited.dataset.slug}/pairs").json()["count"] == 0
    assert as_curator.post(f"/pairs/{pair.pk}/exclude").status_code == 404
