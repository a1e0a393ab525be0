"""Calls to an OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp's
server, LiteLLM) through the official ``openai`` client, one ``ModelRequest`` row per call.

The API key is read from the environment variable the connection names, at call time, and
goes nowhere else: not into the row, the error, a log line or an answer. Errors become
``ModelCallFailed`` with what the server answered (scrubbed of the key) and whether trying
again may help. The client never retries by itself (``max_retries=0``): callers (a judge run)
decide, with ``retryable`` and ``retry_after``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai

try:  # openai 3 moved to httpx2; 1.x and 2.x use httpx
    import httpx2
except ImportError:  # pragma: no cover - depends on the installed openai
    httpx2 = httpx

from editor.assist.clients import Settings, clients
from editor.errors import ModelCallFailed
from editor.models import ModelConnection, ModelRequest

# Request fields a connection's options may not set: the call itself decides them.
RESERVED_OPTIONS = frozenset(
    {"model", "messages", "stream", "stream_options", "tools", "response_format", "n"}
)
# What the transport raises when a stream breaks off mid-answer (not wrapped by openai).
TRANSPORT_ERRORS = (httpx.HTTPError, httpx2.HTTPError)
# Reasoning as the servers send it: vLLM and DeepSeek ``reasoning_content``, Ollama,
# OpenRouter and newer vLLM ``reasoning``.
REASONING_FIELDS = ("reasoning_content", "reasoning")
TEST_PROMPT = "Reply with one short sentence to confirm that you are reachable."
MAX_ERROR = 500  # ModelRequest.error's length


@dataclass
class Completion:
    """A model's answer: ``message`` {"role": "assistant", "content", "reasoning",
    "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]} (the
    last two only when present), ``usage`` (tokens in, tokens out), ``finish_reason``."""

    message: dict
    usage: tuple[int, int]
    finish_reason: str | None
    model: str
    duration_ms: int = 0
    request_id: int | None = None
    extra: dict = field(default_factory=dict)


def api_key(connection: ModelConnection) -> str | None:
    """The key in the environment variable ``connection`` names (None when unset)."""
    if not connection.api_key_env:
        return None
    return os.environ.get(connection.api_key_env) or None


def api_key_set(connection: ModelConnection) -> bool:
    return api_key(connection) is not None


def options_of(connection: ModelConnection) -> dict:
    """The connection's request options, less the fields the call decides."""
    return {k: v for k, v in (connection.options or {}).items() if k not in RESERVED_OPTIONS}


def _client(connection: ModelConnection) -> openai.OpenAI:
    """The process's client for ``connection`` (kept between requests: ``clients``)."""
    settings = Settings(connection.base_url, api_key(connection), connection.timeout_seconds)
    # An unsaved connection (a test before saving) has no id: its settings name its client.
    return clients.get(connection.pk if connection.pk is not None else settings, settings)


def complete(
    connection: ModelConnection,
    messages: list[dict],
    *,
    tools: list[dict] | None = None,
    response_format: dict | None = None,
    stream: bool = False,
    on_delta: Callable[[dict], None] | None = None,
    purpose: str,
    dataset=None,
    user=None,
    transcript=None,
    run=None,
) -> Completion:
    """Ask ``connection``'s model to continue ``messages`` (OpenAI chat messages) with the
    connection's options. ``stream``: the answer is read as SSE chunks and ``on_delta`` is
    called with each piece as it arrives (see ``iter_completion``). Records a
    ``ModelRequest`` (purpose, tokens, duration, outcome) whether it succeeds or not.
    Raises ``ModelCallFailed``."""
    for item in iter_completion(
        connection,
        messages,
        tools=tools,
        response_format=response_format,
        stream=stream,
        purpose=purpose,
        dataset=dataset,
        user=user,
        transcript=transcript,
        run=run,
    ):
        if isinstance(item, Completion):
            return item
        if on_delta is not None:
            on_delta(item)
    raise AssertionError("iter_completion ends with its Completion")  # pragma: no cover


def iter_completion(
    connection: ModelConnection,
    messages: list[dict],
    *,
    tools: list[dict] | None = None,
    response_format: dict | None = None,
    stream: bool = True,
    purpose: str,
    dataset=None,
    user=None,
    transcript=None,
    run=None,
) -> Iterator[dict | Completion]:
    """``complete`` as a generator, for a caller that passes the pieces on as they come (an
    HTTP stream): yields each piece (``{"content": str}``, ``{"reasoning": str}`` or
    ``{"tool_call": {"index", "id", "name", "arguments"}}``, the call as known so far), then
    the ``Completion``. A caller that stops early records the request as cut short."""
    request: dict[str, Any] = {"model": connection.model, "messages": messages}
    if tools:
        request["tools"] = tools
    if response_format:
        request["response_format"] = response_format
    extra_body = options_of(connection)
    started = time.monotonic()
    row = ModelRequest(
        connection=connection,
        dataset=dataset if dataset is not None else connection.dataset,
        purpose=purpose,
        transcript=transcript,
        user=user if getattr(user, "is_authenticated", False) else None,
        run=run,
    )
    try:
        client = _client(connection)
        if stream:
            completion = yield from _streamed(client, request, extra_body)
        else:
            completion = _whole(client, request, extra_body)
    except (openai.APIError, _NoChoices, *TRANSPORT_ERRORS) as error:
        failure = _failure(error, connection)
        row.ok = False
        row.status_code = failure.details["status_code"]
        row.error = failure.message[:MAX_ERROR]
        row.duration_ms = _ms_since(started)
        row.save()
        raise failure from None
    except GeneratorExit:
        row.ok = False
        row.error = "Stopped by the caller before the answer ended."
        row.duration_ms = _ms_since(started)
        row.save()
        raise
    completion.duration_ms = row.duration_ms = _ms_since(started)
    row.tokens_in, row.tokens_out = completion.usage
    row.save()
    completion.request_id = row.pk
    yield completion


def test_connection(connection: ModelConnection, user) -> dict:
    """Ask the model a one-line question: {"ok": True, "answer", "model", "tokens_in",
    "tokens_out", "duration_ms"} or {"ok": False, "error" (the server's exact answer, or why
    there was none), "status_code", "retryable"}."""
    try:
        completion = complete(
            connection,
            [{"role": "user", "content": TEST_PROMPT}],
            purpose="test",
            user=user,
        )
    except ModelCallFailed as failure:
        return {"ok": False, "error": failure.message, **failure.details}
    return {
        "ok": True,
        "answer": completion.message.get("content") or "",
        "model": completion.model,
        "tokens_in": completion.usage[0],
        "tokens_out": completion.usage[1],
        "duration_ms": completion.duration_ms,
    }


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _reasoning_of(part: Any) -> str | None:
    extra = getattr(part, "model_extra", None) or {}
    for name in REASONING_FIELDS:
        value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _usage(usage: Any) -> tuple[int, int]:
    if usage is None:
        return (0, 0)
    return (usage.prompt_tokens or 0, usage.completion_tokens or 0)


def _whole(client: openai.OpenAI, request: dict, extra_body: dict) -> Completion:
    response = client.chat.completions.create(**request, extra_body=extra_body or None)
    if not response.choices:
        raise _NoChoices("the answer held no choices")
    choice = response.choices[0]
    message: dict[str, Any] = {"role": "assistant", "content": choice.message.content}
    reasoning = _reasoning_of(choice.message)
    if reasoning:
        message["reasoning"] = reasoning
    if choice.message.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments},
            }
            for call in choice.message.tool_calls
        ]
    return Completion(
        message=message,
        usage=_usage(response.usage),
        finish_reason=choice.finish_reason,
        model=response.model or request["model"],
    )


def _streamed(
    client: openai.OpenAI, request: dict, extra_body: dict
) -> Generator[dict, None, Completion]:
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict] = {}
    usage: tuple[int, int] = (0, 0)
    finish_reason = None
    model = request["model"]
    chunks = client.chat.completions.create(
        **request,
        stream=True,
        stream_options={"include_usage": True},
        extra_body=extra_body or None,
    )
    for chunk in chunks:
        model = chunk.model or model
        if chunk.usage is not None:
            usage = _usage(chunk.usage)
        for choice in chunk.choices:
            finish_reason = choice.finish_reason or finish_reason
            delta = choice.delta
            if delta is None:
                continue
            piece = _reasoning_of(delta)
            if piece:
                reasoning.append(piece)
                yield {"reasoning": piece}
            if delta.content:
                content.append(delta.content)
                yield {"content": delta.content}
            for call in delta.tool_calls or []:
                known = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                if call.id:
                    known["id"] = call.id
                if call.function is not None:
                    known["name"] += call.function.name or ""
                    known["arguments"] += call.function.arguments or ""
                yield {"tool_call": {"index": call.index, **known}}
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if reasoning:
        message["reasoning"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = [
            {
                "id": call["id"] or f"call_{index}",
                "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"] or "{}"},
            }
            for index, call in sorted(calls.items())
        ]
    return Completion(message=message, usage=usage, finish_reason=finish_reason, model=model)


class _NoChoices(openai.OpenAIError):
    """A 200 answer with nothing in it."""


def _retry_after(response: Any) -> float | None:
    if response is None:
        return None
    milliseconds = response.headers.get("retry-after-ms")
    seconds = response.headers.get("retry-after")
    try:
        if milliseconds:
            return float(milliseconds) / 1000
        if seconds:
            return float(seconds)
    except ValueError:
        return None  # an HTTP date: rare from model servers; the caller backs off its own way
    return None


SAID_AT_MOST = 300  # characters of a server's error message kept: enough to say what went wrong


def _server_said(error: openai.APIStatusError) -> str:
    return _said(error)[:SAID_AT_MOST]


def _said(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    try:
        return error.response.text
    except Exception:  # a streamed response not read: its message is what there is
        return error.message


def _scrub(text: str, connection: ModelConnection) -> str:
    """``text`` with the key's value masked: a server may echo what it was sent."""
    key = api_key(connection)
    return text.replace(key, "[api key]") if key else text


def _failure(error: Exception, connection: ModelConnection) -> ModelCallFailed:
    where = f"{connection.base_url} ({connection.model})"
    status_code = None
    retry_after = None
    if isinstance(error, openai.APIStatusError):
        status_code = error.status_code
        retry_after = _retry_after(error.response)
        retryable = status_code in (408, 409, 429) or status_code >= 500
        message = f"The model server at {where} answered {status_code}: {_server_said(error)}"
    elif isinstance(error, openai.APITimeoutError):
        retryable = True
        message = (
            f"The model server at {where} did not answer within "
            f"{connection.timeout_seconds:g} seconds."
        )
    elif isinstance(error, (openai.APIConnectionError, *TRANSPORT_ERRORS)):
        retryable = True
        cause = error.__cause__ or error
        message = f"Could not reach the model server at {where}: {cause}"
    else:  # openai.APIResponseValidationError and kin: the server answered something odd
        retryable = False
        message = f"The model server at {where} gave an answer that could not be read: {error}"
    return ModelCallFailed(
        _scrub(message, connection),
        details={"status_code": status_code, "retryable": retryable, "retry_after": retry_after},
    )
