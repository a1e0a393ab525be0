"""Sending deliveries: signed, each attempt claimed before it goes out, retried with back-off.

One attempt of one delivery:

1. **claim** it: one conditional UPDATE (still pending, still at the attempt count read)
   adds the attempt and leases it for ``LEASE`` seconds (``next_attempt_at``), committed
   before anything is sent. Two workers never send the same attempt; a worker killed after
   this point leaves the delivery pending and due again once the lease ends, when the sweep
   (``due_endpoints``, every few seconds in the task worker) sends it again with the same
   ``webhook-id``: a receiver that drops repeated ids sees it once.
2. **send** it (``post``): to the address checked just now (``addresses.check_url``), signed
   with ``standardwebhooks`` (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``),
   with a short timeout, no redirects followed.
3. **record** the outcome: a 2xx is delivered; anything else is retried after ``BACKOFF``
   (5 s, 30 s, 2 min, 10 min, 1 h), then failed for good. Each failure adds one to the
   endpoint's failures in a row, a success resets them; ``OCM_WEBHOOK_MAX_FAILURES`` in a row
   disable the endpoint (its curators are told: ``editor.webhooks.notices``).

Order: an endpoint's deliveries go out in the order they were created, except that one
waiting for its retry (or being sent) holds back only the later deliveries **about the same
transcript** (``data.transcript_id``); other events pass it. A delivery failed for good holds
nothing back.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.db.models import F, Min
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from editor.errors import WebhookUrlRefused
from editor.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from editor.webhooks.addresses import check_url

logger = logging.getLogger(__name__)

# The pauses before each retry (seconds): one attempt, then one more after each of these.
BACKOFF = (5, 30, 120, 600, 3600)
MAX_ATTEMPTS = len(BACKOFF) + 1
# How long a claimed attempt is its worker's: longer than a send can take (the timeout).
LEASE = 60
# How overdue a pending delivery must be before the sweep queues its endpoint's sending: a
# send queued at commit runs within a poll or two; a retry or a lost send waits for the sweep.
SWEEP_GRACE = 3
# Pending deliveries of one endpoint looked at per pass.
BATCH = 200
KEPT_BODY = 2000


def timeout() -> float:
    return float(getattr(settings, "OCM_WEBHOOK_TIMEOUT", 5))


def max_failures() -> int:
    return int(getattr(settings, "OCM_WEBHOOK_MAX_FAILURES", 10))


@dataclass(frozen=True)
class Response:
    status: int | None
    body: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def body_of(delivery: WebhookDelivery) -> str:
    """The JSON body as sent (the same bytes on every attempt)."""
    return json.dumps(delivery.payload, ensure_ascii=False, separators=(",", ":"))


def signed_headers(secret: str, message_id: str, body: str, at: datetime) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt."""
    signature = Webhook(secret).sign(message_id, at, body)
    return {
        "content-type": "application/json",
        "user-agent": "ocm-webhooks",
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signature,
    }


def post(url: str, body: str, headers: dict[str, str]) -> Response:
    """POST ``body`` to ``url``, connecting to the address checked now; never raises."""
    try:
        target = check_url(url)
    except WebhookUrlRefused as refused:
        return Response(None, error=refused.message[:500])
    extensions = {"sni_hostname": target.hostname} if target.scheme == "https" else {}
    try:
        with httpx.Client(timeout=timeout(), follow_redirects=False, trust_env=False) as client:
            response = client.post(
                target.connect_url,
                content=body.encode(),
                headers={**headers, "host": target.host_header},
                extensions=extensions,
            )
    except httpx.HTTPError as error:
        return Response(None, error=f"{type(error).__name__}: {error}"[:500])
    return Response(response.status_code, response.text[:KEPT_BODY])


def claim(delivery: WebhookDelivery, now: datetime) -> bool:
    """Take the next attempt of ``delivery`` (see the module docstring); False if another
    worker did, or it is no longer pending."""
    taken = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=DeliveryStatus.PENDING, attempts=delivery.attempts
    ).update(attempts=F("attempts") + 1, next_attempt_at=now + timedelta(seconds=LEASE))
    if taken:
        delivery.attempts += 1
    return bool(taken)


def attempt(delivery: WebhookDelivery, endpoint: WebhookEndpoint) -> bool | None:
    """Claim, send and record one attempt; whether it was delivered (None: not claimed)."""
    now = timezone.now()
    if not claim(delivery, now):
        return None
    body = body_of(delivery)
    headers = signed_headers(endpoint.secret, delivery.message_id, body, now)
    response = post(endpoint.url, body, headers)
    record(delivery, endpoint, response)
    return response.ok


def record(delivery: WebhookDelivery, endpoint: WebhookEndpoint, response: Response) -> None:
    """Write an attempt's outcome, unless the delivery moved on since it was claimed."""
    now = timezone.now()
    fields = {"response_status": response.status, "response_body": response.body}
    if response.ok:
        fields.update(status=DeliveryStatus.SUCCEEDED, delivered_at=now, next_attempt_at=None)
        fields["error"] = ""
    elif delivery.attempts >= MAX_ATTEMPTS:
        fields.update(status=DeliveryStatus.FAILED, next_attempt_at=None)
        fields["error"] = response.error or f"HTTP {response.status}"
    else:
        fields["next_attempt_at"] = now + timedelta(seconds=BACKOFF[delivery.attempts - 1])
        fields["error"] = response.error or f"HTTP {response.status}"
    updated = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=DeliveryStatus.PENDING, attempts=delivery.attempts
    ).update(**fields)
    if not updated:
        return
    for name, value in fields.items():
        setattr(delivery, name, value)
    if response.ok:
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failures_in_a_row=0)
        endpoint.failures_in_a_row = 0
        return
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        failures_in_a_row=F("failures_in_a_row") + 1
    )
    endpoint.refresh_from_db(fields=["failures_in_a_row", "disabled_at"])
    if endpoint.failures_in_a_row >= max_failures() and endpoint.disabled_at is None:
        reason = (
            f"Disabled after {endpoint.failures_in_a_row} failed deliveries in a row "
            f"(the last: {fields['error']})."
        )[:500]
        WebhookEndpoint.objects.filter(pk=endpoint.pk, disabled_at__isnull=True).update(
            disabled_at=now, disabled_reason=reason
        )
        endpoint.disabled_at, endpoint.disabled_reason = now, reason
        logger.warning("Webhook endpoint %s disabled: %s", endpoint.pk, reason)


def ordering_key(delivery: WebhookDelivery):
    data = delivery.payload.get("data") if isinstance(delivery.payload, dict) else None
    return data.get("transcript_id") if isinstance(data, dict) else None


def send_due(endpoint_id: int) -> datetime | None:
    """Send what is due of one endpoint's pending deliveries, in order (module docstring);
    when the next one of them falls due (None: nothing pending, or the endpoint is off)."""
    endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id).first()
    if endpoint is None or endpoint.disabled_at is not None:
        return None
    pending = list(
        endpoint.deliveries.filter(status=DeliveryStatus.PENDING).order_by("created_at", "pk")[
            :BATCH
        ]
    )
    held_until: dict = {}
    for delivery in pending:
        if endpoint.disabled_at is not None:
            return None
        key = ordering_key(delivery)
        now = timezone.now()
        if key is not None and key in held_until:
            _hold(delivery, held_until[key])
            continue
        until = delivery.next_attempt_at
        if until is None or until <= now:
            delivered = attempt(delivery, endpoint)
            if delivered:
                continue
            # Failed: held until its retry (None once failed for good). Not claimed: another
            # worker is sending it, for at most its lease.
            until = delivery.next_attempt_at if delivered is False else now + _lease()
        if key is not None and until is not None:
            held_until[key] = until
    return next_due(endpoint_id)


def _lease() -> timedelta:
    return timedelta(seconds=LEASE)


def _hold(delivery: WebhookDelivery, until: datetime) -> None:
    """Keep a delivery back until the one before it (same transcript) is settled: not due
    before then, so the sweep does not take it for a late one."""
    if delivery.next_attempt_at is None or delivery.next_attempt_at < until:
        WebhookDelivery.objects.filter(pk=delivery.pk, attempts=delivery.attempts).update(
            next_attempt_at=until
        )


def next_due(endpoint_id: int) -> datetime | None:
    return WebhookDelivery.objects.filter(
        endpoint_id=endpoint_id,
        endpoint__disabled_at__isnull=True,
        status=DeliveryStatus.PENDING,
    ).aggregate(due=Min("next_attempt_at"))["due"]


def due_endpoints(now: datetime | None = None, grace: float = SWEEP_GRACE) -> list[int]:
    """Enabled endpoints with a pending delivery overdue by more than ``grace`` seconds: its
    task was lost (a worker killed mid-send, a deferred task dropped)."""
    before = (now or timezone.now()) - timedelta(seconds=grace)
    return list(
        WebhookDelivery.objects.filter(
            status=DeliveryStatus.PENDING,
            next_attempt_at__lte=before,
            endpoint__disabled_at__isnull=True,
        )
        .values_list("endpoint_id", flat=True)
        .distinct()
    )
