"""Two annotators on one transcript (issue 31, item 11): each page says who else has it open,
the History panel follows the other's saves without touching the form being typed in, and a
save from the stale page of a different message is merged, not a conflict."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.models import Dataset, Membership, Role, Transcript
from editor.storage.create import create_transcript
from tests.browser.conftest import SCREENSHOTS, settled
from tests.editor.samples import demo_texts

PASSWORD = "a-long-test-password"
PING = 10_000  # ms: the page's heartbeat period
WITHIN_A_PING = PING + 5_000


@pytest.fixture
def weather(transactional_db):
    dataset = Dataset.objects.create(name="Support", slug="support")
    for name in ("ann", "bob"):
        user = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)
    return create_transcript(
        dataset,
        text=demo_texts()["openchatml-2.2"],
        spec="openchatml-2.2",
        author=None,
        title="Weather",
    )


def open_as(browser, live_server, name: str, transcript):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text(name)
    page.goto(f"{live_server.url}/transcripts/{transcript.pk}/?audience=annotator")
    return page, errors


def test_each_sees_the_other_and_the_history_follows_their_saves(browser, live_server, weather):
    ann, ann_errors = open_as(browser, live_server, "ann", weather)
    expect(ann.get_by_test_id("presence")).to_be_attached()
    bob, bob_errors = open_as(browser, live_server, "bob", weather)
    # Bob's page pings as it loads: Ann is there already.
    expect(bob.get_by_test_id("also-open")).to_have_text("also open by ann")
    # Ann's page hears of Bob at its next ping.
    expect(ann.get_by_test_id("also-open")).to_have_text("also open by bob", timeout=WITHIN_A_PING)

    # Bob starts typing in message 2 while Ann saves message 7.
    bob.locator('#message-2 [data-action="edit"]').click()
    settled(bob)
    bob_text = bob.locator('#message-2 textarea[name="content"]')
    bob_text.fill("Bob's question, half typed")
    ann.locator('#message-7 [data-action="edit"]').click()
    settled(ann)
    ann.locator('#message-7 textarea[name="content"]').fill("Ann's answer")
    ann.locator('#message-7 [data-action="save"]').click()
    expect(ann.locator("#version-label")).to_have_text("version 2")

    # Bob's History panel follows within a ping; his form and his page's version stay.
    expect(bob.locator('#revisions [data-revision="2"]')).to_contain_text(
        "by ann", timeout=WITHIN_A_PING
    )
    expect(bob.get_by_test_id("saved-by-other")).to_have_text("r2 by ann: reload to see it")
    expect(bob_text).to_have_value("Bob's question, half typed")
    expect(bob.locator("#version-label")).to_have_text("version 1")
    bob.screenshot(path=str(SCREENSHOTS / "test_presence-history-follows.png"), full_page=True)

    # His save from the stale page touches another message: merged, not a conflict.
    bob_text.fill("Bob's question")
    bob.locator('#message-2 [data-action="save"]').click()
    expect(bob.locator("#toast")).to_contain_text("Saved: merged with r2 by ann.")
    expect(bob.locator("[data-conflict]")).to_have_count(0)
    expect(bob.locator("article#message-2 .body")).to_have_text("Bob's question")
    expect(bob.locator("article#message-7 .body")).to_contain_text("Ann's answer")
    expect(bob.locator("#version-label")).to_have_text("version 3")
    bob.screenshot(path=str(SCREENSHOTS / "test_presence-merged.png"), full_page=True)
    messages = Transcript.objects.get(pk=weather.pk).canonical().messages
    assert messages[2].content == "Bob's question" and messages[7].content == "Ann's answer"
    assert ann_errors == [] and bob_errors == []


def test_the_same_message_from_a_stale_page_is_still_a_conflict(browser, live_server, weather):
    ann, _ = open_as(browser, live_server, "ann", weather)
    bob, _ = open_as(browser, live_server, "bob", weather)
    for page, text in ((bob, "Bob's"), (ann, "Ann's")):
        page.locator('#message-2 [data-action="edit"]').click()
        settled(page)
        page.locator('#message-2 textarea[name="content"]').fill(text)
    ann.locator('#message-2 [data-action="save"]').click()
    expect(ann.locator("#version-label")).to_have_text("version 2")
    bob.locator('#message-2 [data-action="save"]').click()
    expect(bob.locator("[data-conflict]")).to_be_visible()
