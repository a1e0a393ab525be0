"""The database failing midway through a write: afterwards the data is exactly as before and
the user is told so (a 503 page or JSON ``database-unavailable``), never a traceback.

Each test injects an ``OperationalError`` (what a dropped connection, a lock timeout or a
server going away raise) after part of the write has reached the database.
"""

from __future__ import annotations

import io
import json
from unittest import mock

import pytest
from django.db import OperationalError

from editor import filestore
from editor.importing.tasks import start_import_task
from editor.models import (
    QueueAssignment,
    Revision,
    TaskStatus,
    Transcript,
)
from editor.storage import create, save
from tests.api.conftest import api_client_for
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

DROPPED = OperationalError("server closed the connection unexpectedly")


@pytest.fixture
def transcript(dataset, annotator):
    return create.create_transcript(
        dataset, author=annotator, text=conversation(), spec="openchatml-2.2", title="Two turns"
    )


def state_of(transcript: Transcript) -> dict:
    """Everything a failed write could have touched."""
    fresh = Transcript.all_objects.get(pk=transcript.pk)
    return {
        "version": fresh.version,
        "title": fresh.title,
        "text": fresh.source_text,
        "messages": [m.content for m in fresh.canonical().messages],
        "revisions": list(
            Revision.objects.filter(transcript=fresh).values_list("number", flat=True)
        ),
    }


def _replace_then_fail(*args, **kwargs):
    """The messages are rewritten, then the connection drops."""
    real_replace(*args, **kwargs)
    raise DROPPED


real_replace = save.replace_messages


def assert_database_unavailable_json(response):
    assert response.status_code == 503
    body = json.loads(response.content)
    assert body["code"] == "database-unavailable"
    assert "nothing was changed" in body["message"]


def assert_database_unavailable_page(response):
    assert response.status_code == 503
    page = response.content.decode()
    assert "Your change was not saved" in page
    assert "Traceback" not in page and "OperationalError" not in page


def test_a_save_that_fails_at_its_revision_changes_nothing_api(transcript, annotator):
    before = state_of(transcript)
    client = api_client_for(annotator)
    with mock.patch.object(Revision.objects, "create", side_effect=DROPPED):
        response = client.put(
            f"/transcripts/{transcript.pk}",
            {
                "expected_version": transcript.version,
                "title": "Renamed",
                "text": "<|start|>user<|message|>Other<|end|>",
            },
        )
    assert_database_unavailable_json(response)
    assert state_of(transcript) == before


def test_a_source_save_that_fails_at_its_revision_changes_nothing_page(
    client, transcript, annotator
):
    before = state_of(transcript)
    client.force_login(annotator)
    with mock.patch.object(Revision.objects, "create", side_effect=DROPPED):
        response = client.post(
            f"/transcripts/{transcript.pk}/source/",
            {"text": "<|start|>user<|message|>Other<|end|>", "version": transcript.version},
        )
    assert_database_unavailable_page(response)
    assert state_of(transcript) == before


def test_a_message_edit_that_fails_after_rewriting_messages_changes_nothing_api(
    transcript, annotator
):
    before = state_of(transcript)
    client = api_client_for(annotator)
    with mock.patch.object(save, "replace_messages", _replace_then_fail):
        response = client._send(
            client.client.patch,
            f"/transcripts/{transcript.pk}/messages/0",
            {"content": "Changed", "version": transcript.version},
        )
    assert_database_unavailable_json(response)
    assert state_of(transcript) == before


def test_a_message_edit_that_fails_after_rewriting_messages_changes_nothing_page(
    client, transcript, annotator
):
    before = state_of(transcript)
    client.force_login(annotator)
    with mock.patch.object(save, "replace_messages", _replace_then_fail):
        response = client.post(
            f"/transcripts/{transcript.pk}/messages/0/save/",
            {"content": "Changed", "version": transcript.version},
            headers={"HX-Request": "true"},
        )
    # htmx: the message is the page's toast, swapped out of band; the form stays as it was.
    assert response.status_code == 503
    assert response["HX-Reswap"] == "none"
    assert 'id="toast"' in response.content.decode()
    assert "your change was not saved" in response.content.decode()
    assert state_of(transcript) == before


def test_an_import_that_fails_midway_imports_nothing_and_says_so(
    dataset, annotator, django_capture_on_commit_callbacks, settings
):
    lines = [
        json.dumps({"text": conversation(), "spec": "openchatml-2.2", "title": f"T{n}"})
        for n in range(3)
    ]
    before = Transcript.all_objects.count()
    with (
        mock.patch.object(create, "write_message_rows", side_effect=DROPPED),
        django_capture_on_commit_callbacks(execute=True),
    ):
        task = start_import_task(
            dataset=dataset,
            author=annotator,
            upload=io.BytesIO("\n".join(lines).encode()),
            name="three.jsonl",
        )
    task.refresh_from_db()
    assert task.status == TaskStatus.FAILED  # not left "running" forever
    assert "database" in task.error.lower() and "nothing was imported" in task.error
    assert task.finished_at is not None
    assert Transcript.all_objects.count() == before
    assert task.upload_path and not filestore.uploads().exists(task.upload_path)


@pytest.fixture
def queue(dataset, curator, transcript):
    from editor import queues

    return queues.create_queue(dataset, [transcript], name="Check", author=curator)


def test_a_claim_that_fails_holds_nothing_api(queue, annotator):
    client = api_client_for(annotator)
    with mock.patch.object(QueueAssignment.objects, "create", side_effect=DROPPED):
        response = client.post(f"/queues/{queue.pk}/claim")
    assert_database_unavailable_json(response)
    assert not QueueAssignment.objects.filter(item__queue=queue).exists()


def test_a_claim_that_fails_holds_nothing_page(client, queue, annotator):
    client.force_login(annotator)
    with mock.patch.object(QueueAssignment.objects, "create", side_effect=DROPPED):
        response = client.post(f"/queues/{queue.pk}/claim/")
    assert_database_unavailable_page(response)
    assert not QueueAssignment.objects.filter(item__queue=queue).exists()


def test_a_bug_in_a_write_is_still_a_500_not_a_503(transcript, annotator):
    """Only the database being unavailable is a 503: an IntegrityError is a bug."""
    from django.db import IntegrityError

    client = api_client_for(annotator)
    client.client.raise_request_exception = False
    with mock.patch.object(Revision.objects, "create", side_effect=IntegrityError("bug")):
        response = client.put(
            f"/transcripts/{transcript.pk}", {"expected_version": transcript.version, "title": "X"}
        )
    assert response.status_code == 500


@pytest.fixture
def three(dataset, annotator):
    return [
        create.create_transcript(
            dataset, author=annotator, text=conversation(), spec="openchatml-2.2", title=f"T{n}"
        )
        for n in range(3)
    ]


def states(transcripts) -> list[dict]:
    return [
        state_of(t) | {"status": Transcript.all_objects.get(pk=t.pk).status} for t in transcripts
    ]


def fail_on_the_third(real):
    """A write that works twice (its rows reach the database), then loses the connection."""
    calls = []

    def write(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise DROPPED
        return real(*args, **kwargs)

    return write


def test_a_bulk_action_that_fails_midway_changes_nothing_api(three, curator, dataset):
    from editor.bulk import actions as bulk

    before = states(three)
    client = api_client_for(curator)
    with mock.patch.object(bulk, "delete_transcript", fail_on_the_third(bulk.delete_transcript)):
        response = client.post(
            f"/datasets/{dataset.slug}/bulk", {"action": "delete", "ids": [t.pk for t in three]}
        )
    assert_database_unavailable_json(response)
    assert states(three) == before


def test_a_bulk_action_that_fails_midway_changes_nothing_page(client, three, curator, dataset):
    from editor.bulk import actions as bulk

    before = states(three)
    client.force_login(curator)
    with mock.patch.object(bulk, "apply_transition", fail_on_the_third(bulk.apply_transition)):
        response = client.post(
            f"/datasets/{dataset.slug}/bulk/",
            {"action": "transition:submit", "ids": [t.pk for t in three]},
        )
    assert_database_unavailable_page(response)
    assert states(three) == before
