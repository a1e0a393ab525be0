"""API clients: one per role of the shared ``dataset`` fixture, each with its own token."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from editor.models import ApiToken
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

PREFIX = "/api/v1"


class ApiClient:
    """The Django test client speaking JSON to /api/v1 with a bearer token."""

    def __init__(self, client, token: str | None):
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def get(self, path: str, params=None, **kwargs):
        return self.client.get(PREFIX + path, params or {}, headers=self.headers, **kwargs)

    def post(self, path: str, body=None, **kwargs):
        return self._send(self.client.post, path, body, **kwargs)

    def put(self, path: str, body=None, **kwargs):
        return self._send(self.client.put, path, body, **kwargs)

    def patch(self, path: str, body=None, **kwargs):
        return self._send(self.client.patch, path, body, **kwargs)

    def delete(self, path: str, params=None):
        query = f"?{urlencode(params)}" if params else ""
        return self.client.delete(PREFIX + path + query, headers=self.headers)

    def _send(self, method, path, body, **kwargs):
        return method(
            PREFIX + path,
            json.dumps(body if body is not None else {}),
            content_type="application/json",
            headers=self.headers,
            **kwargs,
        )


def api_client_for(user) -> ApiClient:
    from django.test import Client

    return ApiClient(Client(enforce_csrf_checks=True), ApiToken.issue(user)[1])


@pytest.fixture
def as_curator(curator):
    return api_client_for(curator)


@pytest.fixture
def as_annotator(annotator):
    return api_client_for(annotator)


@pytest.fixture
def as_viewer(viewer):
    return api_client_for(viewer)


@pytest.fixture
def as_outsider(outsider):
    return api_client_for(outsider)


@pytest.fixture
def transcript(dataset, annotator):
    return create_transcript(
        dataset,
        author=annotator,
        text=conversation(),
        spec="openchatml-2.2",
        title="Two turns",
        external_id="chat-1",
        metadata={"source": "test"},
    )


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == code, body
    assert body["message"]
    return body
