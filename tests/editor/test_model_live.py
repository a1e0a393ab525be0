"""The client and regenerate against a real OpenAI-compatible server (vLLM, Ollama, llama.cpp's
server, LiteLLM, OpenAI), when one is given:

    OCM_TEST_OPENAI_BASE_URL=http://localhost:11434/v1 OCM_TEST_OPENAI_MODEL=qwen2.5:0.5b \\
        pytest tests/editor/test_model_live.py

``OCM_TEST_OPENAI_API_KEY`` holds the key when the server wants one. Skipped without a URL:
the rest of the suite uses the local scripted server (tests/support/openai_server.py)."""

from __future__ import annotations

import os

import pytest

from editor.alternatives import turn_starts
from editor.assist import client, regenerate
from editor.models import ModelConnection, ModelRequest
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

BASE_URL = os.environ.get("OCM_TEST_OPENAI_BASE_URL")
MODEL = os.environ.get("OCM_TEST_OPENAI_MODEL", "")

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not BASE_URL,
        reason="no real model server: set OCM_TEST_OPENAI_BASE_URL (and OCM_TEST_OPENAI_MODEL, "
        "OCM_TEST_OPENAI_API_KEY if it wants one) to run against vLLM, Ollama or another",
    ),
]


@pytest.fixture
def connection(dataset):
    return ModelConnection.objects.create(
        dataset=dataset,
        name="live",
        base_url=BASE_URL or "",
        model=MODEL,
        api_key_env="OCM_TEST_OPENAI_API_KEY",
        options={"max_tokens": 32, "temperature": 0},
        timeout_seconds=120,
    )


def test_a_real_server_answers_whole_and_streamed(connection, curator):
    result = client.test_connection(connection, curator)
    assert result["ok"] is True, result
    assert result["tokens_in"] > 0
    pieces = []
    completion = client.complete(
        connection,
        [{"role": "user", "content": "Count from one to five."}],
        stream=True,
        on_delta=pieces.append,
        purpose="test",
    )
    text = completion.message.get("content") or completion.message.get("reasoning") or ""
    assert text and pieces
    assert completion.usage[0] > 0
    assert ModelRequest.objects.filter(ok=True).count() == 2


def test_a_real_server_regenerates_a_turn(connection, dataset, annotator):
    transcript = create_transcript(
        dataset, author=annotator, text=conversation("openchatml-2.2"), spec="openchatml-2.2"
    )
    index = turn_starts(transcript.stored_messages())[-1]
    alternative = regenerate.regenerate(transcript, index, connection.pk, annotator)
    assert alternative.source == "model" and alternative.messages
    assert alternative.generation["usage"]["tokens_in"] > 0
