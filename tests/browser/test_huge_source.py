"""The source page of a transcript too long to edit whole: a read-only window of its text,
highlighted, its line numbers beside it, with links to the parts before and after."""

import pytest
from playwright.sync_api import expect

from editor.storage.create import create_transcript
from tests.browser.test_editor import log_in, team  # noqa: F401  (fixture)
from tests.support.huge import huge_harmony

MESSAGES = 8_000  # about 840,000 characters: over SOURCE_EDITOR_MAX_CHARS


@pytest.fixture
def huge(team):  # noqa: F811
    dataset, users = team
    text = huge_harmony(MESSAGES)
    return create_transcript(dataset, text=text, spec="harmony", author=users["ann"])


def test_a_huge_source_reads_a_window_at_a_time(
    page, live_server, huge, console_errors, screenshot
):
    log_in(page, live_server)
    page.goto(f"{live_server.url}/transcripts/{huge.pk}/source/")
    window = page.locator("[data-source-window]")
    expect(window).to_be_visible()
    expect(page.locator("#source-text")).to_have_count(0)  # nothing to edit whole
    expect(page.get_by_test_id("too-long-to-edit")).to_be_visible()
    expect(page.locator("#source-highlight mark").first).to_be_visible()  # highlighted
    expect(page.locator('[data-action="previous-window"]')).to_have_count(0)
    # The text scrolls inside its frame (Harmony's messages are one long line), the line
    # numbers beside it; the page itself does not widen.
    frame = page.locator(".code-editor.read-only")
    frame.evaluate("f => { f.scrollLeft = 2000; }")
    assert frame.evaluate("f => f.scrollLeft") > 0
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    screenshot("first-window")
    first_end = window.get_attribute("data-end")
    page.locator('[data-action="next-window"]').first.click()
    expect(window).to_have_attribute("data-start", first_end)
    expect(page.locator('[data-action="previous-window"]').first).to_be_visible()
    screenshot("second-window")
    assert console_errors == []
