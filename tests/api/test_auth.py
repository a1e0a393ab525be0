"""Bearer tokens and session auth (with CSRF): who may call the API, and the 401s."""

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from editor.models import ApiToken

from .conftest import PREFIX, ApiClient, assert_error

pytestmark = pytest.mark.django_db


def test_a_valid_bearer_token_authenticates(as_annotator, dataset):
    response = as_annotator.get("/datasets")
    assert response.status_code == 200
    assert [d["slug"] for d in response.json()["items"]] == [dataset.slug]


@pytest.mark.parametrize(
    "header",
    [None, "Bearer ocm_not-a-real-token", "Bearer ", "Basic dXNlcjpwYXNz"],
    ids=["missing", "wrong", "empty", "other-scheme"],
)
def test_missing_or_wrong_credentials_are_a_json_401(client, header):
    headers = {"Authorization": header} if header else {}
    response = client.get(f"{PREFIX}/datasets", headers=headers)
    assert_error(response, 401, "unauthenticated")


def test_a_revoked_token_is_refused(client, annotator):
    row, token = ApiToken.issue(annotator, name="laptop")
    assert ApiClient(client, token).get("/datasets").status_code == 200
    row.revoke()
    assert_error(ApiClient(client, token).get("/datasets"), 401, "unauthenticated")


def test_a_token_of_an_inactive_user_is_refused(client, annotator):
    _, token = ApiToken.issue(annotator)
    annotator.is_active = False
    annotator.save()
    assert_error(ApiClient(client, token).get("/datasets"), 401, "unauthenticated")


def test_a_wrong_token_is_not_rescued_by_a_session(client, annotator):
    client.force_login(annotator)
    assert client.get(f"{PREFIX}/datasets").status_code == 200
    response = client.get(f"{PREFIX}/datasets", headers={"Authorization": "Bearer ocm_wrong"})
    assert_error(response, 401, "unauthenticated")


def test_tokens_are_stored_hashed_and_record_their_last_use(client, annotator):
    row, token = ApiToken.issue(annotator)
    assert token.startswith("ocm_") and len(token) > 40
    assert token not in (row.key_hash, row.prefix)
    assert row.key_hash == ApiToken.hash(token)
    assert row.last_used_at is None
    ApiClient(client, token).get("/datasets")
    row.refresh_from_db()
    assert row.last_used_at is not None


def test_the_command_prints_a_working_token_once(client, annotator, capsys):
    call_command("api_token", "annotator", "--name", "ci")
    token = capsys.readouterr().out.strip()
    assert ApiToken.objects.get().name == "ci"
    assert ApiClient(client, token).get("/datasets").status_code == 200


def test_the_command_refuses_an_unknown_user(db):
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("api_token", "nobody")
    assert not ApiToken.objects.exists()


def test_session_auth_enforces_csrf_on_unsafe_methods(annotator, dataset):
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    body = {"text": "<|start|>user<|message|>Hi<|end|>", "spec": "openchatml-2.2"}
    url = f"{PREFIX}/datasets/{dataset.slug}/transcripts"

    assert client.get(f"{PREFIX}/datasets").status_code == 200  # safe: no token needed
    refused = client.post(url, body, content_type="application/json")
    assert_error(refused, 403, "csrf-failed")

    client.get("/")  # the page sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        url, body, content_type="application/json", headers={"X-CSRFToken": token}
    )
    assert response.status_code == 201, response.content


def test_bearer_requests_need_no_csrf_token(as_annotator, dataset):
    response = as_annotator.post(
        f"/datasets/{dataset.slug}/transcripts",
        {"text": "<|start|>user<|message|>Hi<|end|>", "spec": "openchatml-2.2"},
    )
    assert response.status_code == 201
