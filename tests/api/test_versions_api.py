"""The versions routes (api/routers/versions.py): create (curators), list, read with members,
export the same bytes after an edit, compare; viewers read but do not export."""

from __future__ import annotations

import pytest

from editor import editing
from editor.models import Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

from .conftest import assert_error

pytestmark = pytest.mark.django_db

BASE = "/datasets/support-chats/versions"


@pytest.fixture
def two(dataset, curator):
    return [
        create_transcript(dataset, author=curator, text=conversation(), spec="openchatml-2.2")
        for _ in range(2)
    ]


def test_a_version_is_created_listed_read_and_exported_the_same(as_curator, two, curator):
    response = as_curator.post(BASE, {"name": "v1", "description": "first"})
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["transcript_count"] == 2 and len(created["content_hash"]) == 64
    assert created["created_by"] == "curator"
    listed = as_curator.get(BASE).json()
    assert [v["name"] for v in listed["items"]] == ["v1"]
    detail = as_curator.get(f"{BASE}/v1").json()
    assert detail["members"] == [[t.pk, 1, "draft"] for t in two]
    first = as_curator.get(f"{BASE}/v1/export")
    assert first.status_code == 200
    assert first["X-Content-Hash"] == created["content_hash"]
    body = b"".join(first.streaming_content)
    current = Transcript.objects.get(pk=two[0].pk)
    editing.edit_message(
        current, 1, {"content": "changed"}, expected_version=current.version, author=curator
    )
    again = b"".join(as_curator.get(f"{BASE}/v1/export").streaming_content)
    assert again == body
    messages = as_curator.get(f"{BASE}/v1/export", {"format": "messages"})
    assert messages.status_code == 200
    assert_error(
        as_curator.get(f"{BASE}/v1/export", {"format": "preference"}), 422, "invalid-request"
    )


def test_versions_compare(as_curator, two, curator):
    as_curator.post(BASE, {"name": "v1"})
    current = Transcript.objects.get(pk=two[0].pk)
    editing.edit_message(
        current, 1, {"content": "changed"}, expected_version=current.version, author=curator
    )
    as_curator.post(BASE, {"name": "v2", "filters": {"status": ["draft"]}})
    diff = as_curator.get(f"{BASE}/v1/diff/v2").json()
    assert diff["from_name"] == "v1" and diff["to_name"] == "v2"
    assert diff["added"] == [] and diff["removed"] == [] and diff["unchanged"] == 1
    (changed,) = diff["changed"]
    assert changed["history_url"] == f"/transcripts/{two[0].pk}/history/?from=1&to=2"
    assert_error(as_curator.get(f"{BASE}/v1/diff/nope"), 404, "not-found")


def test_refusals(as_curator, as_annotator, as_viewer, as_outsider, two):
    assert_error(as_curator.post(BASE, {"name": "bad name"}), 422, "invalid-version-name")
    assert_error(
        as_curator.post(BASE, {"name": "v", "filters": {"status": ["nope"]}}), 422, "invalid-filter"
    )
    assert as_curator.post(BASE, {"name": "v1"}).status_code == 201
    assert_error(as_curator.post(BASE, {"name": "v1"}), 409, "version-name-taken")
    assert_error(as_annotator.post(BASE, {"name": "v2"}), 403, "forbidden")
    assert as_viewer.get(f"{BASE}/v1").status_code == 200
    assert as_viewer.get(f"{BASE}/v1/export").status_code == 403
    assert as_annotator.get(f"{BASE}/v1/export").status_code == 200
    assert_error(as_outsider.get(BASE), 404, "not-found")
    assert_error(as_curator.get(f"{BASE}/nope"), 404, "not-found")
