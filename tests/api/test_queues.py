"""The review-queue routes: create over a filter, claim, submit, skip, review, per role."""

from __future__ import annotations

import pytest

from editor.models import Membership, Role, Status, Transcript
from editor.storage.create import create_transcript
from tests.api.conftest import api_client_for, assert_error
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def drafts(dataset, curator):
    return [
        create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"T{n}"
        )
        for n in range(3)
    ]


@pytest.fixture
def queue_id(as_curator, drafts):
    response = as_curator.post(
        "/datasets/support-chats/queues",
        {"name": "Check", "overlap": 1, "filters": {"status": ["draft"]}},
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["progress"]["items"] == 3 and body["progress"]["open_items"] == 3
    return body["id"]


def test_only_curators_create_queues(as_annotator, as_viewer, as_outsider, drafts):
    body = {"name": "Q"}
    assert_error(as_annotator.post("/datasets/support-chats/queues", body), 403, "forbidden")
    assert_error(as_viewer.post("/datasets/support-chats/queues", body), 403, "forbidden")
    assert_error(as_outsider.post("/datasets/support-chats/queues", body), 404, "not-found")
    assert_error(
        api_client_for(drafts[0].created_by).post(
            "/datasets/support-chats/queues", {"name": "Q", "assignees": ["nobody"]}
        ),
        422,
        "unknown-user",
    )


def test_claim_submit_review_cycle(as_annotator, as_curator, as_viewer, as_outsider, queue_id):
    claimed = as_annotator.post(f"/queues/{queue_id}/claim")
    assert claimed.status_code == 200, claimed.content
    assignment = claimed.json()
    assert assignment["state"] == "claimed" and assignment["position"] == 0
    assert as_annotator.post(f"/queues/{queue_id}/claim").json()["id"] == assignment["id"]
    assert_error(as_viewer.post(f"/queues/{queue_id}/claim"), 403, "forbidden")
    assert_error(as_outsider.post(f"/queues/{queue_id}/claim"), 404, "not-found")

    submitted = as_annotator.post(f"/assignments/{assignment['id']}/submit")
    assert submitted.json()["state"] == "submitted"
    assert Transcript.objects.get(pk=assignment["transcript"]).status == Status.IN_REVIEW
    assert_error(
        as_annotator.post(f"/assignments/{assignment['id']}/submit"), 409, "transition-refused"
    )

    assert_error(
        as_annotator.post(f"/assignments/{assignment['id']}/review", {"decision": "approve"}),
        403,
        "forbidden",
    )
    assert_error(
        as_curator.post(f"/assignments/{assignment['id']}/review", {"decision": "reject"}),
        422,
        "comment-required",
    )
    rejected = as_curator.post(
        f"/assignments/{assignment['id']}/review", {"decision": "reject", "comment": "Too terse."}
    )
    assert rejected.json()["review_comment"] == "Too terse."
    mine = as_annotator.get(f"/queues/{queue_id}/assignments", {"state": "rejected"}).json()
    assert [a["review_comment"] for a in mine["items"]] == ["Too terse."]

    as_annotator.post(f"/assignments/{assignment['id']}/submit")
    approved = as_curator.post(f"/assignments/{assignment['id']}/review", {"decision": "approve"})
    assert approved.json()["state"] == "approved"
    assert Transcript.objects.get(pk=assignment["transcript"]).status == Status.APPROVED
    assert as_curator.get(f"/queues/{queue_id}").json()["progress"]["approved"] == 1


def test_skip_and_nothing_left_is_204(as_annotator, queue_id):
    for _ in range(3):
        assignment = as_annotator.post(f"/queues/{queue_id}/claim").json()
        assert (
            as_annotator.post(f"/assignments/{assignment['id']}/skip").json()["state"] == "skipped"
        )
    assert as_annotator.post(f"/queues/{queue_id}/claim").status_code == 204


def test_annotators_see_their_own_assignments_reviewers_everyones(
    as_annotator, as_curator, queue_id, dataset, django_user_model
):
    other = django_user_model.objects.create_user("other")
    Membership.objects.create(user=other, dataset=dataset, role=Role.ANNOTATOR)
    as_annotator.post(f"/queues/{queue_id}/claim")
    api_client_for(other).post(f"/queues/{queue_id}/claim")
    assert as_annotator.get(f"/queues/{queue_id}/assignments").json()["count"] == 1
    assert as_curator.get(f"/queues/{queue_id}/assignments").json()["count"] == 2
    assert_error(api_client_for(other).post("/assignments/999999/submit"), 404, "not-found")


def test_figures_for_reviewers(as_annotator, as_curator, queue_id, dataset, curator):
    from editor.labels import create_label_schema

    create_label_schema(
        dataset,
        author=curator,
        name="Q",
        questions=[
            {
                "key": "ok",
                "kind": "choice",
                "prompt": "OK?",
                "options": [{"value": "y", "label": "Yes"}, {"value": "n", "label": "No"}],
            }
        ],
    )
    assignment = as_annotator.post(f"/queues/{queue_id}/claim").json()
    as_annotator.post(f"/assignments/{assignment['id']}/submit")
    assert_error(as_annotator.get(f"/queues/{queue_id}/figures"), 403, "forbidden")
    body = as_curator.get(f"/queues/{queue_id}/figures").json()
    assert body["progress"]["submitted"] == 1
    assert body["annotators"][0]["name"] == "annotator" and body["annotators"][0]["done"] == 1
    assert body["annotators"][0]["states"]["submitted"] == 1
    [label] = body["labels"]
    assert label["question"] == "ok" and label["distribution"] == [
        {"label": "Yes", "count": 0},
        {"label": "No", "count": 0},
    ]
    assert (
        label["agreement"]["measure"] == "krippendorff_alpha"
        and label["agreement"]["value"] is None
    )


def test_a_queue_over_a_label_value(as_curator, as_annotator, dataset, curator, drafts):
    from editor.labels import create_label_schema
    from editor.labels.annotations import answer, submit_answers

    schema = create_label_schema(
        dataset,
        author=curator,
        name="Triage",
        questions=[
            {
                "key": "needs_fix",
                "kind": "choice",
                "prompt": "Needs a fix?",
                "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}],
            }
        ],
    )
    for transcript, value in zip(drafts, ("yes", "no", "yes"), strict=True):
        answer(transcript, annotator=curator, schema=schema, question="needs_fix", value=value)
        submit_answers(transcript, user=curator)
    response = as_curator.post(
        "/datasets/support-chats/queues",
        {"name": "Fixes", "filters": {"label": {"question": "needs_fix", "value": "yes"}}},
    )
    assert response.status_code == 201, response.content
    assert response.json()["progress"]["items"] == 2


def test_a_queue_over_a_text_search(as_curator, dataset, curator, drafts):
    create_transcript(
        dataset,
        author=curator,
        text="<|start|>user<|message|>My parcel is lost<|end|>",
        spec="openchatml-2.2",
    )
    response = as_curator.post(
        "/datasets/support-chats/queues", {"name": "Parcels", "filters": {"text": "parcel"}}
    )
    assert response.status_code == 201, response.content
    assert response.json()["progress"]["items"] == 1


def test_a_submit_reads_each_row_once(as_annotator, queue_id, django_assert_max_num_queries):
    """A submit (answers, the assignment's move, the transcript's status and revision) reads
    the assignment with everything it shows at once and never reads a row it just wrote."""
    assignment = as_annotator.post(f"/queues/{queue_id}/claim").json()
    # 25 when the move read its row back; 18 since the item's other assignments are read
    # (under lock, with the transcript's status) for the several-annotators rule; 19 with the
    # webhooks' events (the dataset's endpoints read once for the submit and the status change).
    with django_assert_max_num_queries(19):
        submitted = as_annotator.post(f"/assignments/{assignment['id']}/submit")
    assert submitted.status_code == 200, submitted.content
    body = submitted.json()
    assert (body["state"], body["annotator"]) == ("submitted", "annotator")
    assert Transcript.objects.get(pk=body["transcript"]).status == Status.IN_REVIEW
