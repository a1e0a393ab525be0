"""API bearer tokens, stored hashed."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from editor.db import token_cache


class ApiTokenQuerySet(models.QuerySet):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True, user__is_active=True)


class ApiToken(models.Model):
    """A bearer token for the HTTP API (``Authorization: Bearer <token>``).

    Only a SHA-256 hash of the token is stored: the token itself is shown once, when
    ``issue`` creates it (``manage.py api_token USERNAME``). SHA-256 rather than a slow
    password hash because the secret is 32 random bytes, not something a person chose:
    there is nothing to guess, and every API request checks it.
    """

    PREFIX = "ocm_"
    # Enough of the token to recognise it in a list and to find its row; the rest is secret.
    DISPLAY_LENGTH = len(PREFIX) + 8
    # last_used_at is refreshed at most this often, not written on every request.
    LAST_USED_RESOLUTION_SECONDS = 60

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=DISPLAY_LENGTH, db_index=True, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name or 'unnamed'}, {self.user})"

    @staticmethod
    def hash(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8")).hexdigest()

    @classmethod
    def issue(cls, user, name: str = "") -> tuple[ApiToken, str]:
        """A new token for ``user``: the row and the token text (not stored anywhere)."""
        token = cls.PREFIX + secrets.token_urlsafe(32)
        row = cls.objects.create(
            user=user, name=name, prefix=token[: cls.DISPLAY_LENGTH], key_hash=cls.hash(token)
        )
        return row, token

    @classmethod
    def user_for(cls, token: str):
        """The active user ``token`` belongs to, or None (unknown, revoked, inactive user)."""
        wanted = cls.hash(token)
        user = token_cache.cached_user(wanted)
        if user is not None:
            return user
        # Found by its public prefix, then compared in constant time: how long a check takes
        # says nothing about how much of a guessed hash was right.
        for row in (
            cls.objects.active().select_related("user").filter(prefix=token[: cls.DISPLAY_LENGTH])
        ):
            if hmac.compare_digest(row.key_hash, wanted):
                row.touch()
                token_cache.remember(wanted, row.user)
                return row.user
        return None

    def touch(self) -> None:
        now = timezone.now()
        if self.last_used_at is None or (
            (now - self.last_used_at).total_seconds() >= self.LAST_USED_RESOLUTION_SECONDS
        ):
            ApiToken.objects.filter(pk=self.pk).update(last_used_at=now)
            self.last_used_at = now

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


def _token_changed(sender, instance, **kwargs) -> None:
    token_cache.forget([instance.key_hash])


def _user_changed(sender, instance, update_fields=None, **kwargs) -> None:
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return  # a login changes nothing a token's caller is judged by
    token_cache.forget(ApiToken.objects.filter(user=instance).values_list("key_hash", flat=True))


def connect() -> None:
    """Drop a cached token owner when the token or its user changes."""
    post_save.connect(_token_changed, sender=ApiToken, dispatch_uid="token-cache-token-saved")
    post_delete.connect(_token_changed, sender=ApiToken, dispatch_uid="token-cache-token-gone")
    user_model = get_user_model()
    post_save.connect(_user_changed, sender=user_model, dispatch_uid="token-cache-user-saved")
