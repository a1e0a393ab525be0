"""The webhooks routes (api/routers/webhooks.py): curators only, URLs checked, the secret
shown, deliveries listed with their response, resend, enable/disable."""

from __future__ import annotations

import pytest

from editor import webhooks
from editor.models import WebhookDelivery, WebhookEndpoint
from editor.webhooks import sending

from .conftest import assert_error

pytestmark = pytest.mark.django_db

BASE = "/datasets/support-chats/webhooks"


@pytest.fixture(autouse=True)
def the_dataset(dataset):
    return dataset


@pytest.fixture
def private_allowed(settings):
    settings.OCM_WEBHOOKS_ALLOW_PRIVATE = True


def test_curators_add_list_change_and_delete_endpoints(as_curator, private_allowed):
    response = as_curator.post(
        BASE, {"url": "http://127.0.0.1:9/in", "events": ["export.ready"], "description": "CI"}
    )
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["secret"].startswith("whsec_") and created["enabled"] is True
    assert created["events"] == ["export.ready"]
    listed = as_curator.get(BASE).json()
    assert listed["count"] == 1 and listed["items"][0]["id"] == created["id"]
    one = f"{BASE}/{created['id']}"
    changed = as_curator.patch(one, {"enabled": False, "events": []}).json()
    assert changed["enabled"] is False and changed["events"] == []
    assert changed["disabled_reason"] == "Disabled by a curator."
    assert as_curator.patch(one, {"enabled": True}).json()["enabled"] is True
    assert as_curator.delete(one).status_code == 204
    assert_error(as_curator.get(one), 404, "not-found")


def test_private_urls_and_unknown_events_are_refused(as_curator):
    for url in ("http://127.0.0.1:9/", "http://10.0.0.1/", "http://[::1]/", "gopher://x/"):
        assert_error(as_curator.post(BASE, {"url": url}), 422, "webhook-url-refused")
    response = as_curator.post(BASE, {"url": "http://93.184.216.34/", "events": ["nope"]})
    assert response.status_code == 422
    assert not WebhookEndpoint.objects.exists()


def test_only_curators(as_annotator, as_viewer, as_outsider, private_allowed):
    for client in (as_annotator, as_viewer):
        assert_error(client.get(BASE), 403, "forbidden")
        assert_error(client.post(BASE, {"url": "http://127.0.0.1:9/"}), 403, "forbidden")
    assert_error(as_outsider.get(BASE), 404, "not-found")


def test_deliveries_are_listed_and_resent(
    as_curator, dataset, private_allowed, django_capture_on_commit_callbacks
):
    endpoint = as_curator.post(BASE, {"url": "http://127.0.0.1:9/"}).json()
    webhooks.emit(dataset, "export.ready", {"export_id": 5})
    sending.send_due(endpoint["id"])  # nothing listens on port 9: a connection error
    deliveries = as_curator.get(f"{BASE}/{endpoint['id']}/deliveries").json()
    assert deliveries["count"] == 1
    (delivery,) = deliveries["items"]
    assert delivery["status"] == "pending" and delivery["attempts"] == 1
    assert delivery["error"] and delivery["response_status"] is None
    assert delivery["payload"]["data"] == {"dataset": "support-chats", "export_id": 5}
    resend = f"{BASE}/{endpoint['id']}/deliveries/{delivery['id']}/resend"
    with django_capture_on_commit_callbacks(execute=True):
        response = as_curator.post(resend)
    assert response.status_code == 202, response.content
    assert response.json()["message_id"] == delivery["message_id"]
    assert response.json()["attempts"] == 0
    assert WebhookDelivery.objects.get().attempts == 1  # sent again at once (immediate tasks)
    assert_error(
        as_curator.post(f"{BASE}/{endpoint['id']}/deliveries/999/resend"), 404, "not-found"
    )
