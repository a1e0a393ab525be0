"""The load test's HTTP client (bench/lean_http.py) against a scripted server: bodies by
Content-Length and chunked, none after a 204, kept-alive connections, a server that closes,
JSON sent."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench import lean_http

REPLIES = [
    b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"a": [1]}\n',
    b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
    b'4;ext=1\r\n{"co\r\n9\r\nde": "x"}\r\n0\r\nX-Trailer: y\r\n\r\n',
    # No body and no length, the connection kept open: the next response follows at once.
    b"HTTP/1.1 204 No Content\r\nX-Queue: empty\r\n\r\n",
    b'HTTP/1.1 201 Created\r\nConnection: close\r\n\r\n{"closed": true}',
]


async def _exchange(requests: list[tuple[str, str, object]]):
    received: list[bytes] = []
    connections = 0

    async def serve(reader, writer):
        nonlocal connections
        connections += 1
        while REPLIES[len(received) :]:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(v)
                    for k, _, v in (line.partition(b":") for line in head.split(b"\r\n"))
                    if k.lower() == b"content-length"
                ),
                0,
            )
            received.append(head + await reader.readexactly(length))
            reply = REPLIES[len(received) - 1]
            writer.write(reply)
            await writer.drain()
            if b"Connection: close" in reply:
                break
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        base = f"http://127.0.0.1:{port}/api/v1"
        async with lean_http.Client(base, {"Authorization": "Bearer t"}, timeout=5) as client:
            responses = [await client.request(m, p, json=body) for m, p, body in requests]
    return responses, received, connections


def _run(coroutine):
    """``asyncio.run`` in a thread of its own: Playwright's sync API, used by the browser tests
    of the same run, leaves an event loop running in the main thread."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


def test_bodies_by_length_and_chunks_over_one_kept_alive_connection():
    responses, received, connections = _run(
        _exchange(
            [
                ("GET", "/transcripts/1", None),
                ("PATCH", "/transcripts/1/messages/2", {"version": 3, "content": "é"}),
                ("POST", "/queues/1/claim", None),
                ("POST", "/queues/1/claim", None),
            ]
        )
    )
    assert [r.status_code for r in responses] == [200, 409, 204, 201]
    assert responses[2].content == b""
    assert [responses[n].json() for n in (0, 1, 3)] == [{"a": [1]}, {"code": "x"}, {"closed": True}]
    assert connections == 1
    assert received[0].startswith(b"GET /api/v1/transcripts/1 HTTP/1.1\r\n")
    assert b"Authorization: Bearer t\r\n" in received[0]
    head, _, body = received[1].partition(b"\r\n\r\n")
    assert head.startswith(b"PATCH /api/v1/transcripts/1/messages/2 HTTP/1.1")
    assert b"Content-Type: application/json" in head
    assert json.loads(body) == {"version": 3, "content": "é"}


def test_a_closed_connection_is_an_error_not_a_hang():
    async def run():
        server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server, lean_http.Client(f"http://127.0.0.1:{port}", {}, timeout=5) as client:
            await client.request("GET", "/healthz")

    with pytest.raises(ConnectionError):
        _run(run())
