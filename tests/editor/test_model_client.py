"""editor.assist.client against the local OpenAI-compatible server (tests/support): answers,
streams, usage recorded per request, failures as ModelCallFailed, and the key kept secret."""

from __future__ import annotations

import io
import json
import logging

import pytest
from django.core.management import call_command

from editor.assist import client
from editor.assist.client import complete
from editor.errors import ModelCallFailed
from editor.models import ModelConnection, ModelRequest
from tests.support.openai_server import Reply

pytestmark = pytest.mark.django_db

SENTINEL = "sk-SENTINEL-never-shown-4f1c9a"


@pytest.fixture
def connection(dataset, openai_server, curator):
    return ModelConnection.objects.create(
        dataset=dataset,
        name="local",
        base_url=openai_server.base_url,
        model="test-model",
        options={"temperature": 0.2, "max_tokens": 64},
        timeout_seconds=5,
        created_by=curator,
    )


MESSAGES = [{"role": "user", "content": "What is two and two?"}]


def test_a_whole_answer_with_its_usage_recorded(connection, openai_server, curator):
    openai_server.reply(Reply(content="Four.", usage=(12, 3)))
    completion = complete(connection, MESSAGES, purpose="test", user=curator)
    assert completion.message == {"role": "assistant", "content": "Four."}
    assert completion.usage == (12, 3)
    assert completion.finish_reason == "stop"
    body = openai_server.bodies()[0]
    assert body["model"] == "test-model"
    assert body["messages"] == MESSAGES
    assert body["temperature"] == 0.2 and body["max_tokens"] == 64
    assert "stream" not in body
    row = ModelRequest.objects.get()
    assert (row.ok, row.tokens_in, row.tokens_out, row.purpose) == (True, 12, 3, "test")
    assert row.user == curator and row.dataset == connection.dataset
    assert row.pk == completion.request_id


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_and_tool_calls_in_a_whole_answer(connection, openai_server, field):
    openai_server.reply(
        Reply(
            content=None,
            reasoning="The user wants the weather.",
            reasoning_field=field,
            tool_calls=[{"id": "call_1", "name": "weather", "arguments": {"city": "Tokyo"}}],
        )
    )
    completion = complete(connection, MESSAGES, purpose="test")
    assert completion.message["reasoning"] == "The user wants the weather."
    assert completion.message["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Tokyo"}'},
        }
    ]
    assert completion.finish_reason == "tool_calls"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_a_streamed_answer_arrives_in_pieces(connection, openai_server, field):
    openai_server.reply(
        Reply(
            content="It is sunny in Tokyo.",
            reasoning="Look it up first.",
            reasoning_field=field,
            tool_calls=[{"id": "c9", "name": "weather", "arguments": {"city": "Tokyo"}}],
            usage=(40, 9),
        )
    )
    deltas = []
    completion = complete(connection, MESSAGES, purpose="test", stream=True, on_delta=deltas.append)
    body = openai_server.bodies()[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    content = [d["content"] for d in deltas if "content" in d]
    assert len(content) > 1 and "".join(content) == "It is sunny in Tokyo."
    assert "".join(d["reasoning"] for d in deltas if "reasoning" in d) == "Look it up first."
    assert completion.message["content"] == "It is sunny in Tokyo."
    assert completion.message["reasoning"] == "Look it up first."
    assert completion.message["tool_calls"][0]["id"] == "c9"
    assert json.loads(completion.message["tool_calls"][0]["function"]["arguments"]) == {
        "city": "Tokyo"
    }
    assert completion.usage == (40, 9)
    assert ModelRequest.objects.get().tokens_out == 9


def test_options_cannot_override_what_the_call_decides(connection, openai_server):
    connection.options = {"model": "other", "stream": True, "top_p": 0.5}
    connection.save()
    complete(connection, MESSAGES, purpose="test")
    body = openai_server.bodies()[0]
    assert body["model"] == "test-model" and "stream" not in body and body["top_p"] == 0.5


def test_429_is_retryable_with_the_servers_retry_after(connection, openai_server):
    openai_server.reply(Reply(status=429, retry_after=7, error_message="Rate limit reached"))
    with pytest.raises(ModelCallFailed) as caught:
        complete(connection, MESSAGES, purpose="test")
    failure = caught.value
    assert failure.status == 502 and failure.code == "model-call-failed"
    assert failure.details == {"status_code": 429, "retryable": True, "retry_after": 7.0}
    assert "429" in failure.message and "Rate limit reached" in failure.message
    row = ModelRequest.objects.get()
    assert (row.ok, row.status_code) == (False, 429)
    assert "Rate limit reached" in row.error


@pytest.mark.parametrize(("status", "retryable"), [(500, True), (503, True), (400, False)])
def test_server_errors_say_what_the_server_answered(connection, openai_server, status, retryable):
    openai_server.reply(Reply(status=status, error_message=f"scripted failure {status}"))
    with pytest.raises(ModelCallFailed) as caught:
        complete(connection, MESSAGES, purpose="test", stream=True)
    assert caught.value.details["retryable"] is retryable
    assert caught.value.details["status_code"] == status
    assert f"scripted failure {status}" in caught.value.message


def test_a_timeout_is_retryable(connection, openai_server):
    connection.timeout_seconds = 0.3
    connection.save()
    openai_server.reply(Reply(delay=2))
    with pytest.raises(ModelCallFailed) as caught:
        complete(connection, MESSAGES, purpose="test")
    assert caught.value.details == {"status_code": None, "retryable": True, "retry_after": None}
    assert "did not answer within 0.3 seconds" in caught.value.message
    assert ModelRequest.objects.get().ok is False


def test_a_connection_closed_without_answer_is_retryable(connection, openai_server):
    openai_server.reply(Reply(dead=True))
    with pytest.raises(ModelCallFailed) as caught:
        complete(connection, MESSAGES, purpose="test")
    assert caught.value.details["retryable"] is True
    assert "Could not reach" in caught.value.message


def test_a_stopped_server_refuses(connection, openai_server):
    openai_server.stop()
    result = client.test_connection(connection, None)
    assert result["ok"] is False and result["retryable"] is True
    assert "Could not reach the model server" in result["error"]


def test_test_connection_gives_the_answer(connection, openai_server, curator):
    openai_server.reply("I am here.")
    result = client.test_connection(connection, curator)
    assert result["ok"] is True and result["answer"] == "I am here."
    assert result["model"] == "test-model"
    assert ModelRequest.objects.get().purpose == "test"


def test_the_key_is_sent_but_never_shown_stored_or_logged(
    connection, openai_server, monkeypatch, caplog
):
    monkeypatch.setenv("OCM_TEST_MODEL_KEY", SENTINEL)
    connection.api_key_env = "OCM_TEST_MODEL_KEY"
    connection.save()
    caplog.set_level(logging.DEBUG)

    def echo_the_header(body):  # a careless server that repeats what it was sent
        headers = openai_server.requests[-1].headers
        return Reply(status=401, error_message=f"bad key {headers.get('authorization')}")

    openai_server.reply("fine")
    ok = client.test_connection(connection, None)
    openai_server.respond_with(echo_the_header)
    failed = client.test_connection(connection, None)
    with pytest.raises(ModelCallFailed) as caught:
        complete(connection, MESSAGES, purpose="test", stream=True)

    assert openai_server.requests[0].headers["authorization"] == f"Bearer {SENTINEL}"
    assert ok["ok"] is True and failed["ok"] is False
    assert "bad key Bearer [api key]" in failed["error"]
    shown = json.dumps([ok, failed, caught.value.message, caught.value.details])
    assert SENTINEL not in shown
    dump = io.StringIO()
    call_command("dumpdata", stdout=dump)  # the whole database
    assert "OCM_TEST_MODEL_KEY" in dump.getvalue()  # the variable's name is there …
    assert SENTINEL not in dump.getvalue()  # … never its value
    assert SENTINEL not in caplog.text


def test_a_long_error_is_cut(connection, openai_server):
    openai_server.reply(Reply(status=500, error_message="x" * 5000))
    with pytest.raises(ModelCallFailed) as caught:
        complete(connection, MESSAGES, purpose="test")
    assert len(caught.value.message) < 500
    assert len(ModelRequest.objects.get().error) <= 500


def test_response_format_is_sent_and_the_scripted_json_answered(connection, openai_server):
    schema = {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": {"type": "object"}},
    }
    openai_server.reply({"value": "yes", "rationale": "Polite."})
    completion = complete(connection, MESSAGES, response_format=schema, purpose="judge")
    assert json.loads(completion.message["content"]) == {"value": "yes", "rationale": "Polite."}
    assert openai_server.bodies()[0]["response_format"] == schema
    assert ModelRequest.objects.get().purpose == "judge"


def test_the_server_lists_its_models_and_records_in_order(openai_server):
    import openai

    openai_server.models = ["a", "b"]
    listed = openai.OpenAI(base_url=openai_server.base_url, api_key="x").models.list()
    assert [m.id for m in listed.data] == ["a", "b"]
    assert openai_server.requests[0].path == "/v1/models"
    assert openai_server.bodies() == []
