"""The events a dataset sends, and ``emit``: one delivery per endpoint that wants it.

``emit`` is called by the use case that makes the change, inside its transaction: the
deliveries are written with the change or not at all, and the send task is queued only once
the transaction commits (``transaction.on_commit``), so a receiver never hears of a change
that was rolled back.

Every body is ``{"type", "timestamp", "data"}`` (the Standard Webhooks shape); ``data``
always has ``dataset`` (the slug) and, for an event about one transcript, ``transcript_id``:
the key deliveries are kept in order by (``editor.webhooks.sending``).
"""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone

from editor.models import Dataset, WebhookDelivery, WebhookEndpoint
from editor.webhooks.tasks import send_deliveries

IMPORT_FINISHED = "import.finished"
TRANSCRIPT_STATUS_CHANGED = "transcript.status_changed"
QUEUE_ITEM_SUBMITTED = "queue_item.submitted"
QUEUE_ITEM_REVIEWED = "queue_item.reviewed"
QUEUE_COMPLETED = "queue.completed"
EXPORT_READY = "export.ready"
DATASET_VERSION_CREATED = "dataset_version.created"

EVENTS = (
    IMPORT_FINISHED,
    TRANSCRIPT_STATUS_CHANGED,
    QUEUE_ITEM_SUBMITTED,
    QUEUE_ITEM_REVIEWED,
    QUEUE_COMPLETED,
    EXPORT_READY,
    DATASET_VERSION_CREATED,
)


def wants(endpoint: WebhookEndpoint, event_type: str) -> bool:
    """An endpoint with no events listed takes them all."""
    return not endpoint.events or event_type in endpoint.events


def emit(dataset: Dataset | int, event_type: str, data: dict) -> list[WebhookDelivery]:
    """Record ``event_type`` for every enabled endpoint of ``dataset`` that wants it (in the
    caller's transaction), and have them sent once it commits. ``data``: JSON values."""
    if event_type not in EVENTS:
        raise ValueError(f"Unknown webhook event {event_type!r}")
    dataset_id = dataset if isinstance(dataset, int) else dataset.pk
    endpoints = [
        endpoint
        for endpoint in WebhookEndpoint.objects.filter(
            dataset_id=dataset_id, disabled_at__isnull=True
        )
        if wants(endpoint, event_type)
    ]
    if not endpoints:
        return []
    slug = dataset.slug if isinstance(dataset, Dataset) else None
    if slug is None:
        slug = Dataset.objects.values_list("slug", flat=True).get(pk=dataset_id)
    now = timezone.now()
    payload = {
        "type": event_type,
        "timestamp": now.isoformat().replace("+00:00", "Z"),
        "data": {"dataset": slug, **data},
    }
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            endpoint=endpoint,
            message_id=f"msg_{uuid.uuid4().hex}",
            event_type=event_type,
            payload=payload,
            next_attempt_at=now,
        )
        for endpoint in endpoints
    )
    for endpoint in endpoints:
        transaction.on_commit(lambda pk=endpoint.pk: send_deliveries.enqueue(pk))
    return deliveries


def status_changed(transcript, previous: str, author) -> list[WebhookDelivery]:
    """``transcript.status_changed`` for a transcript just saved with a new status."""
    if transcript.status == previous:
        return []
    return emit(
        transcript.dataset_id,
        TRANSCRIPT_STATUS_CHANGED,
        {
            "transcript_id": transcript.pk,
            "version": transcript.version,
            "from": previous,
            "to": transcript.status,
            "by": getattr(author, "username", None),
        },
    )
