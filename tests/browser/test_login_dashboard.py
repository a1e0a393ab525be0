"""Log in through the login form and see the dashboard listing the demo transcripts."""

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

DEMO_MANIFEST = Path(__file__).resolve().parents[2] / "editor" / "demo" / "manifest.json"


@pytest.fixture
def demo(transactional_db):
    call_command("load_demo", verbosity=0)
    return json.loads(DEMO_MANIFEST.read_text("utf-8"))


@pytest.fixture
def local_user(transactional_db):
    return get_user_model().objects.create_superuser("reviewer1", password="a-long-test-password")


def test_anonymous_user_is_sent_to_login(live_server, page):
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()


def test_wrong_password_shows_a_form_error(live_server, page, local_user):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("reviewer1")
    page.get_by_label("Password").fill("not-the-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("correct username and password")


def test_login_shows_dashboard_with_demo_transcripts(
    live_server, page, demo, local_user, screenshot
):
    page.goto(f"{live_server.url}/")
    page.get_by_label("Username").fill("reviewer1")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()

    expect(page).to_have_url(f"{live_server.url}/")
    expect(page.get_by_test_id("current-user")).to_have_text("reviewer1")
    section = page.locator(f'[data-dataset="{demo["dataset"]["slug"]}"]')
    expect(section.get_by_role("heading", name=demo["dataset"]["name"])).to_be_visible()
    expect(section.locator('[data-stat="transcripts"]')).to_have_text(str(len(demo["transcripts"])))
    screenshot("dashboard")

    section.get_by_role("link", name=demo["dataset"]["name"]).click()
    rows = page.locator("tr[data-transcript]")
    expect(rows).to_have_count(len(demo["transcripts"]))
    for item in demo["transcripts"]:
        row = page.locator(f'tr[data-spec="{item["spec"]}"]')
        expect(row).to_contain_text(item["title"])

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
