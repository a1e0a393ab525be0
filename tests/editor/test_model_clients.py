"""editor.assist.clients: one ``openai.OpenAI`` per connection per process, kept between
requests, built again (the old one closed) when its base URL, key or timeout change, at most
``MAX_CLIENTS`` kept, none shared with a forked child."""

from __future__ import annotations

import pytest

from editor.assist import client
from editor.assist.client import complete
from editor.assist.clients import Settings, _Clients, clients
from editor.errors import ModelCallFailed
from editor.models import ModelConnection
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "user", "content": "Hello?"}]


@pytest.fixture
def connection(dataset, openai_server, curator):
    return ModelConnection.objects.create(
        dataset=dataset,
        name="local",
        base_url=openai_server.base_url,
        model="test-model",
        timeout_seconds=5,
        created_by=curator,
    )


def test_requests_of_a_connection_share_one_client_and_its_connection(connection, openai_server):
    first = client._client(connection)
    complete(connection, MESSAGES, purpose="test")
    complete(connection, MESSAGES, purpose="test", stream=False)
    assert client._client(ModelConnection.objects.get(pk=connection.pk)) is first
    assert not first.is_closed()
    assert len(openai_server.bodies()) == 2


def test_a_changed_setting_builds_a_new_client_and_closes_the_old(
    connection, openai_server, monkeypatch
):
    first = client._client(connection)
    connection.timeout_seconds = 7
    second = client._client(connection)
    assert second is not first and first.is_closed()
    assert second.timeout == 7

    monkeypatch.setenv("OCM_TEST_CLIENTS_KEY", "key-one")
    connection.api_key_env = "OCM_TEST_CLIENTS_KEY"
    third = client._client(connection)
    assert third is not second and second.is_closed() and third.api_key == "key-one"
    monkeypatch.setenv("OCM_TEST_CLIENTS_KEY", "key-two")  # the variable changed: read again
    fourth = client._client(connection)
    assert fourth.api_key == "key-two" and third.is_closed()

    other = OpenAIServer().start()
    try:
        connection.base_url = other.base_url
        connection.save()
        complete(connection, MESSAGES, purpose="test")
        assert len(other.bodies()) == 1 and fourth.is_closed()
    finally:
        other.stop()


def test_at_most_the_limit_is_kept_the_least_recently_used_closed_first():
    kept = _Clients(limit=2)
    a = kept.get(1, Settings("http://127.0.0.1:9/v1", None, 5))
    b = kept.get(2, Settings("http://127.0.0.1:9/v1", None, 5))
    assert kept.get(1, Settings("http://127.0.0.1:9/v1", None, 5)) is a  # 1 used last
    c = kept.get(3, Settings("http://127.0.0.1:9/v1", None, 5))
    assert len(kept) == 2 and b.is_closed() and not a.is_closed() and not c.is_closed()
    kept.clear()
    assert a.is_closed() and c.is_closed() and len(kept) == 0


def test_a_forked_child_builds_its_own(monkeypatch):
    kept = _Clients(limit=4)
    settings = Settings("http://127.0.0.1:9/v1", None, 5)
    parents = kept.get(1, settings)
    monkeypatch.setattr("editor.assist.clients.os.getpid", lambda: kept.pid + 1)
    childs = kept.get(1, settings)
    assert childs is not parents
    assert not parents.is_closed()  # its sockets are the parent's: left to it
    kept.clear()
    parents.close()


def test_a_kept_client_sees_a_server_that_stopped(connection, openai_server):
    complete(connection, MESSAGES, purpose="test")  # a connection kept open
    openai_server.stop()
    with pytest.raises(ModelCallFailed) as caught:
        complete(connection, MESSAGES, purpose="test")
    assert caught.value.details["retryable"] is True


def test_two_connections_with_the_same_settings_have_a_client_each(connection):
    """The cache is keyed by the connection's id: a second connection with the same
    settings has a client of its own (closing one never cuts the other's requests)."""
    twin = ModelConnection.objects.create(
        dataset=connection.dataset,
        name="twin",
        base_url=connection.base_url,
        model="test-model",
        timeout_seconds=5,
    )
    assert client._client(connection) is not client._client(twin)
    assert len(clients) >= 2
