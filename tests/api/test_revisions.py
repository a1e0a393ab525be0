"""Revision history over HTTP: list, show, diff, restore (version-checked)."""

import pytest

from editor.storage.save import save_transcript

from .conftest import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def edited(transcript, annotator):
    """The shared transcript at version 2: retitled and its second message rewritten."""
    messages = [m.to_dict() for m in transcript.canonical().messages]
    messages[1]["content"] = "Answer zero."
    return save_transcript(
        transcript,
        expected_version=1,
        author=annotator,
        messages=messages,
        title="Edited",
        note="fixed the answer",
    )


def test_list_newest_first_with_authors(as_viewer, edited):
    body = as_viewer.get(f"/transcripts/{edited.pk}/revisions").json()
    assert body["count"] == 2
    assert [(r["number"], r["kind"], r["author"]) for r in body["items"]] == [
        (2, "edit", "annotator"),
        (1, "create", "annotator"),
    ]
    assert body["items"][0]["note"] == "fixed the answer"


def test_one_revision_with_its_snapshot(as_annotator, as_viewer, edited):
    body = as_annotator.get(f"/transcripts/{edited.pk}/revisions/1").json()
    assert body["number"] == 1
    assert body["snapshot"]["title"] == "Two turns"
    assert body["snapshot"]["transcript"]["messages"][1]["content"] == "Answer 0."
    assert_error(as_annotator.get(f"/transcripts/{edited.pk}/revisions/9"), 404, "not-found")
    assert_error(as_viewer.get(f"/transcripts/{edited.pk}/revisions/1"), 403, "E-PERM-VISIBILITY")


def test_diff_between_two_revisions(as_annotator, edited):
    body = as_annotator.get(f"/transcripts/{edited.pk}/diff", {"from": 1, "to": 2}).json()
    assert body["title"] == {"field": "title", "old": "Two turns", "new": "Edited"}
    changed = [m for m in body["messages"] if m["status"] == "changed"]
    assert [m["old_index"] for m in changed] == [1]
    assert "Answer zero." in body["source_diff"]
    assert_error(
        as_annotator.get(f"/transcripts/{edited.pk}/diff", {"to": 2}), 422, "invalid-request"
    )
    assert_error(
        as_annotator.get(f"/transcripts/{edited.pk}/diff", {"from": 1, "to": 5}), 404, "not-found"
    )


def test_restore_is_a_new_version_checked_revision(as_annotator, as_viewer, edited):
    url = f"/transcripts/{edited.pk}/revisions/1/restore"
    assert_error(as_annotator.post(url, {"expected_version": 1}), 409, "version-conflict")
    assert_error(as_viewer.post(url, {"expected_version": 2}), 403, "forbidden")
    assert_error(as_annotator.post(url, {}), 422, "invalid-request")

    response = as_annotator.post(url, {"expected_version": 2})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["version"], body["title"]) == (3, "Two turns")
    assert body["source_text"] == edited.revisions.get(number=1).snapshot["source_text"]
    kinds = [
        r["kind"] for r in as_annotator.get(f"/transcripts/{edited.pk}/revisions").json()["items"]
    ]
    assert kinds == ["restore", "edit", "create"]
