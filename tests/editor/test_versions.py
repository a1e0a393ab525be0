"""Dataset versions (editor/versions.py): a version's export is the same bytes after later
edits, imports (over its transcripts too), transitions and deletes; it is the dataset export
of the moment it was made; versions compare (added, removed, changed, with the history link)."""

from __future__ import annotations

import json

import pytest

from editor import editing, formats
from editor.errors import InvalidContent, NotAllowed, VersionNameTaken
from editor.exporting import export_dataset
from editor.importing import import_transcripts
from editor.models import Transcript, WebhookDelivery, WebhookEndpoint
from editor.storage.create import create_transcript
from editor.storage.save import delete_transcript
from editor.versions import create_version, diff_versions, export_version, members_hash
from tests.editor.samples import conversation, demo_texts

pytestmark = pytest.mark.django_db

SPEC = "openchatml-2.2"


def text(version, **options) -> str:
    return "".join(export_version(version, **options))


def import_lines(dataset, curator, lines: list[dict]):
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return import_transcripts(body, dataset=dataset, author=curator, name="more.jsonl")


@pytest.fixture
def filled(dataset, curator):
    """Three transcripts: two imported with external ids, one created in another spec."""
    import_lines(
        dataset,
        curator,
        [
            {"id": "a", "title": "A", "spec": SPEC, "text": conversation()},
            {"id": "b", "title": "B", "spec": SPEC, "text": conversation(turns=3)},
        ],
    )
    create_transcript(
        dataset,
        author=curator,
        text=demo_texts()["openai-messages"],
        spec="openai-messages",
        title="C",
    )
    return list(Transcript.objects.filter(dataset=dataset).order_by("pk"))


def edit_first_message(transcript: Transcript, curator, content: str) -> None:
    transcript = Transcript.objects.get(pk=transcript.pk)
    editing.edit_message(
        transcript,
        1,
        {"content": content},
        expected_version=transcript.version,
        author=curator,
    )


def test_a_version_exports_the_same_bytes_after_edits_imports_and_deletes(dataset, curator, filled):
    version = create_version(dataset, "v1", author=curator)
    options = [{}, {"spec": "openai-messages"}, {"format": "messages"}]
    before = [text(version, **o) for o in options]
    # It is the dataset's export of that moment.
    assert before[0] == "".join(export_dataset(dataset))
    assert before[1] == "".join(export_dataset(dataset, spec="openai-messages"))
    assert before[2] == "".join(export_dataset(dataset, format="messages"))
    a, _b, c = filled
    edit_first_message(a, curator, "edited after the version")
    editing.apply_transition(
        Transcript.objects.get(pk=c.pk), "submit", expected_version=c.version, author=curator
    )
    import_lines(  # over "b" (an update through the write path), and one more
        dataset,
        curator,
        [
            {"id": "b", "title": "B2", "spec": SPEC, "text": conversation(turns=1)},
            {"id": "d", "title": "D", "spec": SPEC, "text": conversation()},
        ],
    )
    delete_transcript(Transcript.objects.get(pk=c.pk), author=curator)
    edit_first_message(a, curator, "edited twice")
    assert "".join(export_dataset(dataset)) != before[0]  # the dataset moved on
    assert [text(version, **o) for o in options] == before


def test_a_version_freezes_a_filter(dataset, curator, filled):
    _a, _b, c = filled
    version = create_version(dataset, "openai", filters={"spec": "openai-messages"}, author=curator)
    assert version.transcript_count == 1
    assert version.members == [[c.pk, c.version, "draft"]]
    assert version.filters == {"spec": "openai-messages"}
    assert json.loads(text(version))["title"] == "C"
    with pytest.raises(InvalidContent) as refused:
        create_version(dataset, "bad", filters={"status": ["nope"]}, author=curator)
    assert refused.value.code == "invalid-filter"


def test_versions_compare(dataset, curator, filled):
    a, b, _c = filled
    v1 = create_version(dataset, "v1", author=curator)
    edit_first_message(a, curator, "changed")
    delete_transcript(Transcript.objects.get(pk=b.pk), author=curator)
    d = create_transcript(dataset, author=curator, text=conversation(), spec=SPEC, title="D")
    v2 = create_version(dataset, "v2", author=curator)
    diff = diff_versions(v1, v2)
    assert diff.added == [d.pk] and diff.removed == [b.pk] and diff.unchanged == 1
    (changed,) = diff.changed
    assert (changed.id, changed.from_version, changed.to_version) == (a.pk, 1, 2)
    assert changed.history_url == f"/transcripts/{a.pk}/history/?from=1&to=2"
    assert diff.to_dict()["changed"][0]["history_url"] == changed.history_url
    back = diff_versions(v2, v1)
    assert back.added == [b.pk] and back.removed == [d.pk]
    assert diff_versions(v1, v1).changed == []


def test_the_content_hash_names_the_members(dataset, curator, filled):
    v1 = create_version(dataset, "v1", author=curator)
    same = create_version(dataset, "v1-again", author=curator)
    assert v1.content_hash == same.content_hash == members_hash(v1.members)
    edit_first_message(filled[0], curator, "changed")
    assert create_version(dataset, "v2", author=curator).content_hash != v1.content_hash


def test_names_are_unique_checked_and_only_curators_create(dataset, curator, annotator, filled):
    create_version(dataset, "v1", author=curator)
    with pytest.raises(VersionNameTaken):
        create_version(dataset, "v1", author=curator)
    for bad in ("", "has space", "-dash-first", "x" * 101, "a/b"):
        with pytest.raises(InvalidContent):
            create_version(dataset, bad, author=curator)
    with pytest.raises(NotAllowed):
        create_version(dataset, "v9", author=annotator)


def test_a_purged_dataset_takes_its_versions(dataset, curator, filled):
    from editor.membership import delete_dataset
    from editor.models import DatasetVersion

    create_version(dataset, "v1", author=curator)
    delete_dataset(dataset, author=curator)
    assert not DatasetVersion.objects.exists()


def test_creating_a_version_emits_its_event(dataset, curator, filled, settings):
    settings.OCM_WEBHOOKS_ALLOW_PRIVATE = True
    WebhookEndpoint.objects.create(dataset=dataset, url="http://127.0.0.1:9/", secret="whsec_AA")
    version = create_version(dataset, "v1", author=curator)
    (delivery,) = WebhookDelivery.objects.all()
    assert delivery.payload["data"] == {
        "dataset": "support-chats",
        "version": "v1",
        "transcripts": 3,
        "content_hash": version.content_hash,
    }


def test_an_unknown_spec_or_format_is_refused(dataset, curator, filled):
    version = create_version(dataset, "v1", author=curator)
    with pytest.raises(InvalidContent):
        export_version(version, spec="nope")
    with pytest.raises(InvalidContent):
        export_version(version, format="preference")
    assert formats.is_spec(SPEC)
