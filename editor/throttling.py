"""Per-caller limits on the expensive routes, counted in the shared cache: past its limit a
caller gets 429 with ``Retry-After`` until the window ends (docs/security.md).

A route is expensive when one request can cost a web worker much more than a page: rendering
or serving a whole transcript's source, exporting, a text search, and the stateless format
routes that parse what they are sent. Each kind has its own budget, per caller and per
window (``OCM_THROTTLES``: ``{kind: (requests, seconds)}``); a caller is their bearer token,
their session's user, or their address. Counted in fixed windows of the shared cache (Redis
under ``make serve``), so every web worker counts the same requests. A cache that does not
answer lets the request through: a limit must not take the site down with the cache.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

logger = logging.getLogger(__name__)

RENDER, EXPORT, SEARCH, FORMAT = "render", "export", "search", "format"
# Calls to a model server: each holds a web worker while the model answers (editor.assist).
MODEL = "model"


@dataclass(frozen=True)
class ExpensiveRoute:
    kind: str
    method: str
    path: re.Pattern
    # The route is expensive only with this query parameter set (a list with a text search,
    # a transcript page in the debug rendering): None, always.
    when: tuple[str, str | None] | None = None

    def matches(self, request: HttpRequest) -> bool:
        if request.method != self.method or not self.path.fullmatch(request.path):
            return False
        if self.when is None:
            return True
        name, value = self.when
        given = request.GET.get(name, "").strip()
        return bool(given) if value is None else given == value


def _route(kind: str, method: str, path: str, when=None) -> ExpensiveRoute:
    return ExpensiveRoute(kind, method, re.compile(path), when)


SLUG, PK = r"[^/]+", r"\d+"
EXPENSIVE_ROUTES = (
    _route(RENDER, "GET", rf"/api/v1/transcripts/{PK}/render"),
    _route(RENDER, "POST", r"/api/v1/render"),
    _route(RENDER, "GET", rf"/transcripts/{PK}/source/"),
    _route(RENDER, "GET", rf"/transcripts/{PK}/", when=("audience", "debug")),
    _route(EXPORT, "GET", rf"/api/v1/transcripts/{PK}/export"),
    _route(EXPORT, "GET", rf"/api/v1/datasets/{SLUG}/export"),
    _route(EXPORT, "POST", rf"/api/v1/datasets/{SLUG}/exports"),
    _route(EXPORT, "GET", rf"/transcripts/{PK}/export/"),
    _route(EXPORT, "GET", rf"/datasets/{SLUG}/export/"),
    _route(EXPORT, "POST", rf"/datasets/{SLUG}/exports/"),
    _route(EXPORT, "GET", rf"/api/v1/datasets/{SLUG}/versions/[^/]+/export"),
    _route(EXPORT, "GET", rf"/datasets/{SLUG}/versions/[^/]+/export/"),
    _route(SEARCH, "GET", rf"/api/v1/datasets/{SLUG}/transcripts", when=("q", None)),
    _route(SEARCH, "GET", rf"/datasets/{SLUG}/", when=("q", None)),
    _route(FORMAT, "POST", r"/api/v1/(validate|convert)"),
    _route(FORMAT, "POST", r"/api/v1/formats/(detect|parse)"),
    _route(FORMAT, "POST", rf"/api/v1/transcripts/{PK}/drafts/validate"),
    _route(FORMAT, "POST", rf"/transcripts/{PK}/source/(validate|convert)/"),
    _route(MODEL, "POST", rf"/api/v1/transcripts/{PK}/messages/{PK}/regenerate"),
    _route(MODEL, "POST", rf"/api/v1/datasets/{SLUG}/model-connections/{PK}/test"),
    _route(MODEL, "POST", rf"/datasets/{SLUG}/models/{PK}/test/"),
)


class Throttled(Exception):
    def __init__(self, kind: str, limit: int, window: int, retry_after: int):
        super().__init__(kind)
        self.kind, self.limit, self.window, self.retry_after = kind, limit, window, retry_after

    @property
    def message(self) -> str:
        return (
            f"Too many {self.kind} requests: at most {self.limit} every {self.window} s. "
            f"Try again in {self.retry_after} s."
        )


def expensive_kind(request: HttpRequest) -> str | None:
    for route in EXPENSIVE_ROUTES:
        if route.matches(request):
            return route.kind
    return None


def caller(request: HttpRequest) -> str:
    """Who is counted: the bearer token (hashed), else the logged-in user, else the address."""
    authorization = request.headers.get("Authorization", "")
    if authorization.lower().startswith("bearer "):
        return "token:" + hashlib.sha256(authorization.encode()).hexdigest()[:32]
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return "address:" + request.META.get("REMOTE_ADDR", "")


def check(request: HttpRequest) -> None:
    """Count this request against its kind's budget; raise ``Throttled`` past it."""
    kind = expensive_kind(request)
    if kind is None or kind not in settings.OCM_THROTTLES:
        return
    limit, window = settings.OCM_THROTTLES[kind]
    now = time.time()
    window_start = int(now // window) * window
    key = f"throttle:{kind}:{caller(request)}:{window_start}"
    try:
        cache.add(key, 0, timeout=window + 1)
        count = cache.incr(key)
    except ValueError:  # the entry expired between the two calls: this is the first request
        return
    except OSError as error:  # the cache does not answer (Redis down: ConnectionError)
        logger.warning("Requests not counted, the cache does not answer: %s", error)
        return
    if count > limit:
        retry_after = max(1, math.ceil(window_start + window - now))
        raise Throttled(kind, limit, window, retry_after)
