"""Datasets, their members and roles, and the record of who changed a dataset or its members."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import (
    Count,
    Max,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce

from editor import formats
from editor.models.fields import SPEC_CHOICES
from editor.models.states import Status


class Role(models.TextChoices):
    CURATOR = "curator", "Curator"
    REVIEWER = "reviewer", "Reviewer"
    ANNOTATOR = "annotator", "Annotator"
    VIEWER = "viewer", "Viewer"


EDITING_ROLES = frozenset({Role.CURATOR, Role.REVIEWER, Role.ANNOTATOR})


REVIEWING_ROLES = frozenset({Role.CURATOR, Role.REVIEWER})


# Renderings (editor.formats.render audiences) each role may ask for: a viewer sees what the
# end user sees; asking for more is E-PERM-VISIBILITY (HTTP 403).
END_USER_AUDIENCE = "end_user"


# "training" shows hidden channels (what a training run computes loss on): the roles that see
# the annotator rendering see it (editor.presentation.training).
ALL_AUDIENCES = ("end_user", "annotator", "debug", "training")


# A slug is a URL path segment (editor/urls.py's `dataset` converter): like Django's slugs,
# plus dots, since datasets are often named after spec versions ("openchatml-2.2").
DATASET_SLUG_PATTERN = r"[A-Za-z0-9][-A-Za-z0-9_.]*"
# The slugs of the datasets an import stages its batches in (editor.importing.staging): no
# slug a user may give starts so, and no URL names them.
IMPORT_STAGE_PREFIX = "~importing-"


validate_dataset_slug = RegexValidator(
    rf"\A{DATASET_SLUG_PATTERN}\Z",
    "Use letters, digits, hyphens, underscores and dots, starting with a letter or digit.",
)


def audiences_of(role: str | None) -> tuple[str, ...]:
    if role is None:
        return ()
    return ALL_AUDIENCES if role in EDITING_ROLES else (END_USER_AUDIENCE,)


class DatasetQuerySet(models.QuerySet):
    def for_user(self, user) -> DatasetQuerySet:
        """The datasets ``user`` is a member of (every dataset for a superuser)."""
        if not user.is_authenticated:
            return self.none()
        if user.is_superuser:  # but an import's stage (editor.importing.staging), never shown
            return self.exclude(slug__startswith=IMPORT_STAGE_PREFIX)
        return self.filter(memberships__user=user)

    def with_roles(self, user) -> DatasetQuerySet:
        """Annotate ``user_role``: ``user``'s role in each dataset (as ``Dataset.role_of``)."""
        if user.is_authenticated and user.is_superuser:
            return self.annotate(user_role=Value(Role.CURATOR.value))
        role = Membership.objects.filter(dataset=OuterRef("pk"), user_id=user.pk).values("role")
        return self.annotate(user_role=Subquery(role[:1]))

    def with_transcript_counts(self) -> DatasetQuerySet:
        return self.annotate(
            transcript_count=Count("transcripts", filter=Q(transcripts__deleted_at__isnull=True))
        )

    def with_activity(self) -> DatasetQuerySet:
        """Annotate, over the live transcripts of each dataset, in the same one query:
        ``transcript_count``, a ``<status>_count`` per review status, ``error_total``,
        ``warning_total`` and ``last_activity`` (the newest change, deleted ones included).
        """
        live = Q(transcripts__deleted_at__isnull=True)
        per_status = {
            f"{status}_count": Count("transcripts", filter=live & Q(transcripts__status=status))
            for status in Status.values
        }
        return self.with_transcript_counts().annotate(
            **per_status,
            error_total=Coalesce(Sum("transcripts__error_count", filter=live), 0),
            warning_total=Coalesce(Sum("transcripts__warning_count", filter=live), 0),
            last_activity=Max("transcripts__updated_at"),
        )


class Dataset(models.Model):
    name = models.CharField(max_length=200)
    slug = models.CharField(max_length=100, unique=True, validators=[validate_dataset_slug])
    description = models.TextField(blank=True)
    default_spec = models.CharField(
        max_length=32, choices=SPEC_CHOICES, default=formats.DEFAULT_SPEC
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="datasets"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DatasetQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def role_of(self, user) -> Role | None:
        """``user``'s role in this dataset; superusers act as curators everywhere."""
        if user is None or not user.is_authenticated:
            return None
        if user.is_superuser:
            return Role.CURATOR
        known = self.__dict__.get("_roles", {})
        if user.pk in known:
            return known[user.pk]
        role = self.memberships.filter(user=user).values_list("role", flat=True).first()
        return Role(role) if role else None

    def know_role(self, user, role: str | None) -> None:
        """Remember ``user``'s role, read along with this dataset: ``role_of`` asks no more."""
        self.__dict__.setdefault("_roles", {})[user.pk] = Role(role) if role else None

    def can_view(self, user) -> bool:
        return self.role_of(user) is not None

    def can_edit(self, user) -> bool:
        return self.role_of(user) in EDITING_ROLES

    def can_curate(self, user) -> bool:
        return self.role_of(user) == Role.CURATOR

    def can_review(self, user) -> bool:
        return self.role_of(user) in REVIEWING_ROLES

    def audiences_for(self, user) -> tuple[str, ...]:
        """The renderings ``user`` may see: all for editors, the end user's for viewers."""
        return audiences_of(self.role_of(user))

    @property
    def user_audiences(self) -> tuple[str, ...]:
        """For a queryset annotated by ``with_roles``: ``audiences_for`` that user, no query."""
        return audiences_of(getattr(self, "user_role", None))

    def sees_hidden(self, user) -> bool:
        """May ``user`` see what the end user does not (hidden channels, system prompts, tool
        traffic)? Their searches look there too."""
        return any(audience != END_USER_AUDIENCE for audience in self.audiences_for(user))

    @property
    def status_counts(self) -> list[tuple[Status, int]]:
        """For a queryset annotated by ``with_activity``: (status, count) in workflow order."""
        return [(status, getattr(self, f"{status.value}_count")) for status in Status]

    @property
    def user_can_curate(self) -> bool:
        """For templates of a queryset annotated by ``with_roles``: may that user curate?"""
        return getattr(self, "user_role", None) == Role.CURATOR

    @property
    def user_can_edit(self) -> bool:
        """For templates of a queryset annotated by ``with_roles``: may that user edit?"""
        return getattr(self, "user_role", None) in EDITING_ROLES


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "dataset"], name="membership_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.dataset} as {self.role}"


class Invitation(models.Model):
    """A curator's invitation of ``username`` to a dataset, in ``role``: the user becomes a
    member only by accepting it (``editor.membership.accept_invitation``), or declines it.

    Kept by the username as the curator typed it, with no link to a user: whether that user
    exists is not recorded and never told to the curator (docs/security.md, "Membership by
    invitation"); the user of that name sees it on their dashboard.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="invitations")
    username = models.CharField(max_length=150)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "username"], name="invitation_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.username} invited to {self.dataset} as {self.role}"


class MembershipAction(models.TextChoices):
    ADDED = "added", "added"
    ROLE_CHANGED = "role_changed", "changed the role of"
    REMOVED = "removed", "removed"


class MembershipChange(models.Model):
    """Who changed whose membership of a dataset, when, and from which role to which.

    Written by ``editor.membership`` for every change (read-only in the admin). A model of its
    own rather than the admin's LogEntry: the history belongs to the dataset and stays queryable
    by dataset, user and role, where LogEntry keeps admin edits as free text on a content type.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="membership_log")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # Kept as written: the history still names a member whose account was deleted since.
    username = models.CharField(max_length=150)
    action = models.CharField(max_length=16, choices=MembershipAction.choices)
    old_role = models.CharField(max_length=16, choices=Role.choices, blank=True)
    new_role = models.CharField(max_length=16, choices=Role.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.actor} {self.get_action_display()} {self.username} in {self.dataset}"


class DatasetEdit(models.Model):
    """Who created a dataset or changed its name, description or default spec, and when:
    ``changes`` is ``{field: [old, new]}`` (empty for the creation). Written by
    ``editor.membership``; the slug never changes, so it is not among the fields."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="edits")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created = models.BooleanField(default=False)
    changes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        what = "created" if self.created else f"changed {', '.join(self.changes)} of"
        return f"{self.actor} {what} {self.dataset}"
