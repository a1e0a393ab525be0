"""A curator compares two revisions of a transcript and restores the older one."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.models import Dataset, Membership, Role
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript

FIRST = "<|start|>user<|message|>Capital of Australia?<|end|>\n<|start|>assistant<|channel|>final<|message|>Sydney.<|end|>\n"


@pytest.fixture
def edited(transactional_db):
    user = get_user_model().objects.create_user("cur", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Geography", slug="geo")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    transcript = create_transcript(
        dataset, author=user, text=FIRST, spec="openchatml-2.2", title="Capital"
    )
    return save_transcript(
        transcript,
        expected_version=1,
        author=user,
        text=FIRST.replace("Sydney.", "Canberra."),
        note="fact check",
    )


def test_compare_then_restore(live_server, page, edited, screenshot):
    page.goto(f"{live_server.url}/accounts/login/?next=/transcripts/{edited.pk}/")
    page.get_by_label("Username").fill("cur")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Compare and restore revisions").click()

    diff = page.locator("#revision-diff")
    expect(diff.locator('article[data-change="changed"]')).to_have_count(1)
    expect(diff.locator(".del")).to_have_text("-Sydney.")
    expect(diff.locator(".add")).to_have_text("+Canberra.")
    screenshot("diff")

    page.get_by_role("link", name="Restore revision 1…").click()
    expect(page.locator('[data-confirm="restore"]')).to_contain_text("message #1 changed")
    screenshot("confirm")
    page.get_by_role("button", name="Restore revision 1").click()
    expect(page.locator(".flash")).to_contain_text("Revision 1 restored as version 3")
    expect(page.locator("tr[data-revision]")).to_have_count(3)
