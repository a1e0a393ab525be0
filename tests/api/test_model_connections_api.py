"""/api/v1/datasets/{slug}/model-connections (curators manage, editors read, never a key) and
/api/v1/transcripts/{id}/messages/{index}/regenerate (whole and streamed), against the local
OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest

from editor.models import Alternative, ModelConnection, ModelRequest
from tests.support.openai_server import Reply

from .conftest import assert_error

pytestmark = pytest.mark.django_db

SENTINEL = "sk-SENTINEL-api-never-shown-77aa"
URL = "/datasets/support-chats/model-connections"


@pytest.fixture
def fields(dataset, openai_server):
    return {
        "name": "local vLLM",
        "base_url": openai_server.base_url,
        "model": "test-model",
        "api_key_env": "OCM_TEST_API_MODEL_KEY",
        "options": {"temperature": 0.3},
    }


@pytest.fixture
def created(as_curator, fields):
    response = as_curator.post(URL, fields)
    assert response.status_code == 201, response.content
    return response.json()


def test_curators_add_list_change_and_delete(as_curator, as_annotator, fields, created):
    assert created["name"] == "local vLLM" and created["api_key_env"] == "OCM_TEST_API_MODEL_KEY"
    assert created["api_key_set"] is False and created["tokens_in"] == 0
    assert created["base_url"] == fields["base_url"]
    listed = as_annotator.get(URL).json()
    assert listed["count"] == 1 and listed["items"][0]["id"] == created["id"]
    changed = as_curator.patch(f"{URL}/{created['id']}", {"timeout_seconds": 12, "model": "m2"})
    assert changed.status_code == 200, changed.content
    assert changed.json()["timeout_seconds"] == 12 and changed.json()["model"] == "m2"
    assert changed.json()["name"] == "local vLLM"
    assert as_curator.delete(f"{URL}/{created['id']}").status_code == 204
    assert not ModelConnection.objects.exists()


def test_roles(as_annotator, as_viewer, as_outsider, fields, created):
    assert_error(as_annotator.post(URL, fields), 403, "forbidden")
    assert_error(as_annotator.patch(f"{URL}/{created['id']}", {"model": "x"}), 403, "forbidden")
    assert_error(as_annotator.delete(f"{URL}/{created['id']}"), 403, "forbidden")
    assert_error(as_annotator.post(f"{URL}/{created['id']}/test"), 403, "forbidden")
    assert_error(as_viewer.get(URL), 403, "forbidden")
    assert as_outsider.get(URL).status_code == 404


def test_the_key_is_refused_never_echoed_and_only_said_to_be_set(
    as_curator, fields, created, monkeypatch, openai_server
):
    response = as_curator.post(URL, {**fields, "name": "other", "api_key": SENTINEL})
    body = assert_error(response, 422, "invalid-model-connection")
    assert "api_key_env" in body["message"] and SENTINEL not in response.content.decode()
    # A key pasted into api_key_env: refused without being repeated.
    response = as_curator.patch(f"{URL}/{created['id']}", {"api_key_env": SENTINEL})
    assert_error(response, 422, "invalid-model-connection")
    assert SENTINEL not in response.content.decode()
    response = as_curator.patch(f"{URL}/{created['id']}", {"options": {"api_key": SENTINEL}})
    assert_error(response, 422, "invalid-model-connection")
    assert SENTINEL not in response.content.decode()

    monkeypatch.setenv("OCM_TEST_API_MODEL_KEY", SENTINEL)
    shown = as_curator.get(f"{URL}/{created['id']}")
    assert shown.json()["api_key_set"] is True and SENTINEL not in shown.content.decode()
    tested = as_curator.post(f"{URL}/{created['id']}/test")
    assert tested.json()["ok"] is True and SENTINEL not in tested.content.decode()
    assert openai_server.requests[-1].headers["authorization"] == f"Bearer {SENTINEL}"
    assert SENTINEL not in json.dumps(list(ModelConnection.objects.values()), default=str)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"base_url": "ftp://example.com/v1"}, "base_url"),
        ({"base_url": "file:///etc/passwd"}, "base_url"),
        ({"base_url": "http://user:pw@example.com/v1"}, "base_url"),
        ({"api_key_env": "not a name"}, "api_key_env"),
        ({"options": {"stream": True}}, "options"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"max_concurrency": 1000}, "max_concurrency"),
        ({"name": "   "}, "name"),
    ],
)
def test_bad_fields_are_named(as_curator, created, change, field):
    response = as_curator.patch(f"{URL}/{created['id']}", change)
    body = assert_error(response, 422, "invalid-model-connection")
    assert field in body["details"]["fields"]


def test_unknown_fields_and_taken_names(as_curator, fields, created):
    assert as_curator.patch(f"{URL}/{created['id']}", {"options": [1]}).status_code == 422
    assert_error(as_curator.post(URL, {**fields, "colour": "red"}), 422, "invalid-model-connection")
    assert_error(as_curator.post(URL, fields), 409, "model-connection-name-taken")
    assert_error(as_curator.get(f"{URL}/999999"), 404, "not-found")


def test_the_test_route_gives_the_answer_or_the_exact_error(as_curator, created, openai_server):
    openai_server.reply("Ready.", Reply(status=503, error_message="model is loading"))
    ok = as_curator.post(f"{URL}/{created['id']}/test").json()
    assert ok["ok"] is True and ok["answer"] == "Ready."
    failed = as_curator.post(f"{URL}/{created['id']}/test").json()
    assert failed["ok"] is False and failed["status_code"] == 503
    assert "model is loading" in failed["error"] and failed["retryable"] is True
    shown = as_curator.get(f"{URL}/{created['id']}").json()
    assert shown["requests_count"] == 2 and shown["failed_count"] == 1
    assert shown["tokens_in"] > 0 and shown["tokens_out"] == 1


def regenerate_url(transcript, index=1):
    return f"/transcripts/{transcript.pk}/messages/{index}/regenerate"


def test_regenerate_whole(as_annotator, transcript, created, openai_server):
    openai_server.reply(Reply(content="A better answer.", usage=(20, 4)))
    response = as_annotator.post(regenerate_url(transcript), {"connection_id": created["id"]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["source"] == "model" and body["message_index"] == 1
    assert body["messages"][0]["content"] == "A better answer."
    assert body["generation"]["usage"] == {"tokens_in": 20, "tokens_out": 4}
    assert body["current"] is False
    row = ModelRequest.objects.get()
    assert (row.purpose, row.tokens_in, row.tokens_out) == ("regenerate", 20, 4)


def test_regenerate_streamed(as_annotator, transcript, created, openai_server):
    openai_server.reply(Reply(content="Streamed words arrive"))
    response = as_annotator.post(
        regenerate_url(transcript) + "?stream=true", {"connection_id": created["id"]}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    text = b"".join(response.streaming_content).decode()
    events = [block for block in text.split("\n\n") if block]
    deltas = [json.loads(e.split("data: ", 1)[1]) for e in events if e.startswith("event: delta")]
    assert "".join(d["content"] for d in deltas) == "Streamed words arrive"
    done = json.loads(events[-1].split("data: ", 1)[1])
    assert Alternative.objects.get(pk=done["alternative"]["id"]).source == "model"


def test_regenerate_refusals(as_annotator, as_viewer, transcript, created, openai_server):
    body = {"connection_id": created["id"]}
    assert_error(as_annotator.post(regenerate_url(transcript, 0), body), 422, "not-a-turn")
    assert as_annotator.post(regenerate_url(transcript, 99), body).status_code == 404
    assert_error(as_viewer.post(regenerate_url(transcript), body), 403, "E-PERM-VISIBILITY")
    assert_error(
        as_annotator.post(regenerate_url(transcript), {"connection_id": 987654}), 404, "not-found"
    )
    openai_server.reply(Reply(status=429, retry_after=5, error_message="busy"))
    failed = assert_error(
        as_annotator.post(regenerate_url(transcript), body), 502, "model-call-failed"
    )
    assert failed["details"] == {"status_code": 429, "retryable": True, "retry_after": 5.0}
    assert not Alternative.objects.exists()


def test_model_calls_have_a_budget_per_caller(
    as_annotator, transcript, created, openai_server, settings
):
    settings.OCM_THROTTLES = {"model": (2, 60)}
    body = {"connection_id": created["id"]}
    for _ in range(2):
        assert as_annotator.post(regenerate_url(transcript), body).status_code == 201
    refused = as_annotator.post(regenerate_url(transcript), body)
    assert_error(refused, 429, "too-many-requests")
    assert int(refused["Retry-After"]) >= 1
    assert len(openai_server.bodies()) == 2


def test_a_connection_a_judge_uses_is_not_deleted(as_curator, created, dataset, curator):
    from editor.labels import create_label_schema
    from editor.models import Judge

    questions = [
        {
            "key": "helpful",
            "kind": "choice",
            "prompt": "Helpful?",
            "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}],
        }
    ]
    schema = create_label_schema(dataset, author=curator, name="Labels", questions=questions)
    Judge.objects.create(
        schema=schema,
        question="helpful",
        connection_id=created["id"],
        prompt_template="{transcript}",
    )
    refused = as_curator.delete(f"{URL}/{created['id']}")
    assert_error(refused, 409, "model-connection-in-use")
    assert ModelConnection.objects.filter(pk=created["id"]).exists()
