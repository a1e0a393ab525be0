"""The judges API: attach a judge, start a run over the list's filters (run at once in tests),
read it, cancel and resume, read and accept suggestions, judge vs people for a queue; who may
do what, and errors as JSON."""

from __future__ import annotations

import json

import pytest

from editor import queues
from editor.models import Annotation, AnnotationState, Suggestion
from tests.api.conftest import assert_error
from tests.support.judging import make_connection, make_schema, make_transcripts
from tests.support.openai_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def setup(dataset, curator, annotator, openai_server):
    schema = make_schema(dataset, curator)
    connection = make_connection(dataset, openai_server, curator)
    chats = make_transcripts(dataset, annotator, 3)
    openai_server.respond_with(lambda body: {"value": "yes", "rationale": "Answered it."})
    return {"schema": schema, "connection": connection, "chats": chats}


def attach(client, dataset, setup, **fields):
    body = {
        "schema": setup["schema"].pk,
        "question": "helpful",
        "connection": setup["connection"].pk,
        **fields,
    }
    return client.post(f"/datasets/{dataset.slug}/judges", body)


def test_a_judge_run_end_to_end(as_curator, as_annotator, dataset, setup, openai_server):
    made = attach(as_curator, dataset, setup)
    assert made.status_code == 201, made.json()
    judge = made.json()
    assert judge["question"] == "helpful" and judge["model"] == "judge-model"
    assert "{transcript}" in judge["prompt_template"]
    assert as_curator.get(f"/datasets/{dataset.slug}/judges").json()[0]["id"] == judge["id"]

    started = as_curator.post(
        "/judge-runs",
        {"dataset": dataset.slug, "schema": setup["schema"].pk, "question": "helpful"},
    )
    assert started.status_code == 202, started.json()
    run = as_curator.get(f"/judge-runs/{started.json()['id']}").json()
    assert run["status"] == "succeeded"
    assert run["progress"] == {"done": 3, "total": 3, "failed": 0, "percent": 100}
    assert run["tokens"]["requests"] == 3 and run["tokens"]["tokens_in"] > 0
    listed = as_curator.get("/judge-runs", {"dataset": dataset.slug}).json()
    assert [r["id"] for r in listed["items"]] == [run["id"]]

    chat = setup["chats"][0]
    [suggestion] = as_annotator.get(f"/transcripts/{chat.pk}/suggestions").json()
    assert suggestion["value"] == "yes" and suggestion["source"] == "model"
    assert suggestion["model"] == "judge-model" and suggestion["accepted_by"] is None
    accepted = as_annotator.post(f"/suggestions/{suggestion['id']}/accept")
    assert accepted.status_code == 200, accepted.json()
    assert accepted.json()["value"] == "yes" and accepted.json()["annotator"] == "annotator"
    assert accepted.json()["state"] == "draft"
    assert Suggestion.objects.get(pk=suggestion["id"]).accepted_by.username == "annotator"

    assert_error(as_curator.post(f"/judge-runs/{run['id']}/resume"), 409, "judge-run-not-resumable")


def test_a_run_over_filters_and_resumed_after_a_failure(as_curator, dataset, setup, openai_server):
    attach(as_curator, dataset, setup)
    openai_server.respond_with(lambda body: Reply(status=401, error_message="bad key"))
    started = as_curator.post(
        "/judge-runs",
        {
            "dataset": dataset.slug,
            "schema": setup["schema"].pk,
            "question": "helpful",
            "filters": "q=number+1",
        },
    )
    run = started.json()
    assert run["transcripts"] == 1
    run = as_curator.get(f"/judge-runs/{run['id']}").json()
    assert run["status"] == "succeeded" and run["progress"]["failed"] == 1
    assert "401" in run["failures"][0]["error"]
    openai_server.respond_with(lambda body: {"value": "no", "rationale": ""})
    resumed = as_curator.post(f"/judge-runs/{run['id']}/resume")
    assert resumed.status_code == 202
    run = as_curator.get(f"/judge-runs/{run['id']}").json()
    assert run["progress"]["done"] == 1 and run["failures"] == []
    assert as_curator.post(f"/judge-runs/{run['id']}/cancel").json()["cancelled"] is True


def test_refusals(as_curator, as_annotator, as_viewer, as_outsider, dataset, setup):
    assert_error(attach(as_annotator, dataset, setup), 403, "forbidden")
    assert_error(attach(as_curator, dataset, setup, question="harm"), 422, "invalid-judge")
    assert_error(
        attach(as_curator, dataset, setup, prompt_template="nothing"), 422, "invalid-judge"
    )
    assert_error(attach(as_curator, dataset, setup, connection=999999), 404, "not-found")
    assert_error(attach(as_outsider, dataset, setup), 404, "not-found")
    start = {"dataset": dataset.slug, "schema": setup["schema"].pk, "question": "helpful"}
    assert_error(as_curator.post("/judge-runs", start), 404, "not-found")  # no judge yet
    attach(as_curator, dataset, setup)
    assert_error(as_annotator.post("/judge-runs", start), 403, "forbidden")
    assert_error(
        as_curator.post("/judge-runs", {**start, "filters": {"has_errors": "perhaps"}}),
        422,
        "invalid-filter",
    )
    assert_error(as_curator.get("/judge-runs/999999"), 404, "not-found")
    chat = setup["chats"][0]
    assert_error(as_viewer.get(f"/transcripts/{chat.pk}/suggestions"), 403, "forbidden")
    assert_error(as_annotator.post("/suggestions/999999/accept"), 404, "not-found")


def test_change_and_detach_a_judge(as_curator, dataset, setup):
    judge = attach(as_curator, dataset, setup).json()
    changed = as_curator.patch(
        f"/datasets/{dataset.slug}/judges/{judge['id']}",
        {"prompt_template": "Judge {question} of {transcript}"},
    )
    assert changed.status_code == 200
    assert changed.json()["prompt_template"] == "Judge {question} of {transcript}"
    gone = as_curator.delete(f"/datasets/{dataset.slug}/judges/{judge['id']}")
    assert gone.status_code == 204
    assert_error(as_curator.get(f"/datasets/{dataset.slug}/judges/{judge['id']}"), 404, "not-found")


def test_judge_agreement_of_a_queue(as_curator, as_annotator, dataset, setup, curator, annotator):
    attach(as_curator, dataset, setup)
    chats = setup["chats"]
    queue = queues.create_queue(dataset, chats, name="Q", author=curator)
    version = setup["schema"].current_version
    for chat, person in zip(chats, ("yes", "no", "yes"), strict=True):
        Annotation.objects.create(
            transcript=chat,
            schema_version=version,
            question="helpful",
            annotator=annotator,
            value=person,
            state=AnnotationState.SUBMITTED,
        )
        Suggestion.objects.create(
            transcript=chat, schema_version=version, question="helpful", value="yes", model="m"
        )
    [figure] = as_curator.get(f"/queues/{queue.pk}/judge-agreement").json()
    assert figure["question"] == "helpful" and figure["compared"] == 3
    assert figure["disagreeing"] == [chats[1].pk]
    assert figure["confusion"]["rows"][0] == {"judge": "Helpful", "people": [2, 1]}
    assert figure["agreement"]["measure"] == "cohen_kappa"
    assert_error(as_annotator.get(f"/queues/{queue.pk}/judge-agreement"), 403, "forbidden")


def test_an_export_with_suggestions(as_curator, as_viewer, dataset, setup):
    chat = setup["chats"][0]
    Suggestion.objects.create(
        transcript=chat,
        schema_version=setup["schema"].current_version,
        question="helpful",
        value="yes",
        model="m",
    )
    answer = as_curator.get(f"/datasets/{dataset.slug}/export", {"with_suggestions": "true"})
    assert answer.status_code == 200
    lines = [json.loads(line) for line in b"".join(answer.streaming_content).splitlines()]
    rows = [line for line in lines if "suggestions" in line]
    assert sum(len(r["suggestions"]) for r in rows) == 1
    assert rows[0]["suggestions"][0]["source"] == "model"
    # The judge read hidden parts: never with an end user's rendering, nor to a viewer.
    end_user = {"with_suggestions": "true", "audience": "end_user"}
    for client in (as_curator, as_viewer):
        assert_error(client.get(f"/datasets/{dataset.slug}/export", end_user), 403, "forbidden")


def test_the_list_filter_judge_disagrees(as_curator, as_viewer, dataset, setup, annotator):
    version = setup["schema"].current_version
    chats = setup["chats"]
    for chat, person in zip(chats[:2], ("yes", "no"), strict=True):
        Annotation.objects.create(
            transcript=chat,
            schema_version=version,
            question="helpful",
            annotator=annotator,
            value=person,
            state=AnnotationState.SUBMITTED,
        )
        Suggestion.objects.create(
            transcript=chat, schema_version=version, question="helpful", value="yes", model="m"
        )
    listed = as_curator.get(f"/datasets/{dataset.slug}/transcripts", {"judge": "disagrees"})
    assert [row["id"] for row in listed.json()["items"]] == [chats[1].pk]
    refused = as_viewer.get(f"/datasets/{dataset.slug}/transcripts", {"judge": "disagrees"})
    assert refused.status_code == 403
    bad = as_curator.get(f"/datasets/{dataset.slug}/transcripts", {"judge": "agrees"})
    assert bad.status_code == 422
