"""What the app remembers of each user's choices between visits."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class UserPreference(models.Model):
    """One row per user who has made a remembered choice (created on the first one).

    ``audience`` is the transcript rendering the user last picked; empty until they pick one,
    when the page starts from the default for their role (``transcripts.starting_audience``).
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    audience = models.CharField(max_length=32, blank=True, default="")

    def __str__(self) -> str:
        return f"preferences of {self.user}"

    @classmethod
    def of(cls, user) -> UserPreference | None:
        if not user.is_authenticated:
            return None
        return cls.objects.filter(user=user).first()

    @classmethod
    def remember_audience(cls, user, audience: str) -> None:
        """Remember ``audience`` for ``user``: one read when it is already the remembered one."""
        if not user.is_authenticated:
            return
        preference, created = cls.objects.get_or_create(user=user, defaults={"audience": audience})
        if not created and preference.audience != audience:
            preference.audience = audience
            preference.save(update_fields=["audience"])
