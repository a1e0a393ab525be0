"""Dataset versions through ``editor.client.Client`` against the running test server: list,
create (with a filter), read with members, compare, and pull a version the same bytes after
the dataset moved on, as a file and as canonical objects."""

from __future__ import annotations

import pytest

from editor.client import ApiError, Client, DatasetVersion
from editor.models import ApiToken, Transcript
from editor.storage.save import delete_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def as_curator(live_server, curator, dataset):
    with Client(live_server.url, ApiToken.issue(curator)[1]) as client:
        yield client


def test_versions_through_the_client(as_curator, dataset, curator, tmp_path):
    for n in range(3):
        as_curator.create_transcript(
            dataset.slug, conversation(turns=n + 1), spec="openchatml-2.2", title=f"T{n}"
        )
    made = as_curator.create_version(dataset.slug, "v1", description="all three")
    assert isinstance(made, DatasetVersion)
    assert (made.name, made.transcript_count, made.created_by) == ("v1", 3, "curator")
    first = as_curator.pull(dataset.slug, tmp_path / "v1.jsonl", version="v1")
    assert first.lines == 3
    pulled = [p.title for p in as_curator.pull_transcripts(dataset.slug, version="v1")]
    assert pulled == ["T0", "T1", "T2"]
    # The dataset moves on: one deleted, one more.
    delete_transcript(Transcript.objects.get(title="T0"), author=curator)
    as_curator.create_transcript(dataset.slug, conversation(), spec="openchatml-2.2", title="T3")
    again = as_curator.pull(dataset.slug, tmp_path / "again.jsonl", version="v1")
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "v1.jsonl").read_bytes()
    assert again.lines == 3
    as_curator.create_version(dataset.slug, "drafts", filters={"status": ["draft"]})
    assert [v.name for v in as_curator.versions(dataset.slug)] == ["drafts", "v1"]
    detail = as_curator.version(dataset.slug, "drafts")
    assert len(detail.members) == 3 and detail.content_hash != made.content_hash
    diff = as_curator.diff_versions(dataset.slug, "v1", "drafts")
    assert len(diff["added"]) == 1 and len(diff["removed"]) == 1
    with pytest.raises(ApiError) as taken:
        as_curator.create_version(dataset.slug, "v1")
    assert taken.value.code == "version-name-taken"
    with pytest.raises(ValueError, match="pulled whole"):
        as_curator.pull(dataset.slug, tmp_path / "x", version="v1", status=["draft"])
