"""What pipelines rely on: webhooks (endpoints and their deliveries) and dataset versions."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from editor.db.compressed import CompressedJSONField
from editor.models.datasets import Dataset


class WebhookEndpoint(models.Model):
    """A URL a dataset's events are sent to, signed as Standard Webhooks asks (``secret``:
    ``whsec_`` + base64, shown to curators; it signs, it grants nothing here). ``events``: the
    event types sent (empty: all). Disabled (``disabled_at``) after too many failures in a
    row; curators are told and may enable it again."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2000)
    description = models.CharField(max_length=200, blank=True)
    events = models.JSONField(default=list, blank=True)
    secret = models.CharField(max_length=100)
    failures_in_a_row = models.PositiveIntegerField(default=0)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"webhook {self.url} of {self.dataset_id}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SUCCEEDED = "succeeded", "Delivered"
    FAILED = "failed", "Failed"


class WebhookDelivery(models.Model):
    """One event for one endpoint: ``message_id`` (the ``webhook-id`` header) is the same on
    every attempt, so a receiver can drop a repeat. ``payload`` is the JSON body as first
    built; attempts resend it unchanged."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    message_id = models.CharField(max_length=64, unique=True)
    event_type = models.CharField(max_length=64)
    payload = models.JSONField()
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.CharField(max_length=2000, blank=True)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["endpoint", "created_at"], name="delivery_endpoint_idx"),
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} to {self.endpoint_id} ({self.status})"


class DatasetVersion(models.Model):
    """A named, immutable version of a dataset (or of a filter of it): which transcripts at
    which version, ``members`` = [[transcript id, transcript version], …] in id order, and
    ``content_hash`` (SHA-256 over the members' content hashes) naming what it holds. It
    refers to revisions and copies no text."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="versions")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    filters = models.JSONField(default=dict, blank=True)
    members = CompressedJSONField()
    transcript_count = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="dataset_version_unique_name")
        ]

    def __str__(self) -> str:
        return f"version {self.name} of {self.dataset_id}"
