"""Telling curators that an endpoint was disabled: a banner on the dataset and webhooks pages
(``disabled_endpoints``), and once per endpoint and session a Django message (``tell``)."""

from __future__ import annotations

from django.contrib import messages

from editor.models import Dataset, WebhookEndpoint

SESSION_KEY = "webhooks_told"


def disabled_endpoints(dataset: Dataset, user) -> list[WebhookEndpoint]:
    """The dataset's disabled endpoints, for its curators (nobody else is told). A dataset
    read with ``has_disabled_webhooks`` (``visible_dataset(with_webhook_alert=True)``) that
    has none costs no query."""
    if not dataset.can_curate(user) or not getattr(dataset, "has_disabled_webhooks", True):
        return []
    return list(dataset.webhooks.filter(disabled_at__isnull=False).order_by("pk"))


def tell(request, dataset: Dataset) -> list[WebhookEndpoint]:
    """Add a message for each disabled endpoint this session has not been told of; the
    disabled endpoints (for the banner)."""
    disabled = disabled_endpoints(dataset, request.user)
    told = set(request.session.get(SESSION_KEY, []))
    new = [e for e in disabled if f"{e.pk}:{e.disabled_at.isoformat()}" not in told]
    for endpoint in new:
        messages.warning(
            request, f"The webhook to {endpoint.url} was disabled: {endpoint.disabled_reason}"
        )
        told.add(f"{endpoint.pk}:{endpoint.disabled_at.isoformat()}")
    if new:
        request.session[SESSION_KEY] = sorted(told)
    return disabled
