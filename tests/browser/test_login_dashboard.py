"""Log in through the login form and see the dashboard listing the demo transcripts."""

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from editor import queues
from editor.models import Dataset, Membership, Role
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

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


@pytest.fixture
def returned_work(transactional_db):
    """An annotator with a queue to work in, one item a reviewer sent back with a comment,
    and a reviewer with an item waiting."""
    dataset = Dataset.objects.create(name="Support", slug="support")
    users = {}
    for name, role in (("ann", Role.ANNOTATOR), ("rev", Role.REVIEWER), ("cur", Role.CURATOR)):
        users[name] = get_user_model().objects.create_user(name, password="a-long-test-password")
        Membership.objects.create(user=users[name], dataset=dataset, role=role)
    transcripts = [
        create_transcript(
            dataset,
            author=users["cur"],
            text=conversation(),
            spec="openchatml-2.2",
            title=f"Chat {n}",
        )
        for n in range(4)
    ]
    queue = queues.create_queue(dataset, transcripts, name="Tone check", author=users["cur"])
    for _ in range(2):
        queues.submit(queues.claim_next(queue, users["ann"]), users["ann"])
    first = queue.items.get(position=0).assignments.get()
    queues.review(first, users["rev"], decision="reject", comment="Keep the greeting, please.")
    return queue, first


def log_in_as(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def test_my_work_lists_queues_returned_items_and_reviews(
    live_server, page, returned_work, screenshot, console_errors
):
    queue, returned = returned_work
    log_in_as(page, live_server, "ann")
    work = page.get_by_test_id("my-work")
    expect(work.get_by_role("heading", name="My work")).to_be_visible()
    mine = work.get_by_test_id("my-queues").locator(f'[data-queue="{queue.pk}"]')
    expect(mine.locator('[data-stat="todo"]')).to_contain_text("2 to do")
    expect(mine.locator('[data-stat="todo"]')).to_contain_text("1 returned")
    back = work.get_by_test_id("my-returned").locator(f'[data-assignment="{returned.pk}"]')
    expect(back).to_contain_text("Keep the greeting, please.")
    expect(back).to_contain_text("rev")
    expect(work.get_by_test_id("my-reviews")).to_have_count(0)  # annotators review nothing
    screenshot("my-work")

    # the link opens the returned item in its queue, ready to fix and submit again
    back.get_by_role("link").click()
    workspace = page.locator("#queue-workspace")
    expect(workspace).to_have_attribute("data-assignment", str(returned.pk))
    expect(workspace).to_have_attribute("data-state", "rejected")
    expect(workspace.locator('[data-move="submit"]')).to_be_visible()

    log_in_as(page, live_server, "rev")
    reviews = page.get_by_test_id("my-reviews").locator(f'[data-queue="{queue.pk}"]')
    expect(reviews.locator('[data-stat="waiting"]')).to_have_text("1 submitted")
    reviews.get_by_role("link", name="Tone check").click()
    expect(page).to_have_url(f"{live_server.url}/queues/{queue.pk}/review/")
    assert console_errors == []
