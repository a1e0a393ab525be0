"""A local OpenAI-compatible HTTP server for tests: the real ``openai`` client talks to it.

Routes: ``POST /v1/chat/completions`` (plain JSON, or SSE chunks when ``stream`` is true, with
a last usage chunk when ``stream_options.include_usage``) and ``GET /v1/models``.

Each test scripts what the server answers. ``server.reply(...)`` queues answers (a
``Reply``, a string — the content —, or a dict — JSON content, for ``response_format``);
``server.respond_with(fn)`` sets a callable ``fn(body) -> Reply | str | dict`` used once the
queue is empty (the default answers "OK"). A ``Reply`` can be an error status (429 with
``Retry-After``, 500 …), a delay (for timeouts), or ``dead`` (the connection closed with no
answer). ``server.latency`` adds a fixed delay to every answer (for benches);
``server.stop()`` makes the port refuse connections. Every request received is recorded, in
order, thread-safely: ``server.requests`` (``Received``: path, headers — names lowercased —,
body) and
``server.bodies()`` (the chat-completions bodies).

Usage is always in the answer: ``Reply.usage`` when given, otherwise words in the prompt and
words in the answer.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    """One scripted answer. ``tool_calls``: ``[{"id", "name", "arguments"}]`` (arguments a
    JSON string or a dict). ``reasoning_field``: where reasoning goes (``reasoning_content``
    as vLLM/DeepSeek, ``reasoning`` as Ollama/OpenRouter). ``chunks``: how streamed content is
    split (default: word by word); ``chunk_delay``: seconds between streamed chunks."""

    content: str | None = "OK"
    reasoning: str | None = None
    reasoning_field: str = "reasoning_content"
    tool_calls: list[dict] | None = None
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None
    status: int = 200
    error_message: str = "scripted error"
    retry_after: float | None = None
    delay: float = 0.0
    dead: bool = False
    chunks: list[str] | None = None
    chunk_delay: float = 0.0
    model: str | None = None


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class OpenAIServer:
    """The server's state, shared with its handler threads (under ``lock``)."""

    models: list[str] = field(default_factory=lambda: ["test-model"])
    latency: float = 0.0
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _queue: deque = field(default_factory=deque)
    _respond: Callable[[dict], Any] = field(default=lambda body: Reply())
    _httpd: ThreadingHTTPServer | None = None
    _open: set = field(default_factory=set)  # the connections being served

    # -- scripting ------------------------------------------------------------------------

    def reply(self, *replies: Reply | str | dict) -> None:
        """Queue answers, used in order before ``respond_with``'s callable."""
        with self.lock:
            self._queue.extend(replies)

    def respond_with(self, fn: Callable[[dict], Reply | str | dict]) -> None:
        with self.lock:
            self._respond = fn

    def bodies(self) -> list[dict]:
        """The bodies of the chat-completions requests received, in order."""
        with self.lock:
            return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAIServer:
        handler = type("Handler", (_Handler,), {"state": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False  # a scripted delay must not hold the test's teardown
        self._httpd = httpd
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening: the port then refuses connections (a dead server), and the
        connections a client keeps open between requests are closed."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        with self.lock:
            open_sockets, self._open = list(self._open), set()
        for sock in open_sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    # -- used by the handler --------------------------------------------------------------

    def _record(self, received: Received) -> None:
        with self.lock:
            self.requests.append(received)

    def _next(self, body: dict) -> Reply:
        with self.lock:
            scripted = self._queue.popleft() if self._queue else None
            respond = self._respond
        if scripted is None:
            scripted = respond(body)
        if isinstance(scripted, Reply):
            return scripted
        if isinstance(scripted, str):
            return Reply(content=scripted)
        return Reply(content=json.dumps(scripted))


def _words(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        return len(value.split())
    return len(json.dumps(value).split())


def _prompt_tokens(body: dict) -> int:
    return sum(_words(m.get("content")) for m in body.get("messages") or []) or 1


def _tool_calls(reply: Reply) -> list[dict]:
    calls = []
    for i, call in enumerate(reply.tool_calls or []):
        arguments = call.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(
            {
                "id": call.get("id") or f"call_{i}",
                "type": "function",
                "function": {"name": call["name"], "arguments": arguments},
            }
        )
    return calls


class _Handler(BaseHTTPRequestHandler):
    state: OpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # quiet: tests read ``requests`` instead
        pass

    def setup(self):
        super().setup()
        with self.state.lock:
            self.state._open.add(self.connection)

    def finish(self):
        with self.state.lock:
            self.state._open.discard(self.connection)
        super().finish()

    def _send_json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.state._record(Received(self.path, _headers(self), None))
        if self.path.rstrip("/").endswith("/models"):
            data = [{"id": m, "object": "model", "owned_by": "test"} for m in self.state.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode(errors="replace")}
        self.state._record(Received(self.path, _headers(self), body))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        reply = self.state._next(body)
        if self.state.latency:
            time.sleep(self.state.latency)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.dead:
            self.close_connection = True
            self.connection.close()
            return
        if reply.status != 200:
            headers = {}
            if reply.retry_after is not None:
                headers["Retry-After"] = f"{reply.retry_after:g}"
            error = {"message": reply.error_message, "type": "scripted", "code": reply.status}
            self._send_json(reply.status, {"error": error}, headers)
            return
        if body.get("stream"):
            self._stream(body, reply)
        else:
            self._send_json(200, self._completion(body, reply))

    def _usage(self, body: dict, reply: Reply) -> dict:
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt = _prompt_tokens(body)
            completion = _words(reply.content) + _words(reply.reasoning)
            completion += sum(_words(c.get("arguments")) for c in reply.tool_calls or [])
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def _finish_reason(self, reply: Reply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    def _completion(self, body: dict, reply: Reply) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.reasoning is not None:
            message[reply.reasoning_field] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = _tool_calls(reply)
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or "test-model",
            "choices": [
                {"index": 0, "message": message, "finish_reason": self._finish_reason(reply)}
            ],
            "usage": self._usage(body, reply),
        }

    def _stream(self, body: dict, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        model = reply.model or body.get("model") or "test-model"

        def chunk(delta: dict | None, finish: str | None = None, usage: dict | None = None):
            payload: dict[str, Any] = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": []
                if delta is None
                else [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if usage is not None:
                payload["usage"] = usage
            self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
            self.wfile.flush()
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)

        chunk({"role": "assistant", "content": ""})
        if reply.reasoning:
            for piece in _pieces(reply.reasoning):
                chunk({reply.reasoning_field: piece})
        if reply.content:
            for piece in reply.chunks or _pieces(reply.content):
                chunk({"content": piece})
        for i, call in enumerate(_tool_calls(reply)):
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
            for part in (arguments[:half], arguments[half:]):
                chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
        chunk({}, finish=self._finish_reason(reply))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunk(None, usage=self._usage(body, reply))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _headers(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    """The request's headers, names lowercased (clients differ in case)."""
    return {name.lower(): value for name, value in handler.headers.items()}


def _pieces(text: str) -> list[str]:
    """``text`` split after each space, so the pieces join back to it exactly."""
    pieces, current = [], ""
    for char in text:
        current += char
        if char == " ":
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


@pytest.fixture
def openai_server():
    """A started ``OpenAIServer`` (stopped after the test)."""
    server = OpenAIServer().start()
    yield server
    server.stop()
