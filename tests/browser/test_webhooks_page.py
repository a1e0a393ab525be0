"""A curator's webhooks, in the browser: from the dataset page to Webhooks, an endpoint added
with the keyboard (a real receiver on 127.0.0.1, which the private-address check lets through
only with ``OCM_WEBHOOKS_ALLOW_PRIVATE``), a version created, its delivery listed as
delivered with the receiver's answer, resent (same ``webhook-id``); the pages at phone
width; and an endpoint that fails shows why."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from editor.models import WebhookEndpoint
from tests.browser.conftest import settled
from tests.browser.geography import geography, log_in
from tests.browser.test_accessibility import serious_violations
from tests.editor.test_webhooks import Receiver

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def world(transactional_db, settings):
    settings.OCM_WEBHOOKS_ALLOW_PRIVATE = True
    return geography()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


def fits_the_width(page) -> bool:
    """Nothing wider than the viewport (no sideways scrolling of the whole page)."""
    return page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def add_endpoint_with_the_keyboard(page, url: str, description: str) -> None:
    form = page.get_by_test_id("webhook-form")
    form.get_by_label("URL").focus()
    page.keyboard.type(url)
    page.keyboard.press("Tab")
    page.keyboard.type(description)
    page.keyboard.press("Enter")  # no event ticked: every event


def test_add_an_endpoint_see_a_delivery_and_resend_it(
    live_server, page, world, receiver, screenshot, console_errors
):
    log_in(page, live_server, "cur", "/datasets/geo/")
    page.locator('[data-action="webhooks"]').click()
    expect(page.get_by_role("heading", name="Webhooks")).to_be_visible()
    expect(page.get_by_test_id("no-webhooks")).to_be_visible()
    screenshot("empty")
    assert serious_violations(page) == []

    add_endpoint_with_the_keyboard(page, receiver.url, "Training pipeline")
    expect(page.locator(".flash")).to_contain_text("Webhook added. Its signing secret: whsec_")
    row = page.locator("tr[data-webhook]")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Training pipeline")
    expect(row).to_contain_text("every event")
    endpoint = WebhookEndpoint.objects.get()
    secret = row.get_by_test_id("webhook-secret")
    expect(secret).to_be_hidden()  # shown on demand: a screen shared does not show it
    row.get_by_text("Show").focus()
    page.keyboard.press("Enter")
    expect(secret).to_have_text(endpoint.secret)
    receiver.secret = endpoint.secret
    settled(page)
    screenshot("added")

    # The receiver checked before any real event: a test event, signed like the others.
    row.get_by_role("button", name="Send a test event").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".flash")).to_contain_text("Test event msg_")
    tested = page.locator("tr[data-delivery]")
    expect(tested).to_have_attribute("data-status", "succeeded")
    expect(tested).to_contain_text("webhook.test")
    assert receiver.requests[0]["verified"]
    assert json.loads(receiver.requests[0]["body"])["data"]["by"] == "cur"

    # An event: a version of the dataset, created from its Versions page.
    page.goto(f"{live_server.url}/datasets/geo/")
    page.locator('[data-action="versions"]').click()
    page.get_by_label("Name").focus()
    page.keyboard.type("v1")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Version v1")).to_be_visible()
    assert [body["type"] for body in receiver.delivered()] == [
        "webhook.test",
        "dataset_version.created",
    ]
    assert receiver.requests[1]["verified"]

    page.goto(f"{live_server.url}/datasets/geo/webhooks/")
    page.get_by_role("link", name=receiver.url).click()
    delivery = page.locator("tr[data-delivery]").first  # newest first
    expect(page.locator("tr[data-delivery]")).to_have_count(2)
    expect(delivery).to_have_attribute("data-status", "succeeded")
    expect(delivery).to_contain_text("dataset_version.created")
    expect(delivery).to_contain_text("Delivered")
    expect(delivery).to_contain_text("HTTP 200")
    delivery.get_by_text("Sent").click()
    sent = json.loads(delivery.get_by_test_id("delivery-payload").inner_text())
    assert (sent["type"], sent["data"]["version"], sent["data"]["transcripts"]) == (
        "dataset_version.created",
        "v1",
        1,
    )
    settled(page)
    screenshot("delivered")
    assert serious_violations(page) == []

    delivery.get_by_role("button", name="Resend").click()
    expect(page.locator(".flash")).to_contain_text("queued again")
    expect(page.locator("tr[data-delivery]").first).to_have_attribute("data-status", "succeeded")
    _, first, second = receiver.requests
    assert first["headers"]["webhook-id"] == second["headers"]["webhook-id"]
    assert json.loads(first["body"]) == json.loads(second["body"])
    screenshot("resent")
    assert console_errors == []


def test_a_failing_endpoint_shows_the_answer_and_the_pages_fit_a_phone(
    live_server, page, world, receiver, screenshot
):
    receiver.statuses = [500] * 20
    endpoint = WebhookEndpoint.objects.create(
        dataset=world.dataset,
        url=receiver.url,
        secret="whsec_" + "A" * 32,
        events=["dataset_version.created"],
        description="A receiver that is down",
    )
    receiver.secret = endpoint.secret
    page.set_viewport_size(PHONE)
    log_in(page, live_server, "cur", "/datasets/geo/versions/")
    page.get_by_label("Name").fill("v1")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="Version v1")).to_be_visible()

    page.goto(f"{live_server.url}/datasets/geo/webhooks/")
    expect(page.locator("tr[data-webhook]")).to_contain_text("1 failure in a row")
    screenshot("list-phone")
    assert fits_the_width(page)
    page.get_by_role("link", name=receiver.url).click()
    delivery = page.locator("tr[data-delivery]")
    expect(delivery).to_have_attribute("data-status", "pending")
    expect(delivery).to_contain_text("HTTP 500")
    settled(page)
    screenshot("deliveries-phone")
    assert fits_the_width(page)
    assert serious_violations(page) == []
