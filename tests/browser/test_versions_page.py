"""Dataset versions as a curator uses them: from the dataset page to Versions, v1 created with
the keyboard, the answer corrected and a transcript added, v2 created from a filtered list;
the two compared (added, changed), the changed transcript's per-message diff one click away;
v1's export downloaded (what v1 held, not the corrected text); the pages at phone width and
through axe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from editor import editing
from editor.models import DatasetVersion, Transcript
from editor.storage.create import create_transcript
from tests.browser.conftest import settled
from tests.browser.geography import capital_text, geography, log_in
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_webhooks_page import PHONE, fits_the_width


@pytest.fixture
def world(transactional_db):
    return geography(answer="Sydney.")


def create_version(page, name: str, description: str = "") -> None:
    page.get_by_label("Name").focus()
    page.keyboard.type(name)
    if description:
        page.keyboard.press("Tab")
        page.keyboard.type(description)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=f"Version {name}")).to_be_visible()


def test_create_compare_open_the_diff_and_download(
    live_server, page, world, screenshot, console_errors
):
    log_in(page, live_server, "cur", "/datasets/geo/")
    page.locator('[data-action="versions"]').click()
    expect(page.get_by_test_id("no-versions")).to_be_visible()
    screenshot("empty")
    create_version(page, "v1", "Before the corrections")
    expect(page.locator(".flash")).to_contain_text("Version v1 created: 1 transcript.")
    expect(page.get_by_test_id("version-facts")).to_contain_text("all live transcripts")

    # The answer corrected, a second transcript imported: then v2, of the drafts only.
    transcript = world.transcript
    editing.edit_message(
        transcript, 1, {"content": "Canberra."}, expected_version=1, author=world.curator
    )
    create_transcript(
        world.dataset,
        author=world.curator,
        text=capital_text("Wellington is New Zealand's."),
        spec="openchatml-2.2",
        title="Not Australia",
    )
    page.goto(f"{live_server.url}/datasets/geo/?status=draft")
    page.locator('[data-action="versions"]').click()
    expect(page.get_by_label("From the current filter")).to_be_checked()
    create_version(page, "v2")
    assert DatasetVersion.objects.get(name="v2").filters == {"status": ["draft"]}

    page.get_by_role("link", name="Versions").click()
    rows = page.locator("tr[data-version]")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="v2")).to_contain_text("status: draft")
    settled(page)
    screenshot("listed")
    assert serious_violations(page) == []

    rows.get_by_role("link", name="v1").click()
    page.get_by_label("Compare with").select_option("v2")
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_test_id("diff-counts")).to_contain_text(
        "1 added · 0 removed · 1 changed · 0 unchanged"
    )
    expect(page.get_by_test_id("added")).to_contain_text("Not Australia")
    settled(page)
    screenshot("compared")
    assert serious_violations(page) == []

    page.get_by_test_id("changed").get_by_role("link", name="Capital").click()
    diff = page.locator("#revision-diff")
    expect(diff.locator("pre.diff .del")).to_contain_text("-Sydney.")
    expect(diff.locator("pre.diff .add")).to_contain_text("+Canberra.")
    screenshot("per-message-diff")

    page.goto(f"{live_server.url}/datasets/geo/versions/v1/")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    assert download.value.suggested_filename == "geo-v1.jsonl"
    lines = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines()]
    assert len(lines) == 1
    assert "Sydney." in json.dumps(lines[0]) and "Canberra." not in json.dumps(lines[0])
    assert Transcript.objects.get(pk=transcript.pk).version == 2  # the edit stays where it is
    assert console_errors == []


def test_the_version_pages_fit_a_phone(live_server, page, world, screenshot):
    page.set_viewport_size(PHONE)
    log_in(page, live_server, "cur", "/datasets/geo/versions/")
    create_version(page, "2026-11-release.candidate-1", "A long name and a filter")
    settled(page)
    screenshot("version-phone")
    assert fits_the_width(page)
    assert serious_violations(page) == []
    page.get_by_role("link", name="Versions").click()
    settled(page)
    screenshot("list-phone")
    assert fits_the_width(page)
    assert serious_violations(page) == []


def test_a_taken_name_is_refused_with_a_message(live_server, page, world):
    log_in(page, live_server, "cur", "/datasets/geo/versions/")
    create_version(page, "v1")
    page.get_by_role("link", name="Versions").click()
    page.get_by_label("Name").fill("v1")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("alert")).to_contain_text("The dataset has a version 'v1' already.")
    expect(page.get_by_label("Name")).to_have_value("v1")
