"""Who a bearer token belongs to, from the shared cache: an API request then spends no
database round trip on saying who is calling.

Only with a shared cache (Redis: ``REDIS_URL``): a process-local one could not be told, in
every worker, that a token was revoked. An entry lives ``TOKEN_CACHE_SECONDS`` at most (so
``last_used_at`` still moves, at its own resolution) and goes at once when its token is
saved (revoked) or deleted, or when its user is saved (deactivated, made superuser…) or
deleted.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models.signals import post_delete, post_save

TOKEN_CACHE_SECONDS = 60


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


def _token_changed(sender, instance, **kwargs) -> None:
    forget([instance.key_hash])


def _user_changed(sender, instance, update_fields=None, **kwargs) -> None:
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return  # a login changes nothing a token's caller is judged by
    from editor.models import ApiToken

    forget(ApiToken.objects.filter(user=instance).values_list("key_hash", flat=True))


def connect() -> None:
    from editor.models import ApiToken

    post_save.connect(_token_changed, sender=ApiToken, dispatch_uid="token-cache-token-saved")
    post_delete.connect(_token_changed, sender=ApiToken, dispatch_uid="token-cache-token-gone")
    user_model = get_user_model()
    post_save.connect(_user_changed, sender=user_model, dispatch_uid="token-cache-user-saved")
