"""One ``openai.OpenAI`` per model connection per process, kept between requests.

Building a client costs ~20 ms (an SSL context, an httpx client and its connection pool): a
judge run asking thousands of items would spend more on that than on its own work, and would
open a new TCP connection per request. The client is thread-safe (httpx's pool is), so a
run's worker threads share it.

A client is kept for a connection as long as what it was built from stays the same: the base
URL, the API key (read from the environment at each call: a changed variable takes effect)
and the timeout. When one of them changes, the old client is closed and a new one built. At
most ``MAX_CLIENTS`` are kept; the least recently used is closed first. A forked child (a
worker started from a preloaded parent) does not use its parent's clients: their sockets are
the parent's.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

import openai

MAX_CLIENTS = 64
# Local servers want no key, but the client refuses to start without one.
NO_KEY = "not-needed"


@dataclass(frozen=True)
class Settings:
    """What a client is built from: a change of any of them builds a new one."""

    base_url: str
    api_key: str | None
    timeout: float


class _Clients:
    def __init__(self, limit: int):
        self.limit = limit
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.kept: OrderedDict[object, tuple[Settings, openai.OpenAI]] = OrderedDict()

    def get(self, owner: object, settings: Settings) -> openai.OpenAI:
        """The client for ``owner`` (a connection's id) built from ``settings``."""
        closing: list[openai.OpenAI] = []
        with self.lock:
            if self.pid != os.getpid():  # forked: the parent's sockets are not ours to use
                self.kept.clear()
                self.pid = os.getpid()
            found = self.kept.get(owner)
            if found is not None and found[0] == settings:
                self.kept.move_to_end(owner)
                return found[1]
            if found is not None:
                closing.append(found[1])
            client = _build(settings)
            self.kept[owner] = (settings, client)
            self.kept.move_to_end(owner)
            while len(self.kept) > self.limit:
                closing.append(self.kept.popitem(last=False)[1][1])
        for old in closing:  # outside the lock: closing waits for nothing of ours
            old.close()
        return client

    def clear(self) -> None:
        """Close every kept client (tests, shutdown)."""
        with self.lock:
            kept = [client for _, client in self.kept.values()]
            self.kept.clear()
        for client in kept:
            client.close()

    def __len__(self) -> int:
        return len(self.kept)


def _build(settings: Settings) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key or NO_KEY,
        timeout=settings.timeout,
        max_retries=0,  # callers decide (a judge run backs off); see editor.assist.client
    )


clients = _Clients(MAX_CLIENTS)
