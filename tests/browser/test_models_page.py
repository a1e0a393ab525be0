"""A dataset's model connections as a curator uses them, against the local OpenAI-compatible
server: one added with the keyboard, "Test connection" shows the model's answer in its row
(htmx), then the server's exact error once it fails; the page at phone width; axe."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from editor.models import ModelConnection
from tests.browser.conftest import settled
from tests.browser.geography import geography, log_in
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_webhooks_page import PHONE, fits_the_width
from tests.support.openai_server import Reply


@pytest.fixture
def world(transactional_db, openai_server):
    return geography()


def test_add_with_the_keyboard_test_it_then_see_it_fail(
    live_server, page, world, openai_server, screenshot, console_errors
):
    openai_server.reply("Canberra is the capital.", Reply(status=500, error_message="GPU lost"))
    log_in(page, live_server, "cur", "/datasets/geo/")
    page.locator('[data-action="models"]').click()
    expect(page.get_by_test_id("no-model-connections")).to_be_visible()
    screenshot("empty")

    page.get_by_label("Name").focus()
    for text in ("local vLLM", openai_server.base_url, "test-model"):
        page.keyboard.type(text)
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # in the key's field: left empty, the server wants none
    row = page.locator("tr[data-model-connection]")
    expect(row).to_have_count(1)
    expect(page.locator(".flash")).to_contain_text("Model connection 'local vLLM' added.")
    assert ModelConnection.objects.get().base_url == openai_server.base_url
    settled(page)

    row.get_by_role("button", name="Test connection").focus()
    page.keyboard.press("Enter")
    result = row.get_by_test_id("connection-test")
    expect(result).to_have_attribute("data-ok", "true")
    expect(result).to_contain_text("Canberra is the capital.")
    expect(result).to_contain_text("test-model")
    screenshot("answered")
    assert serious_violations(page) == []

    settled(page)
    row.get_by_role("button", name="Test connection").click()
    expect(result).to_have_attribute("data-ok", "false")
    expect(result).to_contain_text("GPU lost")
    screenshot("failed")
    assert console_errors == []


def test_the_models_page_fits_a_phone(live_server, page, world, openai_server, screenshot):
    ModelConnection.objects.create(
        dataset=world.dataset,
        name="A connection with a long name",
        base_url=f"{openai_server.base_url}/and/a/long/path/that/does/not/wrap/easily",
        model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
        api_key_env="OCM_BROWSER_TEST_KEY",
    )
    page.set_viewport_size(PHONE)
    log_in(page, live_server, "cur", "/datasets/geo/models/")
    expect(page.locator("tr[data-model-connection]")).to_have_count(1)
    settled(page)
    screenshot("phone")
    assert fits_the_width(page)
    assert serious_violations(page) == []
