"""At phone width (390 by 844) the dataset table keeps every column within reach (it scrolls
sideways inside its card, the title column held in place) and every control is a target of
at least 40 px; at desktop width, at least 32 px (docs/accessibility.md)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from editor.models import Dataset, Membership, Role, Transcript
from tests.browser.conftest import settled

PASSWORD = "a-long-test-password"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}

# What a finger or a pointer aims at: buttons, links drawn as buttons, fields, menus.
TARGETS = (
    "button, a.button, select, summary, .tabs a, .pager a,"
    " input:not([type=hidden]):not([type=checkbox]):not([type=radio])"
)


@pytest.fixture
def demo(transactional_db):
    call_command("load_demo", verbosity=0)
    users = get_user_model().objects
    dataset = Dataset.objects.get()
    Membership.objects.create(
        user=users.create_user("cur", password=PASSWORD), dataset=dataset, role=Role.CURATOR
    )
    Membership.objects.create(
        user=users.create_user("view", password=PASSWORD), dataset=dataset, role=Role.VIEWER
    )
    return dataset


def log_in(page, live_server, username: str):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)
    return page


@pytest.fixture
def curator_page(live_server, page, demo):
    return log_in(page, live_server, "cur")


def too_small(page, minimum: int) -> list[str]:
    """The visible targets of the page shorter than ``minimum`` px, described."""
    return page.evaluate(
        """([selector, minimum]) => Array.from(document.querySelectorAll(selector))
            .filter((el) => el.checkVisibility() && el.getClientRects().length)
            .map((el) => [el, el.getBoundingClientRect()])
            .filter(([el, box]) => box.height < minimum - 0.5)
            .map(([el, box]) => `${Math.round(box.height)}px: ${el.outerHTML.slice(0, 120)}`)""",
        [TARGETS, minimum],
    )


# A curator's table begins with a column of checkboxes (held in place too); a viewer's does not.
@pytest.mark.parametrize("username", ["cur", "view"])
def test_every_column_of_the_dataset_table_is_reachable_at_phone_width(
    page, live_server, demo, username, screenshot
):
    log_in(page, live_server, username)
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/datasets/demo/")
    table = page.get_by_test_id("transcripts")
    expect(table.locator("tr[data-transcript]")).to_have_count(Transcript.objects.count())
    # The page itself never scrolls sideways: only the table does, inside its card.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    scroller = page.locator(".table-scroll")
    assert scroller.evaluate("(el) => getComputedStyle(el).overflowX") == "auto"
    headers = table.locator("thead th")
    names = [name.strip() for name in headers.all_inner_texts()]  # "UPDATED ↓": sorted by it
    assert [name.split(" ")[0] for name in names[-4:]] == [
        "MESSAGES",
        "DIAGNOSTICS",
        "TOKENS",
        "UPDATED",
    ]
    for index in range(headers.count()):
        header = headers.nth(index)
        header.scroll_into_view_if_needed()
        box = header.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (names[index], box)
        # Seen, not under the columns held in place: the header itself is at its centre.
        on_top = page.evaluate(
            "([x, y, th]) => th.contains(document.elementFromPoint(x, y))",
            [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, header.element_handle()],
        )
        assert on_top, f"the {names[index]} header is covered"
    # Scrolled to the last column, the title stays where it is, readable.
    scroller.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
    title = table.locator("tbody tr").first.locator("td").nth(1 if username == "cur" else 0)
    title_box = title.bounding_box()
    assert title_box["x"] >= 0
    assert page.evaluate(
        "([x, y, td]) => td.contains(document.elementFromPoint(x, y))",
        [title_box["x"] + 8, title_box["y"] + 8, title.element_handle()],
    )
    screenshot("phone-scrolled")
    scroller.evaluate("(el) => { el.scrollLeft = 0; }")
    page.evaluate("window.scrollTo(0, 0)")
    screenshot("phone")


def test_targets_are_40px_at_phone_width_and_32px_at_desktop_width(
    curator_page, live_server, screenshot
):
    page = curator_page
    transcript = max(Transcript.objects.all(), key=lambda t: t.message_count)
    pages = (
        "/datasets/demo/",
        f"/transcripts/{transcript.pk}/?audience=annotator",
        f"/transcripts/{transcript.pk}/source/",
    )
    for size, minimum in ((PHONE, 40), (DESKTOP, 32)):
        page.set_viewport_size(size)
        for path in pages:
            page.goto(live_server.url + path)
            settled(page)
            small = too_small(page, minimum)
            assert not small, f"{path} at {size['width']} px:\n" + "\n".join(small)
        # The message editor's fields and buttons too.
        page.goto(live_server.url + pages[1])
        settled(page)
        page.locator('[data-action="edit"]').first.click()
        expect(page.locator("form.message.editing")).to_be_visible()
        small = too_small(page, minimum)
        assert not small, f"the message editor at {size['width']} px:\n" + "\n".join(small)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{live_server.url}/datasets/demo/")
    screenshot("desktop")
