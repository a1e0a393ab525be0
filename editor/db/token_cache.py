"""Who a bearer token belongs to, from the shared cache: an API request then spends no
database round trip on saying who is calling.

Only with a shared cache (Redis: ``REDIS_URL``): a process-local one could not be told, in
every worker, that a token was revoked. An entry lives ``TOKEN_CACHE_SECONDS`` at most (so
``last_used_at`` still moves, at its own resolution) and goes at once when its token is
saved (revoked) or deleted, or when its user is saved (deactivated, made superuser…) or
deleted (the signals are connected by ``editor.models.tokens.connect``).
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache

# Signals cannot see a change made without ``Model.save`` (``QuerySet.update``, SQL: a bulk
# deactivation); such a change reaches the API within this many seconds. Ten seconds keep
# nearly every hit of a busy client (a request every few ms) and shorten that window sixfold.
TOKEN_CACHE_SECONDS = 10


def _key(key_hash: str) -> str:
    return f"api-token-user:{key_hash}"


def enabled() -> bool:
    return bool(settings.REDIS_URL)


def cached_user(key_hash: str):
    return cache.get(_key(key_hash)) if enabled() else None


def remember(key_hash: str, user) -> None:
    if enabled():
        cache.set(_key(key_hash), user, TOKEN_CACHE_SECONDS)


def forget(key_hashes) -> None:
    if enabled():
        cache.delete_many([_key(key_hash) for key_hash in key_hashes])
