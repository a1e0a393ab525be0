"""The CLI's verbs over HTTP, on posted text: /validate, /convert, /render."""

import json

import pytest
from django.contrib.auth import get_user_model

from api.routers import formats as formats_router

HARMONY = (
    "<|start|>user<|message|>What is 2 + 2?<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>Simple sum.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>4.<|return|>"
)


@pytest.fixture
def client_in(client, db):
    user = get_user_model().objects.create_user("viewer1", password="a-long-test-password")
    client.force_login(user)
    return client


def post(client, route, body):
    return client.post(f"/api/v1{route}", json.dumps(body), content_type="application/json")


def test_anonymous_gets_401(client, db):
    assert post(client, "/validate", {"text": HARMONY}).status_code == 401


def test_validate_returns_syntax_and_semantic_diagnostics(client_in):
    text = (
        "version: 2.2\n<|start|>assistant to=functions.f call_id=c1<|channel|>commentary"
        '<|constrain|>json<|message|>{"a" 1}<|call|>'
    )
    body = post(client_in, "/validate", {"text": text}).json()
    assert body["spec"] == "openchatml-2.2"
    assert body["messages"][0]["recipient"] == "functions.f"
    codes = [d["code"] for d in body["diagnostics"]]
    assert "E-BODY-CONSTRAINT-VIOLATION" in codes  # semantic: the body is not JSON
    assert body["error_count"] >= 1


def test_validate_of_an_undetectable_text_names_no_spec(client_in):
    body = post(client_in, "/validate", {"text": "just prose"}).json()
    assert body["spec"] == "unknown"
    assert [d["code"] for d in body["diagnostics"]] == ["E-DETECT-UNKNOWN"]


def test_convert_returns_text_and_losses(client_in):
    text = json.dumps(
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
        ]
    )
    response = post(
        client_in, "/convert", {"text": text, "from": "openai-messages", "to": "chatml"}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["spec"] == "chatml"
    assert body["text"].startswith("<|start|>")
    assert body["losses"] == [
        {
            "message_index": 1,
            "field": "message",
            "detail": "tool call to functions.f dropped (chatml has no tool calls)",
        }
    ]


def test_convert_of_unreadable_text_is_422_with_its_diagnostics(client_in):
    response = post(
        client_in, "/convert", {"text": "[{", "from": "openai-messages", "to": "harmony"}
    )
    assert response.status_code == 422
    assert response.json()["code"] == "invalid-content"
    assert response.json()["details"][0]["code"] == "E-PARSE-JSON"


def test_convert_to_an_unknown_spec_is_422(client_in):
    response = post(client_in, "/convert", {"text": HARMONY, "to": "nope"})
    assert response.status_code == 422
    assert response.json()["code"] == "invalid-request"


@pytest.mark.parametrize(
    ("audience", "channels"),
    [("end_user", ["final"]), ("annotator", ["analysis", "final"])],
)
def test_render_shows_what_the_audience_sees(client_in, audience, channels):
    response = post(client_in, "/render", {"text": HARMONY, "audience": audience})
    assert response.status_code == 200
    body = response.json()
    assert body["audience"] == audience
    shown = [
        i["channel"] for i in body["items"] if i["role"] == "assistant" and i.get("visible", True)
    ]
    assert [c for c in shown if c in channels] == channels
    assert "source" not in body


def test_render_debug_carries_the_source(client_in):
    body = post(client_in, "/render", {"text": HARMONY, "audience": "debug"}).json()
    assert body["source"] == HARMONY and body["spans"]


def test_render_of_an_undetectable_text_is_empty(client_in):
    body = post(client_in, "/render", {"text": "just prose"}).json()
    assert body["items"] == []


@pytest.mark.parametrize("route", ["/validate", "/convert", "/render", "/formats/parse"])
def test_a_body_over_the_limit_is_413(client_in, monkeypatch, route):
    monkeypatch.setattr(formats_router, "MAX_BODY_BYTES", 100)
    response = post(client_in, route, {"text": "x" * 200, "to": "harmony"})
    assert response.status_code == 413
    assert response.json()["code"] == "body-too-large"


def test_a_body_over_djangos_limit_is_413(client_in, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = post(client_in, "/validate", {"text": "x" * 200})
    assert response.status_code == 413


@pytest.mark.parametrize("route", ["/validate", "/convert", "/render"])
def test_bad_json_is_422(client_in, route):
    response = client_in.post(f"/api/v1{route}", b"{nope", content_type="application/json")
    assert response.status_code == 422
    assert response.json()["code"] == "invalid-request"


@pytest.mark.parametrize("route", ["/validate", "/render"])
def test_deep_nesting_is_a_diagnostic_not_a_500(client_in, route):
    response = post(client_in, route, {"text": "[" * 100_000, "spec": "openai-messages"})
    assert response.status_code == 200


@pytest.mark.parametrize("spec", [None, "openai-messages"])
def test_creating_a_transcript_from_deep_nesting_is_not_a_500(as_annotator, dataset, spec):
    """The storage decides (refused when undetectable, an empty draft with its diagnostics
    when the spec is named); the parse under it no longer raises."""
    body = {"text": "[" * 100_000} | ({"spec": spec} if spec else {})
    response = as_annotator.post(f"/datasets/{dataset.slug}/transcripts", body)
    assert response.status_code in (201, 422), response.content
