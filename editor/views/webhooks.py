"""A dataset's webhooks in the browser (curators; ``editor.webhooks``): the endpoints with
their secrets, add one, enable or disable, delete, and an endpoint's deliveries with their
last response and a Resend button. A disabled endpoint is shown as a banner here and on the
dataset page, and told once per session as a message (``editor.webhooks.notices``)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from editor.errors import DomainError
from editor.views.curating import curated_dataset, found_or_404
from editor.views.shared import int_param
from editor.webhooks import EVENTS, endpoints, notices
from editor.webhooks.events import DESCRIPTIONS

PAGE_SIZE = 50


def _curated(request, slug):
    return curated_dataset(request, slug, endpoints.require_curator)


def _endpoint(request, slug, pk):
    dataset = _curated(request, slug)
    return dataset, found_or_404(endpoints.endpoint_of, dataset, pk)


def _page(request, dataset, *, disabled, form=None, error=None, status=200):
    return render(
        request,
        "editor/webhooks.html",
        {
            "dataset": dataset,
            "webhooks": list(endpoints.endpoints_of(dataset)),
            "events": [(event, DESCRIPTIONS[event]) for event in EVENTS],
            "disabled": disabled,
            "form": form or {"url": "", "events": [], "description": ""},
            "error": error,
        },
        status=status,
    )


@require_GET
def dataset_webhooks(request, slug):
    dataset = _curated(request, slug)
    return _page(request, dataset, disabled=notices.tell(request, dataset))


@require_POST
def webhook_create(request, slug):
    dataset = _curated(request, slug)
    wanted = {
        "url": request.POST.get("url", ""),
        "events": request.POST.getlist("events"),
        "description": request.POST.get("description", ""),
    }
    try:
        endpoint = endpoints.create_endpoint(dataset, request.user, **wanted)
    except DomainError as refused:
        disabled = notices.disabled_endpoints(dataset, request.user)
        return _page(request, dataset, disabled=disabled, form=wanted, error=refused, status=422)
    messages.success(
        request,
        f"Webhook added. Its signing secret: {endpoint.secret} (under Show in the list, later).",
    )
    return redirect("dataset-webhooks", dataset.slug)


@require_GET
def webhook_detail(request, slug, pk):
    dataset, endpoint = _endpoint(request, slug, pk)
    page = Paginator(endpoints.deliveries_of(endpoint), PAGE_SIZE).get_page(
        int_param(request.GET.get("page"), 1)
    )
    for delivery in page.object_list:  # the body as sent, readable
        delivery.payload_text = json.dumps(delivery.payload, indent=2, ensure_ascii=False)
    return render(
        request,
        "editor/webhook.html",
        {"dataset": dataset, "webhook": endpoint, "page": page},
    )


@require_POST
def webhook_toggle(request, slug, pk):
    dataset, endpoint = _endpoint(request, slug, pk)
    enable = endpoint.disabled_at is not None
    endpoints.update_endpoint(endpoint, request.user, enabled=enable)
    messages.success(request, f"Webhook {'enabled' if enable else 'disabled'}.")
    return redirect("dataset-webhooks", dataset.slug)


@require_POST
def webhook_delete(request, slug, pk):
    dataset, endpoint = _endpoint(request, slug, pk)
    endpoints.delete_endpoint(endpoint, request.user)
    messages.success(request, "Webhook deleted.")
    return redirect("dataset-webhooks", dataset.slug)


@require_POST
def delivery_resend(request, slug, pk, delivery_pk):
    dataset, endpoint = _endpoint(request, slug, pk)
    delivery = found_or_404(endpoints.delivery_of, endpoint, delivery_pk)
    endpoints.resend(delivery, request.user)
    messages.success(request, f"Delivery {delivery.message_id} queued again.")
    return redirect("webhook-detail", dataset.slug, endpoint.pk)


@require_POST
def webhook_test(request, slug, pk):
    """Send a test event to the endpoint; its deliveries page shows how it went."""
    dataset, endpoint = _endpoint(request, slug, pk)
    delivery = endpoints.send_test(endpoint, request.user)
    if endpoint.disabled_at is None:
        messages.success(request, f"Test event {delivery.message_id} sent.")
    else:
        messages.warning(
            request, "Test event queued: it is sent once the webhook is enabled again."
        )
    return redirect("webhook-detail", dataset.slug, endpoint.pk)
