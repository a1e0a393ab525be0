"""An annotator looks at the pairs its corrections recorded, excludes one from exports, and
takes it back from the dataset's list (htmx, no page load)."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor import editing
from editor.models import Dataset, Membership, PreferencePair, Role, Transcript
from editor.storage.create import create_transcript
from tests.browser.conftest import settled

TEXT = (
    "<|start|>user<|message|>Capital of Australia?<|end|>\n"
    "<|start|>assistant<|channel|>analysis<|message|>Largest city: Sydney.<|end|>\n"
    "<|start|>assistant<|channel|>final<|message|>Sydney.<|end|>\n"
)


@pytest.fixture
def corrected(transactional_db):
    user = get_user_model().objects.create_user("ann", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Geography", slug="geo")
    Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)
    transcript = create_transcript(
        dataset, author=user, text=TEXT, spec="openchatml-2.2", title="Capital"
    )
    editing.edit_message(transcript, 2, {"content": "Canberra."}, expected_version=1, author=user)
    editing.edit_message(
        Transcript.objects.get(pk=transcript.pk),
        1,
        {"channel": "commentary"},
        expected_version=2,
        author=user,
    )
    return transcript


def test_exclude_a_pair_then_include_it_again(
    live_server, page, corrected, screenshot, console_errors
):
    page.goto(f"{live_server.url}/accounts/login/?next=/transcripts/{corrected.pk}/")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    page.locator('[data-action="pairs"]').click()

    cards = page.locator("article[data-pair]")
    expect(cards).to_have_count(2)
    final = cards.nth(1)  # newest first: the channel edit, then the answer's
    expect(final.locator('[data-side="rejected"] pre')).to_have_text("Sydney.")
    expect(final.locator('[data-side="chosen"] pre')).to_have_text("Canberra.")
    expect(final.locator("pre.diff .add")).to_have_text("+Canberra.")
    expect(cards.nth(0).locator(".pair-change")).to_contain_text("channel: analysis → commentary")
    settled(page)
    screenshot("side-by-side")

    final.get_by_role("button", name="Exclude").click()
    excluded = page.locator('article[data-pair][data-excluded="true"]')
    expect(excluded).to_have_count(1)
    expect(excluded.get_by_test_id("excluded")).to_contain_text("excluded by ann")
    assert PreferencePair.objects.filter(excluded_at__isnull=False).count() == 1

    page.goto(f"{live_server.url}/datasets/geo/")
    page.get_by_role("link", name="Preference pairs").click()
    page.get_by_label("Exports").select_option("yes")
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("tr[data-pair]")
    expect(rows).to_have_count(1)
    settled(page)
    screenshot("dataset-excluded")
    rows.get_by_role("button", name="Include").click()
    expect(page.locator('tr[data-pair][data-excluded="false"]')).to_have_count(1)
    assert not PreferencePair.objects.filter(excluded_at__isnull=False).exists()
    assert console_errors == []
