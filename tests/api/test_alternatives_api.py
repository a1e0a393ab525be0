"""/api/v1/transcripts/{id}/alternatives: list, add (201, then 200 for the same content),
delete, promote (one revision, 409 when stale), and pairwise answers through the annotation
routes."""

from __future__ import annotations

import pytest

from editor import labels
from editor.models import Transcript
from editor.storage.create import create_transcript

from .conftest import PREFIX, assert_error

pytestmark = pytest.mark.django_db

MESSAGES = [
    {"role": "user", "content": "Capital of France?", "end": "end"},
    {"role": "assistant", "channel": "final", "content": "Paris.", "end": "end"},
]
OTHER = [{"role": "assistant", "channel": "final", "content": "Paris, on the Seine.", "end": "end"}]


@pytest.fixture
def chat(dataset, curator):
    return create_transcript(
        dataset, author=curator, canonical={"spec": "openchatml-2.2", "messages": MESSAGES}
    )


def url(chat, tail: str = "") -> str:
    return f"/transcripts/{chat.pk}/alternatives{tail}"


def add(client, chat, messages=OTHER, **extra):
    return client.post(url(chat), {"message_index": 1, "messages": messages, **extra})


def test_adding_stores_the_own_turn_and_the_same_content_again_is_a_200(as_annotator, chat):
    first = add(as_annotator, chat, note="shorter")
    assert first.status_code == 201, first.content
    body = first.json()
    assert (body["source"], body["note"], body["created_by"]) == ("hand", "shorter", "annotator")
    assert body["messages"] == OTHER and not body["current"]

    again = add(as_annotator, chat)
    assert again.status_code == 200 and again.json()["id"] == body["id"]

    listed = as_annotator.get(url(chat)).json()
    assert listed["count"] == 2
    own, other = listed["items"]
    assert (own["source"], own["current"], own["messages"]) == ("transcript", True, MESSAGES[1:])
    assert other["id"] == body["id"]
    assert as_annotator.get(url(chat), {"message_index": 0}).json()["count"] == 0


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"message_index": 0, "messages": OTHER}, 422, "not-a-turn"),
        ({"message_index": 7, "messages": OTHER}, 404, "message-not-found"),
        ({"message_index": 1, "messages": []}, 422, "not-a-turn"),
        ({"message_index": 1, "messages": [{"content": "x"}]}, 422, "invalid-message"),
        ({"message_index": 1, "messages": OTHER, "source": "transcript"}, 422, "invalid-request"),
        ({"message_index": -1, "messages": OTHER}, 422, "invalid-request"),
        ({"message_index": 2**40, "messages": OTHER}, 422, "invalid-request"),
    ],
)
def test_bad_alternatives_are_clear_errors(as_annotator, chat, body, status, code):
    assert_error(as_annotator.post(url(chat), body), status, code)


def test_viewers_neither_read_nor_add_and_outsiders_see_nothing(as_viewer, as_outsider, chat):
    assert_error(as_viewer.get(url(chat)), 403, "E-PERM-VISIBILITY")
    assert_error(add(as_viewer, chat), 403, "E-PERM-VISIBILITY")
    assert_error(as_outsider.get(url(chat)), 404, "not-found")


def test_promote_makes_one_revision_and_a_stale_version_is_a_409(as_annotator, as_curator, chat):
    other = add(as_annotator, chat).json()
    promoted = as_annotator.post(url(chat, f"/{other['id']}/promote"), {"version": 1})
    assert promoted.status_code == 200, promoted.content
    assert promoted.json()["version"] == 2
    saved = Transcript.objects.get(pk=chat.pk)
    assert saved.canonical().messages[1].content == "Paris, on the Seine."
    assert saved.revisions.count() == 2

    own = as_annotator.get(url(chat)).json()["items"][0]
    assert not own["current"]
    stale = as_curator.post(url(chat, f"/{own['id']}/promote"), {"version": 1})
    assert_error(stale, 409, "version-conflict")
    missing = as_curator.post(url(chat, f"/{own['id']}/promote"), {})
    assert_error(missing, 428, "version-required")
    header = as_curator.client.post(
        PREFIX + url(chat, f"/{own['id']}/promote"),
        "{}",
        content_type="application/json",
        headers={**as_curator.headers, "If-Match": '"2"'},
    )
    assert header.status_code == 200 and header.json()["version"] == 3


def test_delete_refuses_the_current_turn_and_others_alternatives(
    as_annotator, as_curator, chat, dataset
):
    theirs = add(as_curator, chat).json()
    own = as_annotator.get(url(chat)).json()["items"][0]
    assert_error(as_curator.delete(url(chat, f"/{own['id']}")), 409, "alternative-is-current")
    assert_error(as_annotator.delete(url(chat, f"/{theirs['id']}")), 403, "forbidden")
    assert as_curator.delete(url(chat, f"/{theirs['id']}")).status_code == 204
    assert_error(as_curator.delete(url(chat, f"/{theirs['id']}")), 404, "not-found")
    other = create_transcript(
        dataset, author=None, canonical={"spec": "openchatml-2.2", "messages": MESSAGES}
    )
    # An alternative of another transcript is not found under this one.
    assert_error(as_curator.delete(url(other, f"/{own['id']}")), 404, "not-found")


def test_pairwise_answers_go_through_the_annotation_routes(as_annotator, as_curator, chat, dataset):
    other = add(as_annotator, chat).json()
    own = as_annotator.get(url(chat)).json()["items"][0]
    schema = labels.create_label_schema(
        dataset,
        author=dataset.memberships.get(role="curator").user,
        name="Prefs",
        questions=[{"key": "better", "kind": "pairwise", "prompt": "Which is better?"}],
    )
    value = {"order": [other["id"], own["id"]], "choice": other["id"], "reason": "Richer."}
    answered = as_annotator.post(
        f"/transcripts/{chat.pk}/annotations",
        {"label_schema": schema.pk, "question": "better", "value": value, "message_index": 1},
    )
    assert answered.status_code == 201, answered.content
    assert answered.json()["value"] == value
    wrong = {"order": [other["id"], 999999], "choice": "tie"}
    refused = as_annotator.post(
        f"/transcripts/{chat.pk}/annotations",
        {"label_schema": schema.pk, "question": "better", "value": wrong, "message_index": 1},
    )
    assert_error(refused, 422, "invalid-annotation")
