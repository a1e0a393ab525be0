"""A 5,000-message transcript: the page holds a window of a few pages wherever the user is in
it (a deep link, the last message, scrolling either way), never the transcript whole."""

import pytest
from playwright.sync_api import expect

from editor import formats
from editor.storage.create import create_transcript
from tests.browser.conftest import settled
from tests.browser.test_editor import log_in, team  # noqa: F401  (fixture)

MESSAGES = 5000
MAX_MESSAGES_IN_PAGE = 250  # five pages of fifty (static/js/editor.js, MAX_PAGES)


@pytest.fixture
def long(team):  # noqa: F811
    dataset, users = team
    messages = [
        formats.Message(role="user" if n % 2 == 0 else "assistant", content=f"Message number {n}")
        for n in range(MESSAGES)
    ]
    text = formats.serialize(formats.Transcript(spec="chatml", messages=messages))
    return create_transcript(dataset, text=text, spec="chatml", author=users["ann"])


def in_page(page) -> int:
    return page.locator("#message-list .message").count()


def test_a_deep_link_shows_its_message_within_a_small_window(page, live_server, long):
    log_in(page, live_server)
    page.goto(f"{live_server.url}/transcripts/{long.pk}/?goto=4900")
    target = page.locator("article#message-4900")
    expect(target).to_have_attribute("aria-current", "true")
    expect(target).to_be_in_viewport()
    assert (
        in_page(page) <= 100
    )  # a page or two: the page of the message, and the one above it once in view
    # Above it, the earlier pages come back as the user scrolls up: one page a scroll. The
    # page just above may already have come in while the deep link settled, or not, so the
    # user scrolls up until the message two pages up is there (twice at the most).
    earlier = page.locator("article#message-4849")
    for _ in range(2):
        page.locator(".loader-before").evaluate("loader => loader.scrollIntoView()")
        settled(page)
        if earlier.count():
            break
    expect(earlier).to_be_attached()


def test_scrolling_down_and_back_keeps_a_bounded_window_and_the_users_place(
    page, live_server, long, console_errors
):
    log_in(page, live_server)
    page.goto(f"{live_server.url}/transcripts/{long.pk}/?audience=annotator")
    expect(page.locator("article#message-0")).to_be_visible()
    for page_number in range(1, 12):
        page.locator(".loader-after").scroll_into_view_if_needed()
        expect(page.locator(f'.message-page[data-page="{page_number}"]')).to_be_attached()
        settled(page)
        assert in_page(page) <= MAX_MESSAGES_IN_PAGE
    assert page.locator(".message-page").count() <= 5
    expect(page.locator("article#message-0")).to_have_count(0)
    # What is on screen stays where it is while pages come in above it or leave above it,
    # and a page coming in above does not set off the loading of every page before it.
    last_page = page.locator('.message-page[data-page="11"]')
    last_page.scroll_into_view_if_needed()
    top = last_page.bounding_box()["y"]
    page.locator(".loader-after").evaluate("loader => htmx.trigger(loader, 'revealed')")
    expect(page.locator('.message-page[data-page="12"]')).to_be_attached()
    settled(page)
    assert abs(last_page.bounding_box()["y"] - top) < 2
    for number in (7, 6, 5):
        page.locator(".loader-before").scroll_into_view_if_needed()
        below = page.locator(f'.message-page[data-page="{number + 1}"]')
        top = below.bounding_box()["y"]
        expect(page.locator(f'.message-page[data-page="{number}"]')).to_be_attached()
        settled(page)
        assert abs(below.bounding_box()["y"] - top) < 2
        assert in_page(page) <= MAX_MESSAGES_IN_PAGE
    page.wait_for_timeout(500)
    expect(page.locator('.message-page[data-page="3"]')).to_have_count(0)
    assert console_errors == []


def test_last_and_first_message_by_key_fetch_their_window(page, live_server, long):
    log_in(page, live_server)
    page.goto(f"{live_server.url}/transcripts/{long.pk}/?audience=annotator")
    expect(page.locator("article#message-0")).to_be_visible()
    page.locator("body").evaluate("element => document.activeElement.blur()")
    page.keyboard.press("Shift+G")
    last = page.locator(f"article#message-{MESSAGES - 1}")
    expect(last).to_have_attribute("aria-current", "true")
    expect(last).to_be_in_viewport()
    assert (
        in_page(page) <= 100
    )  # a page or two: the page of the message, and the one above it once in view
    settled(page)
    page.keyboard.press("k")
    expect(page.locator(f"article#message-{MESSAGES - 2}")).to_have_attribute(
        "aria-current", "true"
    )
    page.keyboard.press("g")
    page.keyboard.press("g")
    first = page.locator("article#message-0")
    expect(first).to_have_attribute("aria-current", "true")
    expect(first).to_be_in_viewport()
    assert (
        in_page(page) <= 100
    )  # a page or two: the page of the message, and the one above it once in view
