"""Input the database would reject is a clear 4xx, never a 500, and nothing is half-written.

A lone surrogate cannot be stored by PostgreSQL, and a note longer than its column is a
PostgreSQL DataError (SQLite would keep it): both are refused by the domain on every
database, whatever route the note came through.
"""

from __future__ import annotations

import json

import pytest

from editor.models import Revision, Transcript
from editor.storage.content import NOTE_LENGTH
from editor.storage.save import delete_transcript, save_transcript

from .conftest import assert_error

pytestmark = pytest.mark.django_db

LONE_SURROGATE = "\ud800"
TOO_LONG = "n" * (NOTE_LENGTH + 1)
BAD_NOTES = [
    pytest.param(LONE_SURROGATE, "unstorable-text", id="lone-surrogate"),
    pytest.param(TOO_LONG, "field-too-long", id="too-long"),
]


@pytest.fixture
def edited(transcript, annotator):
    """The shared transcript at version 2 (retitled), so that revision 1 can be restored."""
    return save_transcript(transcript, expected_version=1, author=annotator, title="Edited")


def messages_of(transcript) -> list[dict]:
    return [m.to_dict() for m in transcript.canonical().messages]


def assert_unchanged(transcript) -> None:
    stored = Transcript.all_objects.get(pk=transcript.pk)
    assert stored.version == transcript.version
    assert stored.revisions.count() == transcript.version


# Each write route with a note in its body: (method, path, body) for a transcript at version 2.
WRITES_WITH_A_NOTE_IN_THE_BODY = {
    "save": ("put", "/transcripts/{pk}", {"expected_version": 2, "title": "New"}),
    "restore": ("post", "/transcripts/{pk}/revisions/1/restore", {"expected_version": 2}),
    "patch-message": ("patch", "/transcripts/{pk}/messages/0", {"version": 2, "content": "Hi"}),
    "insert-message": ("post", "/transcripts/{pk}/messages", {"version": 2}),
    "move-message": ("post", "/transcripts/{pk}/messages/0/move", {"version": 2, "to": 1}),
    "duplicate-message": ("post", "/transcripts/{pk}/messages/0/duplicate", {"version": 2}),
}


@pytest.mark.parametrize("note, code", BAD_NOTES)
@pytest.mark.parametrize("route", WRITES_WITH_A_NOTE_IN_THE_BODY)
def test_a_bad_note_on_a_write_is_422(as_curator, edited, route, note, code):
    method, path, body = WRITES_WITH_A_NOTE_IN_THE_BODY[route]
    url = "/api/v1" + path.format(pk=edited.pk)
    response = getattr(as_curator.client, method)(
        url,
        json.dumps({**body, "note": note}),
        content_type="application/json",
        headers=as_curator.headers,
    )
    assert_error(response, 422, code)
    assert_unchanged(edited)


@pytest.mark.parametrize("note, code", BAD_NOTES)
def test_a_bad_note_on_create_is_422(as_curator, dataset, note, code):
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts", {"text": "Hello", "spec": "chatml", "note": note}
    )
    assert_error(response, 422, code)
    assert not Transcript.all_objects.exists()


@pytest.mark.parametrize("note, code", BAD_NOTES)
def test_a_bad_note_on_undelete_is_422(as_curator, transcript, curator, note, code):
    deleted = delete_transcript(transcript, author=curator)
    response = as_curator.post(f"/transcripts/{deleted.pk}/undelete", {"note": note})
    assert_error(response, 422, code)
    assert_unchanged(deleted)
    assert Transcript.all_objects.get(pk=deleted.pk).is_deleted


def test_a_too_long_note_on_delete_is_422(as_curator, edited):
    response = as_curator.delete(
        f"/transcripts/{edited.pk}", {"expected_version": 2, "note": TOO_LONG}
    )
    assert_error(response, 422, "field-too-long")
    assert_unchanged(edited)
    assert not Transcript.all_objects.get(pk=edited.pk).is_deleted


def test_a_note_of_the_column_length_is_kept(as_curator, edited):
    longest = "n" * NOTE_LENGTH
    response = as_curator.put(
        f"/transcripts/{edited.pk}", {"expected_version": 2, "title": "New", "note": longest}
    )
    assert response.status_code == 200, response.content
    assert Revision.objects.get(transcript=edited, number=3).note == longest


def test_a_duplicate_external_id_on_create_is_409(as_curator, transcript, dataset):
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts",
        {"text": "Hello", "spec": "chatml", "external_id": transcript.external_id},
    )
    body = assert_error(response, 409, "duplicate-external-id")
    assert body["details"] == {"external_id": transcript.external_id}
    assert Transcript.all_objects.count() == 1


def test_the_id_of_a_deleted_transcript_is_taken_too(as_curator, transcript, curator, dataset):
    delete_transcript(transcript, author=curator)
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts",
        {"text": "Hello", "spec": "chatml", "external_id": transcript.external_id},
    )
    assert_error(response, 409, "duplicate-external-id")


def test_unreadable_json_bodies_are_422(as_curator, dataset):
    for body in (b"{not json", b'{"text": "\xff"}'):
        response = as_curator.client.post(
            f"/api/v1/datasets/{dataset.slug}/transcripts",
            body,
            content_type="application/json",
            headers=as_curator.headers,
        )
        assert_error(response, 422, "invalid-request")


def test_an_offset_past_the_largest_integer_is_422(as_curator, dataset):
    response = as_curator.get(f"/datasets/{dataset.slug}/transcripts", {"offset": 2**63})
    assert_error(response, 422, "invalid-request")


def test_the_largest_version_a_column_holds_is_a_conflict_not_an_overflow(as_curator, transcript):
    # Found by schemathesis on PostgreSQL: the save set version = expected + 1, past the column.
    response = as_curator.put(
        f"/transcripts/{transcript.pk}", {"expected_version": 2**31 - 1, "title": "x"}
    )
    assert assert_error(response, 409, "version-conflict")["details"]["current_version"] == 1
    assert Transcript.objects.get(pk=transcript.pk).title == transcript.title


@pytest.mark.parametrize("external_id", ["chat\x00", "chat" + LONE_SURROGATE])
def test_an_unstorable_external_id_is_422_before_it_is_looked_up(as_curator, dataset, external_id):
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts",
        {"text": "Hello", "spec": "chatml", "external_id": external_id},
    )
    assert_error(response, 422, "unstorable-text")
    assert not Transcript.all_objects.exists()


def nested(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "levels, code",
    [(129, "too-deep"), (900, "invalid-request"), (100_000, "invalid-request")],
    ids=["past-the-core", "python-reads-it", "recursion"],
)
def test_metadata_nested_too_deep_to_read_back_is_422_on_create_and_save(
    as_curator, dataset, edited, levels, code
):
    # Python's json reads 900 levels; a transcript holding them could never be saved again.
    deep = '{"a": ' * (levels - 1) + "{}" + "}" * (levels - 1)
    create = '{"text": "Hello", "spec": "chatml", "metadata": ' + deep + "}"
    save = '{"expected_version": 2, "metadata": ' + deep + "}"
    for path, body in [
        (f"datasets/{dataset.slug}/transcripts", create),
        (f"transcripts/{edited.pk}", save),
    ]:
        method = as_curator.client.post if "datasets" in path else as_curator.client.put
        response = method(
            f"/api/v1/{path}", body, content_type="application/json", headers=as_curator.headers
        )
        error = assert_error(response, 422, code)
        assert "nested deeper than" in json.dumps(error)
    assert_unchanged(edited)
    assert Transcript.all_objects.count() == 1


def test_metadata_at_the_depth_limit_is_kept(as_curator, dataset):
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts",
        {"text": "Hello", "spec": "chatml", "metadata": nested(128)},
    )
    assert response.status_code == 201, response.content
    stored = Transcript.objects.get()
    assert stored.metadata == nested(128)
    response = as_curator.put(f"/transcripts/{stored.pk}", {"expected_version": 1, "title": "T"})
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("body", [b"[null, null]", b"true", b'"text"', b"3"])
def test_a_body_that_is_not_an_object_is_422_even_when_every_field_is_optional(
    as_curator, dataset, body
):
    # Found by schemathesis: ninja's schemas read attributes, so a list passed as an empty patch.
    response = as_curator.client.patch(
        f"/api/v1/datasets/{dataset.slug}",
        body,
        content_type="application/json",
        headers=as_curator.headers,
    )
    error = assert_error(response, 422, "invalid-request")
    assert "must be a JSON object" in json.dumps(error)


@pytest.mark.parametrize("value", [-103550118185309667328, 2**31, 2**63])
def test_numbers_past_the_integer_columns_are_422(as_curator, transcript, value):
    # Found by schemathesis: the driver raised OverflowError (a 500).
    response = as_curator.get(f"/transcripts/{transcript.pk}/annotations", {"label_schema": value})
    assert_error(response, 422, "invalid-request")
    response = as_curator.put(
        f"/transcripts/{transcript.pk}", {"expected_version": value, "title": "x"}
    )
    assert_error(response, 422, "invalid-request")
    # Versions in the query string too (found by schemathesis on PostgreSQL: a 500).
    response = as_curator.delete(f"/transcripts/{transcript.pk}/messages/0", {"version": value})
    assert_error(response, 422, "invalid-request")
    response = as_curator.delete(f"/transcripts/{transcript.pk}", {"expected_version": value})
    assert_error(response, 422, "invalid-request")


@pytest.mark.parametrize(
    "path, status",
    [
        ("/datasets/a%00b", 404),
        ("/datasets/x%00/transcripts", 404),
        ("/datasets/{slug}/transcripts?code=E%00", 200),
        ("/datasets/{slug}/transcripts?updated_by=a%00b", 200),
        ("/datasets/{slug}/transcripts?q=a%00b", 200),
    ],
)
def test_a_nul_in_a_lookup_finds_nothing_on_every_database(as_curator, dataset, path, status):
    # PostgreSQL refuses a NUL in a query (DataError, a 500 before).
    response = as_curator.client.get(
        "/api/v1" + path.format(slug=dataset.slug), headers=as_curator.headers
    )
    assert response.status_code == status, response.content
    if status == 200:
        assert response.json()["count"] == 0


def test_a_nul_in_a_username_finds_no_member(as_curator, dataset):
    response = as_curator.client.delete(
        f"/api/v1/datasets/{dataset.slug}/members/a%00b", headers=as_curator.headers
    )
    assert_error(response, 404, "not-a-member")


def test_a_nul_in_an_assignee_is_an_unknown_user(as_curator, dataset):
    # Found by schemathesis on PostgreSQL: the username lookup was a DataError (a 500).
    response = as_curator.post(
        f"/datasets/{dataset.slug}/queues", {"name": "Q", "assignees": ["a\x00b", "annotator"]}
    )
    body = assert_error(response, 422, "unknown-user")
    assert "a\x00b" in body["message"]


# A lone surrogate in a field typed str is refused by the request's validation already
# (invalid-request); one in a field of any JSON (a label value) by the domain.
UNSTORABLE = [
    pytest.param("a\x00b", {"unstorable-text"}, id="nul"),
    pytest.param("a" + LONE_SURROGATE, {"unstorable-text", "invalid-request"}, id="surrogate"),
]


def _queue(text: str) -> dict:
    return {"name": "Q", "filters": {"label": {"question": "tone", "value": [text]}}}


# Each route that keeps text a user chose, with ``{}`` where that text goes: found by
# schemathesis on PostgreSQL (a NUL in a queue's name was a DataError, a 500).
TEXT_WRITES = {
    "dataset-name": ("post", "/datasets", lambda t: {"name": t, "slug": "new-one"}),
    "dataset-description": (
        "post",
        "/datasets",
        lambda t: {"name": "New", "slug": "new-one", "description": t},
    ),
    "dataset-rename": ("patch", "/datasets/support-chats", lambda t: {"name": t}),
    "queue-name": ("post", "/datasets/support-chats/queues", lambda t: {"name": t}),
    "queue-instructions": (
        "post",
        "/datasets/support-chats/queues",
        lambda t: {"name": "Q", "instructions": t},
    ),
    "queue-text-filter": (
        "post",
        "/datasets/support-chats/queues",
        lambda t: {"name": "Q", "filters": {"text": t}},
    ),
    "queue-label-filter": ("post", "/datasets/support-chats/queues", _queue),
}


@pytest.mark.parametrize("text, codes", UNSTORABLE)
@pytest.mark.parametrize("route", TEXT_WRITES)
def test_unstorable_text_on_a_write_is_422_and_writes_nothing(
    as_curator, dataset, route, text, codes
):
    from editor.models import Dataset, ReviewQueue

    method, path, body = TEXT_WRITES[route]
    response = getattr(as_curator.client, method)(
        "/api/v1" + path,
        json.dumps(body(text)),
        content_type="application/json",
        headers=as_curator.headers,
    )
    assert response.status_code == 422, response.content
    assert response.json()["code"] in codes
    assert list(Dataset.objects.values_list("slug", "name")) == [(dataset.slug, dataset.name)]
    assert not ReviewQueue.objects.exists()


@pytest.mark.parametrize("text, codes", UNSTORABLE)
def test_unstorable_text_in_a_bulk_note_is_422(as_curator, transcript, text, codes):
    response = as_curator.post(
        f"/datasets/{transcript.dataset.slug}/bulk",
        {"action": "delete", "ids": [transcript.pk], "note": text},
    )
    assert (response.status_code, response.json()["code"] in codes) == (422, True)
    assert Transcript.objects.filter(pk=transcript.pk).exists()


@pytest.mark.parametrize("text, codes", UNSTORABLE)
def test_unstorable_text_in_a_review_comment_is_422(
    as_curator, as_annotator, transcript, text, codes
):
    from editor.models import QueueAssignment

    queue = as_curator.post(f"/datasets/{transcript.dataset.slug}/queues", {"name": "Q"}).json()
    assignment = as_annotator.post(f"/queues/{queue['id']}/claim").json()
    as_annotator.post(f"/assignments/{assignment['id']}/submit")
    response = as_curator.post(
        f"/assignments/{assignment['id']}/review", {"decision": "reject", "comment": text}
    )
    assert (response.status_code, response.json()["code"] in codes) == (422, True)
    assert QueueAssignment.objects.get(pk=assignment["id"]).state == "submitted"
