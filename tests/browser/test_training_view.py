"""The training rendering in the browser: the Training tab marks every message
data-trained, dims the masked ones, and the convention selector swaps the marks in place."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import settled

HARMONY = (
    Path(__file__).resolve().parents[1] / "fixtures" / "training" / "two-turns-with-call.harmony"
).read_text(encoding="utf-8")


@pytest.fixture
def opened(live_server, page, transactional_db):
    from django.contrib.auth import get_user_model

    from editor.models import Dataset, Membership, Role
    from editor.storage.create import create_transcript

    user = get_user_model().objects.create_user("ann", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Harmony chats", slug="harmony-chats")
    Membership.objects.create(dataset=dataset, user=user, role=Role.ANNOTATOR)
    transcript = create_transcript(
        dataset, author=user, text=HARMONY, spec="harmony", title="Oslo then Rome"
    )
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/transcripts/{transcript.pk}/")
    settled(page)
    return page


def trained_indexes(page) -> list[int]:
    return [
        int(i)
        for i in page.locator('#transcript-messages article[data-trained="true"]').evaluate_all(
            "els => els.map(e => e.dataset.index)"
        )
    ]


def test_training_tab_marks_and_dims_and_the_convention_switches(opened, screenshot):
    page = opened
    page.get_by_role("link", name="Training").click()
    section = page.locator("#transcript-messages")
    expect(section).to_have_attribute("data-audience", "training")
    expect(page).to_have_url(re.compile(r"\?audience=training$"))
    settled(page)
    messages = page.locator("#transcript-messages article[data-role]")
    expect(messages).to_have_count(11)
    expect(page.locator("article[data-trained]")).to_have_count(11)
    assert trained_indexes(page) == [4, 7, 9, 10]
    masked = page.locator('article[data-index="3"]')
    expect(masked).to_have_attribute("data-trained", "false")
    expect(masked).to_have_class(re.compile(r"\bmasked\b"))
    # Dimmed: the masked card is drawn fainter than a trained one.
    assert float(masked.evaluate("e => getComputedStyle(e).opacity")) < 1
    trained = page.locator('article[data-index="10"]')
    assert float(trained.evaluate("e => getComputedStyle(e).opacity")) == 1
    expect(masked.get_by_test_id("training-badge")).to_contain_text("masked: analysis")
    screenshot("gpt-oss")

    page.get_by_label("Trained on").select_option("last_assistant_turn")
    expect(page).to_have_url(re.compile(r"convention=last_assistant_turn"))
    settled(page)
    expect(page.locator('article[data-trained="true"]')).to_have_count(2)
    assert trained_indexes(page) == [9, 10]
    screenshot("last-turn")
