"""The events a dataset sends, and ``emit``: one delivery per endpoint that wants it.

``emit`` is called by the use case that makes the change, inside its transaction: the
deliveries are written with the change or not at all, and the send task is queued only once
the transaction commits (``transaction.on_commit``), so a receiver never hears of a change
that was rolled back.

Every body is ``{"type", "timestamp", "data"}`` (the Standard Webhooks shape); ``data``
always has ``dataset`` (the slug) and, for an event about one transcript, ``transcript_id``:
the key deliveries are kept in order by (``editor.webhooks.sending``).

An event that must be told once however many paths reach it (``queue.completed``) passes a
``key``: each endpoint's ``message_id`` is derived from it, and a second emit with the same
key writes nothing (the unique ``message_id`` absorbs it, even from a concurrent transaction).
A use case that emits several events reads the dataset's endpoints once (``one_read``).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

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
# Sent on demand to one endpoint (its "Send a test event" button), never subscribed to.
WEBHOOK_TEST = "webhook.test"
# What each event tells, in the words the webhooks page shows beside it.
DESCRIPTIONS = {
    IMPORT_FINISHED: "an import ended (with its counts)",
    TRANSCRIPT_STATUS_CHANGED: "a transcript moved in the review workflow",
    QUEUE_ITEM_SUBMITTED: "an annotator handed in a queue item",
    QUEUE_ITEM_REVIEWED: "a reviewer approved or rejected a queue item",
    QUEUE_COMPLETED: "every item of a queue is approved (told once)",
    EXPORT_READY: "a background export can be downloaded",
    DATASET_VERSION_CREATED: "a version of the dataset was created",
}


# The endpoints read by ``emit`` inside ``one_read``: dataset id -> enabled endpoints.
_read_endpoints: ContextVar[dict[int, list[WebhookEndpoint]] | None] = ContextVar(
    "webhook_endpoints_read", default=None
)


@contextmanager
def one_read() -> Iterator[None]:
    """Inside the block, ``emit`` reads a dataset's enabled endpoints once: a change that
    sends several events (a queue submit: the item's and the transcript's) costs one query."""
    token = _read_endpoints.set({})
    try:
        yield
    finally:
        _read_endpoints.reset(token)


def _enabled_endpoints(dataset_id: int) -> list[WebhookEndpoint]:
    read = _read_endpoints.get()
    if read is not None and dataset_id in read:
        return read[dataset_id]
    found = list(WebhookEndpoint.objects.filter(dataset_id=dataset_id, disabled_at__isnull=True))
    if read is not None:
        read[dataset_id] = found
    return found


def _message_id(key: str | None, endpoint: WebhookEndpoint) -> str:
    """A fresh id, or, for an event told once, the same id for the same key and endpoint."""
    if key is None:
        return f"msg_{uuid.uuid4().hex}"
    return f"msg_{hashlib.sha256(f'{key}:{endpoint.pk}'.encode()).hexdigest()[:32]}"


def wants(endpoint: WebhookEndpoint, event_type: str) -> bool:
    """An endpoint with no events listed takes them all."""
    return not endpoint.events or event_type in endpoint.events


def emit(
    dataset: Dataset | int, event_type: str, data: dict, *, key: str | None = None
) -> list[WebhookDelivery]:
    """Record ``event_type`` for every enabled endpoint of ``dataset`` that wants it (in the
    caller's transaction), and have them sent once it commits. ``data``: JSON values.
    ``key``: the event is told once per key and endpoint (an emit already made is skipped)."""
    if event_type not in EVENTS:
        raise ValueError(f"Unknown webhook event {event_type!r}")
    dataset_id = dataset if isinstance(dataset, int) else dataset.pk
    endpoints = [e for e in _enabled_endpoints(dataset_id) if wants(e, event_type)]
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
    wanted = [
        WebhookDelivery(
            endpoint=endpoint,
            message_id=_message_id(key, endpoint),
            event_type=event_type,
            payload=payload,
            next_attempt_at=now,
        )
        for endpoint in endpoints
    ]
    if key is None:
        deliveries = WebhookDelivery.objects.bulk_create(wanted)
    else:
        deliveries = _create_once(wanted)
        if not deliveries:
            return []
        endpoints = [delivery.endpoint for delivery in deliveries]
    for endpoint in endpoints:
        transaction.on_commit(lambda pk=endpoint.pk: send_deliveries.enqueue(pk))
    return deliveries


def _create_once(wanted: list[WebhookDelivery]) -> list[WebhookDelivery]:
    """The deliveries of ``wanted`` not made before (by ``message_id``). A concurrent
    transaction inserting the same id makes this insert wait, then skip it (the unique
    ``message_id``), so the event is never written twice."""
    ids = [delivery.message_id for delivery in wanted]
    made = set(
        WebhookDelivery.objects.filter(message_id__in=ids).values_list("message_id", flat=True)
    )
    new = [delivery for delivery in wanted if delivery.message_id not in made]
    if new:
        WebhookDelivery.objects.bulk_create(new, ignore_conflicts=True)
    return new


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
