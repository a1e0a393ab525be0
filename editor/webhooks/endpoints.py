"""A dataset's webhook endpoints (curators): add, change, enable, disable, delete, and its
deliveries, with "resend". Every URL is checked when saved (``addresses.check_url``) and
again at every send."""

from __future__ import annotations

import base64
import secrets
import uuid

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from editor.errors import InvalidContent, NotAllowed, WebhookNotFound
from editor.models import Dataset, DeliveryStatus, WebhookDelivery, WebhookEndpoint
from editor.webhooks.addresses import check_url
from editor.webhooks.events import EVENTS, WEBHOOK_TEST
from editor.webhooks.tasks import send_deliveries

MAX_DESCRIPTION = 200


def require_curator(dataset: Dataset, user) -> None:
    if not dataset.can_curate(user):
        raise NotAllowed("Only curators manage the dataset's webhooks.")


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 24 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def check_events(events) -> list[str]:
    """The event types asked for, known and in ``EVENTS`` order (empty: every event)."""
    if events is None:
        return []
    if not isinstance(events, list | tuple) or not all(isinstance(e, str) for e in events):
        raise InvalidContent("events: a list of event types.", code="invalid-request")
    unknown = sorted(set(events) - set(EVENTS))
    if unknown:
        raise InvalidContent(
            f"Unknown event {', '.join(unknown)}; expected any of: {', '.join(EVENTS)}.",
            code="unknown-event",
            details={"events": unknown},
        )
    return [event for event in EVENTS if event in events]


def _check_description(description: str) -> str:
    if len(description) > MAX_DESCRIPTION:
        raise InvalidContent(
            f"The description is longer than {MAX_DESCRIPTION} characters.", code="invalid-request"
        )
    return description


def endpoints_of(dataset: Dataset) -> QuerySet[WebhookEndpoint]:
    return dataset.webhooks.order_by("pk")


def endpoint_of(dataset: Dataset, pk: int) -> WebhookEndpoint:
    endpoint = dataset.webhooks.filter(pk=pk).first()
    if endpoint is None:
        raise WebhookNotFound(f"No webhook {pk} in this dataset.")
    return endpoint


def create_endpoint(
    dataset: Dataset, author, *, url: str, events=None, description: str = ""
) -> WebhookEndpoint:
    """A new endpoint, its secret generated (shown to curators, to check signatures)."""
    require_curator(dataset, author)
    check_url(url)
    return WebhookEndpoint.objects.create(
        dataset=dataset,
        url=url.strip(),
        events=check_events(events),
        description=_check_description(description),
        secret=new_secret(),
        created_by=author,
    )


def update_endpoint(
    endpoint: WebhookEndpoint,
    author,
    *,
    url: str | None = None,
    events=None,
    description: str | None = None,
    enabled: bool | None = None,
) -> WebhookEndpoint:
    """Change what is given. Enabling a disabled endpoint resets its failures in a row and
    sends what waited meanwhile."""
    require_curator(endpoint.dataset, author)
    if url is not None:
        check_url(url)
        endpoint.url = url.strip()
    if events is not None:
        endpoint.events = check_events(events)
    if description is not None:
        endpoint.description = _check_description(description)
    if enabled is True and endpoint.disabled_at is not None:
        endpoint.disabled_at, endpoint.disabled_reason = None, ""
        endpoint.failures_in_a_row = 0
        transaction.on_commit(lambda: send_deliveries.enqueue(endpoint.pk))
    elif enabled is False and endpoint.disabled_at is None:
        endpoint.disabled_at = timezone.now()
        endpoint.disabled_reason = "Disabled by a curator."
    endpoint.save()
    return endpoint


def delete_endpoint(endpoint: WebhookEndpoint, author) -> None:
    """The endpoint and its deliveries."""
    require_curator(endpoint.dataset, author)
    endpoint.delete()


def deliveries_of(endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    """Newest first."""
    return endpoint.deliveries.order_by("-created_at", "-pk")


def delivery_of(endpoint: WebhookEndpoint, pk: int) -> WebhookDelivery:
    delivery = endpoint.deliveries.filter(pk=pk).first()
    if delivery is None:
        raise WebhookNotFound(f"No delivery {pk} of this webhook.")
    return delivery


def resend(delivery: WebhookDelivery, author) -> WebhookDelivery:
    """Send a delivery again, as it was (same ``webhook-id``, same body), with a fresh
    allowance of attempts."""
    endpoint = delivery.endpoint
    require_curator(endpoint.dataset, author)
    delivery.status = DeliveryStatus.PENDING
    delivery.attempts = 0
    delivery.next_attempt_at = timezone.now()
    delivery.error = ""
    delivery.save(update_fields=["status", "attempts", "next_attempt_at", "error"])
    transaction.on_commit(lambda: send_deliveries.enqueue(endpoint.pk))
    return delivery


def send_test(endpoint: WebhookEndpoint, author) -> WebhookDelivery:
    """A ``webhook.test`` event to this endpoint only, whatever events it takes, signed and
    sent like any other (a disabled endpoint holds it until enabled, as its other
    deliveries): its delivery shows what the receiver answered."""
    require_curator(endpoint.dataset, author)
    now = timezone.now()
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint,
        message_id=f"msg_{uuid.uuid4().hex}",
        event_type=WEBHOOK_TEST,
        payload={
            "type": WEBHOOK_TEST,
            "timestamp": now.isoformat().replace("+00:00", "Z"),
            "data": {
                "dataset": endpoint.dataset.slug,
                "webhook_id": endpoint.pk,
                "by": author.get_username(),
            },
        },
        next_attempt_at=now,
    )
    transaction.on_commit(lambda: send_deliveries.enqueue(endpoint.pk))
    return delivery
