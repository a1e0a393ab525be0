"""The dataset page's sections below the table arrive after it (issue 34): the table does not
move when they come in, a section that cannot be fetched says so in place and can be asked
again, and its forms then work (an invitation sent from the members section)."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.models import Dataset, Membership, Role
from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcripts
from tests.browser.conftest import settled
from tests.editor.samples import conversation

SECTIONS = "**/datasets/support/sections/**"


@pytest.fixture
def curator_page(live_server, page, transactional_db):
    users = get_user_model().objects
    curator = users.create_user("cur", password="a-long-test-password")
    users.create_user("newcomer", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Support chats", slug="support")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    content = TranscriptContent.from_text(conversation())
    create_transcripts(
        dataset, [NewTranscript(content, title=f"chat {i:03}") for i in range(3)], author=curator
    )
    page.goto(f"{live_server.url}/accounts/login/?next=/")
    page.get_by_label("Username").fill("cur")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text("cur")
    return page


def test_the_table_stays_put_while_the_sections_come_in(curator_page, live_server, screenshot):
    page = curator_page
    held = []
    page.route(SECTIONS, lambda route: held.append(route))  # each waits until let go
    page.goto(f"{live_server.url}/datasets/support/")
    expect(page.locator("[data-deferred-section]")).to_have_count(4)
    expect(page.locator("#members [data-testid='section-status']")).to_have_text("Loading…")
    last_row = page.locator("#transcript-table tr[data-transcript]").last
    before = last_row.bounding_box()
    screenshot("loading")
    while len(held) < 4:
        page.wait_for_timeout(50)
    for route in held:
        route.continue_()
    expect(page.get_by_test_id("add-member-form")).to_be_visible()
    expect(page.get_by_test_id("export-form")).to_be_visible()
    expect(page.get_by_test_id("import-form")).to_be_visible()
    expect(page.get_by_test_id("queue-form")).to_be_attached()
    expect(page.locator("[data-deferred-section]")).to_have_count(0)
    assert last_row.bounding_box() == before
    screenshot("desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot("phone")


def test_a_section_that_fails_says_so_and_is_asked_again(curator_page, live_server, console_errors):
    page = curator_page
    failing = "**/datasets/support/sections/members/"
    page.route(failing, lambda route: route.fulfill(status=500, body="<h1>Server error</h1>"))
    page.goto(f"{live_server.url}/datasets/support/")
    status = page.locator("#members [data-testid='section-status']")
    expect(status).to_contain_text("could not be loaded (the server answered 500)")
    expect(page.locator("#members")).to_have_attribute("data-failed", "true")
    expect(page.locator("#members")).not_to_contain_text("Server error")  # not swapped in
    expect(page.get_by_test_id("export-form")).to_be_visible()  # the others came
    page.unroute(failing)
    page.get_by_role("button", name="Try again").click()
    section = page.get_by_test_id("members")
    expect(section.locator('tr[data-member="cur"]')).to_be_visible()
    settled(page)
    # Its forms work as they did in the page: an invitation, answered in place.
    form = page.get_by_test_id("add-member-form")
    form.get_by_label("Username").fill("newcomer")
    form.get_by_role("button", name="Invite").click()
    expect(page.get_by_test_id("member-notice")).to_contain_text("newcomer is invited")
    expect(page.locator('[data-invitation="newcomer"]')).to_be_visible()
    assert not [e for e in console_errors if "500" not in e]


# Changes the export section's spec the moment the section is in the page, as a quick user
# (or a test) does: the change is made in the next task after the section is inserted.
CHANGE_AS_SOON_AS_IN = """
new MutationObserver((_, observer) => {
  const spec = document.querySelector("[data-testid='export-form'] select[name='spec']");
  if (!spec) return;
  observer.disconnect();
  setTimeout(() => {
    spec.value = "openchatml-2.2";
    spec.dispatchEvent(new Event("change", {bubbles: true}));
  }, 0);
}).observe(document, {childList: true, subtree: true});
"""


def test_a_section_s_form_answers_a_change_made_the_moment_it_arrives(curator_page, live_server):
    """htmx wires up what it swaps in when the swap settles; with its default 20 ms settle
    delay, a change made before that was not listened to and no preview came."""
    page = curator_page
    page.add_init_script(CHANGE_AS_SOON_AS_IN)
    page.goto(f"{live_server.url}/datasets/support/")
    expect(page.get_by_test_id("export-nothing-lost")).to_have_text(
        "Nothing is lost: 3 transcripts export whole.", timeout=10_000
    )
