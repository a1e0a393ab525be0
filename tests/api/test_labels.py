"""/label-schemas and /annotations: every role gets what it may do and a clear error for the
rest; values and schema definitions are refused with the one error shape."""

from __future__ import annotations

import pytest

from editor.models import Annotation, Membership, Role
from tests.editor.test_labels import QUESTIONS

from .conftest import api_client_for, assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_reviewer(reviewer):
    return api_client_for(reviewer)


@pytest.fixture
def schema(as_curator, dataset) -> dict:
    response = as_curator.post(
        f"/datasets/{dataset.slug}/label-schemas",
        {"name": "Quality", "instructions": "**Read** first.", "questions": QUESTIONS},
    )
    assert response.status_code == 201, response.content
    return response.json()


def answer(client, transcript, schema, **body):
    return client.post(
        f"/transcripts/{transcript.pk}/annotations", {"label_schema": schema["id"], **body}
    )


def topic(client, transcript, schema, value="bug"):
    return answer(client, transcript, schema, question="topic", value=value)


# --- schemas -------------------------------------------------------------------------------------


def test_a_curator_creates_a_schema_with_its_first_version(schema, dataset):
    assert schema["name"] == "Quality"
    assert schema["dataset"] == dataset.slug
    version = schema["current_version"]
    assert version["number"] == 1
    assert version["instructions"] == "**Read** first."
    assert version["created_by"] == "curator"
    assert version["questions"][2]["scale"] == 5
    assert version["questions"][0]["applies_to"] == "transcript"


def test_a_bad_definition_is_a_422_naming_the_question(as_curator, dataset):
    questions = [{**QUESTIONS[2], "scale": 1}]
    response = as_curator.post(
        f"/datasets/{dataset.slug}/label-schemas", {"name": "Q", "questions": questions}
    )
    body = assert_error(response, 422, "invalid-label-schema")
    assert body["message"].startswith("Question 'helpful' (scale)")
    assert body["details"][0]["question"] == "'helpful'"


def test_a_duplicate_name_is_a_409(as_curator, dataset, schema):
    response = as_curator.post(
        f"/datasets/{dataset.slug}/label-schemas", {"name": "Quality", "questions": QUESTIONS}
    )
    assert_error(response, 409, "label-schema-exists")


def test_every_member_reads_schemas_outsiders_get_404(
    as_viewer, as_annotator, as_reviewer, as_outsider, dataset, schema
):
    for client in (as_viewer, as_annotator, as_reviewer):
        listed = client.get(f"/datasets/{dataset.slug}/label-schemas")
        assert listed.status_code == 200
        assert [s["id"] for s in listed.json()["items"]] == [schema["id"]]
        assert client.get(f"/label-schemas/{schema['id']}").status_code == 200
    assert_error(as_outsider.get(f"/datasets/{dataset.slug}/label-schemas"), 404, "not-found")
    assert_error(as_outsider.get(f"/label-schemas/{schema['id']}"), 404, "not-found")
    assert_error(as_outsider.get(f"/label-schemas/{schema['id']}/versions/1"), 404, "not-found")


def test_only_curators_write_schemas(as_viewer, as_annotator, as_reviewer, dataset, schema):
    for client in (as_viewer, as_annotator, as_reviewer):
        created = client.post(
            f"/datasets/{dataset.slug}/label-schemas", {"name": "Mine", "questions": QUESTIONS}
        )
        assert_error(created, 403, "forbidden")
        versioned = client.post(
            f"/label-schemas/{schema['id']}/versions", {"questions": QUESTIONS[:1]}
        )
        assert_error(versioned, 403, "forbidden")
        archived = client.post(f"/label-schemas/{schema['id']}/archive", {})
        assert_error(archived, 403, "forbidden")


def test_versions_answers_keep_theirs(as_curator, as_annotator, transcript, schema):
    old = topic(as_annotator, transcript, schema).json()
    changed = as_curator.post(
        f"/label-schemas/{schema['id']}/versions",
        {"expected_version": 1, "questions": QUESTIONS[:1], "instructions": "New."},
    )
    assert changed.status_code == 201
    assert changed.json()["number"] == 2
    same = as_curator.post(
        f"/label-schemas/{schema['id']}/versions",
        {"questions": QUESTIONS[:1], "instructions": "New."},
    )
    assert (same.status_code, same.json()["number"]) == (200, 2)
    stale = as_curator.post(
        f"/label-schemas/{schema['id']}/versions", {"expected_version": 1, "questions": QUESTIONS}
    )
    assert_error(stale, 409, "version-conflict")

    versions = as_curator.get(f"/label-schemas/{schema['id']}/versions").json()
    assert [v["number"] for v in versions["items"]] == [1, 2]
    first = as_curator.get(f"/label-schemas/{schema['id']}/versions/1").json()
    assert len(first["questions"]) == len(QUESTIONS)
    assert_error(as_curator.get(f"/label-schemas/{schema['id']}/versions/3"), 404, "not-found")
    assert as_annotator.get(f"/annotations/{old['id']}").json()["schema_version"] == 1
    assert topic(as_annotator, transcript, schema).json()["schema_version"] == 2


def test_archive_and_bring_back(as_curator, as_annotator, dataset, transcript, schema):
    archived = as_curator.post(f"/label-schemas/{schema['id']}/archive", {})
    assert archived.json()["archived_at"] is not None
    assert as_curator.get(f"/datasets/{dataset.slug}/label-schemas").json()["count"] == 0
    listed = as_curator.get(f"/datasets/{dataset.slug}/label-schemas", {"archived": "true"})
    assert listed.json()["count"] == 1
    assert_error(topic(as_annotator, transcript, schema), 409, "label-schema-archived")
    back = as_curator.post(f"/label-schemas/{schema['id']}/archive", {"archived": False})
    assert back.json()["archived_at"] is None
    assert topic(as_annotator, transcript, schema).status_code == 201


# --- annotations ---------------------------------------------------------------------------------


def test_annotator_answers_updates_submits_and_deletes_a_draft(as_annotator, transcript, schema):
    created = answer(
        as_annotator,
        transcript,
        schema,
        question="claims",
        value="hallucination",
        message_index=1,
        start=0,
        end=6,
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["target"], body["text"], body["state"], body["anchor_state"]) == (
        "span",
        "Answer",
        "draft",
        "ok",
    )
    assert body["annotator"] == "annotator" and body["label_schema"] == schema["id"]

    moved = as_annotator.put(
        f"/annotations/{body['id']}", {"value": "hallucination", "start": 7, "end": 8}
    )
    assert moved.status_code == 200
    assert moved.json()["text"] == "0"

    submitted = as_annotator.post(f"/annotations/{body['id']}/submit")
    assert (submitted.status_code, submitted.json()["state"]) == (200, "submitted")
    assert_error(as_annotator.delete(f"/annotations/{body['id']}"), 409, "annotation-locked")

    draft = topic(as_annotator, transcript, schema).json()
    deleted = as_annotator.delete(f"/annotations/{draft['id']}")
    assert deleted.status_code == 204
    assert not Annotation.objects.filter(pk=draft["id"]).exists()


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"question": "topic", "value": "refund"}, 422, "invalid-annotation"),
        ({"question": "helpful", "value": 7, "message_index": 1}, 422, "invalid-annotation"),
        ({"question": "helpful", "value": 3, "message_index": 0}, 422, "invalid-annotation"),
        ({"question": "helpful", "value": 3, "message_index": -1}, 422, "invalid-request"),
        (
            {"question": "claims", "value": "hallucination", "message_index": 1, "start": 3},
            422,
            "invalid-annotation",
        ),
        ({"question": "comment", "value": "bad\x00text"}, 422, "unstorable-text"),
        ({"question": "topic"}, 422, "invalid-request"),
    ],
)
def test_bad_answers_get_clear_errors(as_annotator, transcript, schema, body, status, code):
    assert_error(answer(as_annotator, transcript, schema, **body), status, code)


def test_a_second_answer_to_the_same_question_is_a_409(as_annotator, transcript, schema):
    first = topic(as_annotator, transcript, schema).json()
    body = assert_error(topic(as_annotator, transcript, schema), 409, "annotation-exists")
    assert body["details"] == {"id": first["id"]}


def test_a_schema_of_another_dataset_is_refused(
    as_curator, curator, as_annotator, transcript, schema
):
    from editor.models import Dataset

    other = Dataset.objects.create(name="Other", slug="other")
    Membership.objects.create(user=curator, dataset=other, role=Role.CURATOR)
    foreign = as_curator.post(
        "/datasets/other/label-schemas", {"name": "X", "questions": QUESTIONS}
    ).json()
    # The annotator is not in the other dataset: its schema does not exist for them.
    assert_error(topic(as_annotator, transcript, foreign), 404, "not-found")
    # The curator is in both: the schema is refused for this transcript.
    assert_error(topic(as_curator, transcript, foreign), 422, "invalid-annotation")


def test_who_reads_and_writes_annotations(
    as_annotator, as_reviewer, as_curator, as_viewer, as_outsider, transcript, schema
):
    mine = topic(as_annotator, transcript, schema).json()
    theirs = topic(as_reviewer, transcript, schema, value="billing").json()
    curators = topic(as_curator, transcript, schema).json()
    listing = f"/transcripts/{transcript.pk}/annotations"

    def ids(client, **params):
        response = client.get(listing, params)
        assert response.status_code == 200, response.content
        return [a["id"] for a in response.json()["items"]]

    # Annotators see their own; reviewers and curators everyone's.
    assert ids(as_annotator) == [mine["id"]]
    assert ids(as_reviewer) == [mine["id"], theirs["id"], curators["id"]]
    assert ids(as_curator, annotator="annotator") == [mine["id"]]
    assert ids(as_curator, state="submitted") == []
    assert_error(as_annotator.get(f"/annotations/{theirs['id']}"), 404, "not-found")
    assert as_reviewer.get(f"/annotations/{mine['id']}").status_code == 200

    # Viewers read schemas only; outsiders see nothing.
    assert_error(as_viewer.get(listing), 403, "forbidden")
    assert_error(as_viewer.get(f"/annotations/{mine['id']}"), 403, "forbidden")
    assert_error(topic(as_viewer, transcript, schema), 403, "forbidden")
    assert_error(as_outsider.get(listing), 404, "not-found")
    assert_error(as_outsider.get(f"/annotations/{mine['id']}"), 404, "not-found")
    assert_error(topic(as_outsider, transcript, schema), 404, "not-found")

    # Everyone changes only their own answers, reviewers and curators included.
    for client in (as_reviewer, as_curator):
        assert_error(
            client.put(f"/annotations/{mine['id']}", {"value": "billing"}), 403, "forbidden"
        )
        assert_error(client.post(f"/annotations/{mine['id']}/submit"), 403, "forbidden")
        assert_error(client.delete(f"/annotations/{mine['id']}"), 403, "forbidden")
    assert Annotation.objects.get(pk=mine["id"]).value == "bug"


def test_edits_through_the_api_move_and_flag_spans(as_annotator, transcript, schema):
    span = answer(
        as_annotator,
        transcript,
        schema,
        question="claims",
        value="hallucination",
        message_index=3,
        start=0,
        end=6,
    ).json()
    inserted = as_annotator.post(
        f"/transcripts/{transcript.pk}/messages",
        {"version": 1, "message": {"role": "user", "content": "Hi."}},
    )
    assert inserted.status_code == 201
    after = as_annotator.get(f"/annotations/{span['id']}").json()
    assert (after["message_index"], after["anchor_state"]) == (4, "ok")

    edited = as_annotator.client.patch(
        f"/api/v1/transcripts/{transcript.pk}/messages/4",
        '{"version": 2, "content": "No words from before."}',
        content_type="application/json",
        headers=as_annotator.headers,
    )
    assert edited.status_code == 200, edited.content
    flagged = as_annotator.get(
        f"/transcripts/{transcript.pk}/annotations", {"anchor_state": "flagged"}
    ).json()
    assert [a["id"] for a in flagged["items"]] == [span["id"]]
    assert (flagged["items"][0]["start"], flagged["items"][0]["end"]) == (0, 6)
