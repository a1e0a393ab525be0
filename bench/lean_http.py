"""A minimal asyncio HTTP/1.1 client for the load test: one keep-alive connection per
simulated user, JSON in and out.

The load test runs its clients on the two cores that also run the server and PostgreSQL.
httpx spent about a millisecond of CPU on each request (its own request and response models,
header validation, the event hooks), which at 200 requests a second is a fifth of a core
taken from the server it measures; wrk, a C client, measured the same read 40 % faster
(docs/performance.md). This client writes the request bytes and reads the status line, the
headers and a Content-Length or chunked body, nothing more.

    response      = status-line *(header CRLF) CRLF body
    body          = nothing (1xx, 204, 304) / chunked / Content-Length bytes
                  / bytes until the connection closes
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

CRLF = b"\r\n"
# Statuses whose response never has a body, whatever its headers (RFC 9112, 6.3): read one
# until the connection closes and a kept-alive connection waits out the server's keep-alive
# timeout (gunicorn: 2 s) for every empty queue claim.
NO_BODY = frozenset({204, 304})


@dataclass
class Response:
    status_code: int
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)


class Client:
    """``request(method, path, json=…)`` over one kept-alive connection to ``base``."""

    def __init__(self, base: str, headers: dict[str, str], timeout: float = 30):
        url = urlsplit(base)
        self.host, self.port, self.prefix = url.hostname, url.port or 80, url.path.rstrip("/")
        fixed = {"Host": f"{self.host}:{self.port}", "Connection": "keep-alive", **headers}
        self.fixed_headers = "".join(f"{name}: {value}\r\n" for name, value in fixed.items())
        self.timeout = timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None

    async def request(self, method: str, path: str, json: Any = None) -> Response:
        body = b"" if json is None else _dumps(json)
        head = f"{method} {self.prefix}{path} HTTP/1.1\r\n{self.fixed_headers}"
        if json is not None:
            head += "Content-Type: application/json\r\n"
        head += f"Content-Length: {len(body)}\r\n\r\n"
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.write(head.encode("latin-1") + body)
        try:
            return await asyncio.wait_for(self._response(), self.timeout)
        except BaseException:
            await self.close()  # a half-read response leaves the connection unusable
            raise

    async def _response(self) -> Response:
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        status = int(status_line.split(b" ", 2)[1])
        length, chunked, closing = None, False, False
        while (line := await self.reader.readline()) not in (CRLF, b"\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                closing = b"close" in value.lower()
        if status in NO_BODY or 100 <= status < 200:
            content = b""
        elif chunked:
            content = await self._chunks()
        elif length is not None:
            content = await self.reader.readexactly(length)
        else:
            content, closing = await self.reader.read(), True
        if closing:
            await self.close()
        return Response(status, content)

    async def _chunks(self) -> bytes:
        """chunked = *(size CRLF data CRLF) "0" CRLF *(trailer CRLF) CRLF"""
        parts = []
        while size := int((await self.reader.readline()).split(b";")[0], 16):
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)
        while await self.reader.readline() not in (CRLF, b"\n", b""):
            pass
        return b"".join(parts)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")
