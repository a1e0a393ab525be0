"""The formats router: spec ids, detection and parsing over HTTP, with JSON errors."""

import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def client_in(client, db):
    user = get_user_model().objects.create_user("annotator1", password="a-long-test-password")
    client.force_login(user)
    return client


def test_anonymous_request_gets_json_401(client, db):
    response = client.get("/api/v1/formats/specs")
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"


def test_specs_lists_every_spec_id(client_in):
    from editor.formats import SPEC_IDS

    response = client_in.get("/api/v1/formats/specs")
    assert response.status_code == 200
    assert [s["id"] for s in response.json()] == list(SPEC_IDS)


def test_parse_returns_canonical_json_and_diagnostics(client_in):
    text = "<|start|>user<|message|>What is 2 + 2?<|end|>\n<|start|>assistant<|channel|>final<|message|>4.<|return|>"
    response = client_in.post(
        "/api/v1/formats/parse",
        {"text": text, "spec": "openchatml-2.2"},
        content_type="application/json",
    )
    assert response.status_code == 200
    body = response.json()
    assert body["spec"] == "openchatml-2.2"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert body["messages"][1]["end"] == "return"
    assert body["diagnostics"] == []


def test_parse_reports_truncation_as_a_diagnostic_not_an_error_status(client_in):
    text = "<|start|>assistant<|channel|>final<|message|>Half an ans"
    response = client_in.post(
        "/api/v1/formats/parse",
        {"text": text, "spec": "openchatml-2.2"},
        content_type="application/json",
    )
    assert response.status_code == 200
    codes = [d["code"] for d in response.json()["diagnostics"]]
    assert "E-STREAM-TRUNCATED" in codes


def test_unknown_spec_is_a_400_with_the_known_ids(client_in):
    response = client_in.post(
        "/api/v1/formats/parse", {"text": "x", "spec": "nope"}, content_type="application/json"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "unknown-spec"
    assert "openchatml-2.2" in body["details"]["spec_ids"]


def test_missing_text_is_a_422_in_the_error_shape(client_in):
    response = client_in.post("/api/v1/formats/parse", {}, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["code"] == "invalid-request"


def test_openapi_schema_and_docs_are_served(client_in):
    schema = client_in.get("/api/v1/openapi.json")
    assert schema.status_code == 200
    assert "/api/v1/formats/parse" in schema.json()["paths"]
    assert client_in.get("/api/v1/docs").status_code == 200


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe"])
def test_unreadable_json_is_a_422_invalid_request(client_in, body):
    response = client_in.post("/api/v1/formats/parse", body, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["code"] == "invalid-request"


@pytest.mark.parametrize("route", ["/api/v1/formats/detect", "/api/v1/formats/parse"])
def test_deep_nesting_is_answered_not_a_500(client_in, route):
    response = client_in.post(route, {"text": "[" * 100_000}, content_type="application/json")
    assert response.status_code == 200
