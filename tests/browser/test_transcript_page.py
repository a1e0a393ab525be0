"""Open a demo transcript from its dataset page and switch renderings without reloading."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect


@pytest.fixture
def logged_in(live_server, page, transactional_db):
    call_command("load_demo", verbosity=0)
    get_user_model().objects.create_superuser("boss", password="a-long-test-password")
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    return page


def test_switching_between_renderings_and_the_choice_is_remembered(logged_in, screenshot):
    """People who may edit open a transcript in the annotator rendering (labels, error badges
    and hidden parts show there); the rendering they pick last is where they start next time."""
    page = logged_in
    page.get_by_role("link", name="Demo transcripts").first.click()
    page.get_by_role("link", name="OpenChatML 2.2: weather in Tokyo with call ids").click()
    section = page.locator("#transcript-messages")
    messages = page.locator("#transcript-messages article[data-role]")
    expect(section).to_have_attribute("data-audience", "annotator")
    expect(messages).to_have_count(8)
    expect(page.locator('article[data-channel="analysis"][data-visible="false"]')).to_have_count(1)
    screenshot("annotator")

    page.get_by_role("link", name="End user").click()
    expect(section).to_have_attribute("data-audience", "end_user")
    expect(page).to_have_url(re.compile(r"\?audience=end_user$"))
    expect(messages).to_have_count(3)  # user, preamble, final
    expect(page.locator('article[data-channel="analysis"]')).to_have_count(0)
    screenshot("end-user")
    page.goto(page.url.split("?")[0])
    expect(section).to_have_attribute("data-audience", "end_user")

    page.get_by_role("link", name="Annotator").click()
    expect(section).to_have_attribute("data-audience", "annotator")
    expect(messages).to_have_count(8)

    page.get_by_role("link", name="Source").click()
    expect(page.get_by_test_id("debug-source").locator("mark.tok").first).to_have_text("<|start|>")
    screenshot("debug")
