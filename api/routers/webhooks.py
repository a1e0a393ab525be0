"""A dataset's webhooks (curators; docs/webhooks.md): endpoints, their deliveries, resend."""

from ninja import Router, Status
from ninja.pagination import paginate

from editor.visibility import visible_dataset
from editor.webhooks import endpoints

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas.pipelines import DeliveryOut, WebhookIn, WebhookOut, WebhookPatchIn

router = Router(tags=["webhooks"])


def _curated(user, slug: str):
    dataset = visible_dataset(user, slug)
    endpoints.require_curator(dataset, user)
    return dataset


def _endpoint(user, slug: str, pk: int):
    return endpoints.endpoint_of(_curated(user, slug), pk)


@router.get(
    "/datasets/{slug}/webhooks",
    response={200: list[WebhookOut], **errors(403, 404, 422)},
    summary="The dataset's webhook endpoints (curators)",
)
@paginate(LimitOffset)
def list_webhooks(request, slug: str):
    return endpoints.endpoints_of(_curated(request.auth, slug))


@router.post(
    "/datasets/{slug}/webhooks",
    response={201: WebhookOut, **errors(403, 404, 422)},
    summary="Add a webhook endpoint (curators); its signing secret is in the answer",
    description="422 `webhook-url-refused` for a URL that is not http(s) or whose host "
    "resolves to loopback, private, link-local, multicast or reserved addresses (unless the "
    "server sets `OCM_WEBHOOKS_ALLOW_PRIVATE`).",
)
def create_webhook(request, slug: str, body: WebhookIn):
    endpoint = endpoints.create_endpoint(
        _curated(request.auth, slug),
        request.auth,
        url=body.url,
        events=body.events,
        description=body.description,
    )
    return Status(201, endpoint)


@router.get(
    "/datasets/{slug}/webhooks/{pk}",
    response={200: WebhookOut, **errors(403, 404, 422)},
    summary="One webhook endpoint (curators)",
)
def get_webhook(request, slug: str, pk: int):
    return _endpoint(request.auth, slug, pk)


@router.patch(
    "/datasets/{slug}/webhooks/{pk}",
    response={200: WebhookOut, **errors(403, 404, 422)},
    summary="Change, disable or enable a webhook endpoint (curators)",
)
def update_webhook(request, slug: str, pk: int, body: WebhookPatchIn):
    return endpoints.update_endpoint(
        _endpoint(request.auth, slug, pk),
        request.auth,
        url=body.url,
        events=body.events,
        description=body.description,
        enabled=body.enabled,
    )


@router.delete(
    "/datasets/{slug}/webhooks/{pk}",
    response={204: None, **errors(403, 404, 422)},
    summary="Delete a webhook endpoint and its deliveries (curators)",
)
def delete_webhook(request, slug: str, pk: int):
    endpoints.delete_endpoint(_endpoint(request.auth, slug, pk), request.auth)
    return Status(204, None)


@router.get(
    "/datasets/{slug}/webhooks/{pk}/deliveries",
    response={200: list[DeliveryOut], **errors(403, 404, 422)},
    summary="An endpoint's deliveries, newest first, with their status and last response",
)
@paginate(LimitOffset)
def list_deliveries(request, slug: str, pk: int):
    return endpoints.deliveries_of(_endpoint(request.auth, slug, pk))


@router.post(
    "/datasets/{slug}/webhooks/{pk}/deliveries/{delivery_id}/resend",
    response={202: DeliveryOut, **errors(403, 404, 422)},
    summary="Send a delivery again (same `webhook-id`, same body), with fresh attempts",
)
def resend_delivery(request, slug: str, pk: int, delivery_id: int):
    endpoint = _endpoint(request.auth, slug, pk)
    delivery = endpoints.resend(endpoints.delivery_of(endpoint, delivery_id), request.auth)
    return Status(202, delivery)
