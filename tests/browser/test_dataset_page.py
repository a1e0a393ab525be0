"""A curator filters the dataset page's table (by label answers too), pages through it (htmx,
URL pushed, back button) and invites a member, who accepts."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.labels import create_label_schema
from editor.labels.annotations import create_annotation, submit_annotation
from editor.models import Dataset, Membership, Role, Status, Transcript
from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcripts
from tests.browser.conftest import settled
from tests.editor.samples import conversation


@pytest.fixture
def curator_page(live_server, page, transactional_db):
    users = get_user_model().objects
    curator = users.create_user("cur", password="a-long-test-password")
    users.create_user("newcomer", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Support chats", slug="support")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    content = TranscriptContent.from_text(conversation())
    # 60 approved and 70 drafts: the approved ones fill two pages (50 + 10).
    create_transcripts(
        dataset,
        [
            NewTranscript(
                content,
                title=f"chat {i:03}",
                status=Status.APPROVED if i % 2 == 0 and i < 120 else Status.DRAFT,
            )
            for i in range(130)
        ],
        author=curator,
    )
    page.goto(f"{live_server.url}/accounts/login/?next=/datasets/support/")
    page.get_by_label("Username").fill("cur")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    # The filters answer once htmx has taken the page over: a box ticked before that (a
    # loaded machine) went unheard.
    expect(page).to_have_url(f"{live_server.url}/datasets/support/")
    settled(page)
    return page


def test_filter_page_through_and_add_a_member(curator_page, live_server, screenshot):
    page = curator_page
    rows = page.locator("#transcript-table tr[data-transcript]")
    expect(rows).to_have_count(50)
    expect(page.get_by_test_id("match-count")).to_contain_text("130 transcripts")

    filters = page.get_by_test_id("filters")
    filters.get_by_label("Approved").check()
    expect(page.get_by_test_id("match-count")).to_contain_text("60 transcripts")
    expect(page).to_have_url(f"{live_server.url}/datasets/support/?status=approved&sort=-updated")
    expect(rows).to_have_count(50)
    expect(page.locator('#transcript-table tr[data-status="draft"]')).to_have_count(0)

    filters.get_by_label("Sort by").select_option("title")
    expect(rows.first).to_contain_text("chat 000")
    screenshot("filtered")

    page.locator("#transcript-table").get_by_role("link", name="Next").click()
    expect(rows).to_have_count(10)
    expect(rows.first).to_contain_text("chat 100")
    expect(page).to_have_url(
        f"{live_server.url}/datasets/support/?status=approved&sort=title&page=2"
    )
    # The filters survived the swap (only the table was replaced), and the back button works.
    expect(filters.get_by_label("Approved")).to_be_checked()
    page.go_back()
    expect(rows).to_have_count(50)
    expect(rows.first).to_contain_text("chat 000")
    expect(filters.get_by_label("Approved")).to_be_checked()
    expect(filters.get_by_label("Sort by")).to_have_value("title")

    # A header link sorts the other way round.
    page.locator('#transcript-table a[data-sort="title"]').click()
    expect(rows.first).to_contain_text("chat 118")
    expect(filters.get_by_label("Sort by")).to_have_value("-title")

    members = page.get_by_test_id("members")
    form = page.get_by_test_id("add-member-form")
    form.get_by_label("Username").fill("newcomer")
    form.get_by_label("Role").select_option("annotator")
    form.get_by_role("button", name="Invite").click()
    expect(members.locator('li[data-invitation="newcomer"]')).to_have_attribute(
        "data-role", "annotator"
    )
    expect(members.get_by_test_id("member-notice")).to_contain_text("newcomer is invited")
    # A username nobody has: the same answer (inviting tells no one which names exist).
    form = page.get_by_test_id("add-member-form")
    form.get_by_label("Username").fill("nobody")
    form.get_by_role("button", name="Invite").click()
    expect(members.get_by_test_id("member-notice")).to_contain_text("nobody is invited")
    expect(members.get_by_role("alert")).to_have_count(0)
    screenshot("members")

    # The newcomer accepts on their dashboard and is a member from then on.
    page.get_by_role("button", name="Log out").click()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("newcomer")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    invitations = page.get_by_test_id("invitations")
    expect(invitations).to_contain_text("Support chats")
    screenshot("invitation")
    invitations.locator('[data-action="accept-invitation"]').click()
    expect(page).to_have_url(f"{live_server.url}/datasets/support/")
    assert (
        Dataset.objects.get(slug="support").role_of(
            get_user_model().objects.get(username="newcomer")
        )
        == Role.ANNOTATOR
    )
    log = page.get_by_test_id("member-log")
    log.locator("summary").click()
    expect(log.locator('li[data-action="added"]')).to_contain_text(
        "cur added newcomer as annotator"
    )


def test_select_everything_matching_and_act_on_it(curator_page, live_server, screenshot):
    page = curator_page
    rows = page.locator("#transcript-table tr[data-transcript]")
    count = page.get_by_test_id("bulk-count")
    apply = page.get_by_test_id("bulk-apply")
    page.get_by_test_id("filters").get_by_label("Draft").check()
    expect(page.get_by_test_id("match-count")).to_contain_text("70 transcripts")
    expect(count).to_have_text("None selected")
    expect(apply).to_be_disabled()

    rows.nth(0).get_by_test_id("select-row").check()
    rows.nth(1).get_by_test_id("select-row").check()
    expect(count).to_have_text("2 selected")
    expect(page.get_by_test_id("select-page")).to_have_js_property("indeterminate", True)
    page.get_by_test_id("select-page").check()
    expect(count).to_have_text("50 selected")
    page.get_by_test_id("select-all-matching").check()
    expect(count).to_have_text("All 70 matching selected")
    expect(rows.nth(0).get_by_test_id("select-row")).to_be_disabled()
    page.get_by_test_id("bulk-action").select_option("transition:submit")
    screenshot("bulk-selected")
    apply.click()

    expect(page.get_by_test_id("bulk-message")).to_contain_text("70 transcripts moved.")
    expect(page.get_by_test_id("match-count")).to_contain_text("0 transcripts")
    # The action did not change the address: the back button still goes where it did.
    expect(page).to_have_url(f"{live_server.url}/datasets/support/?status=draft&sort=-updated")
    dataset = Dataset.objects.get(slug="support")
    assert dataset.transcripts.filter(status=Status.DRAFT).count() == 0
    assert dataset.transcripts.filter(status=Status.IN_REVIEW).count() == 70

    # Ticked rows deleted, then brought back with Undo.
    page.get_by_test_id("filters").get_by_label("Draft").uncheck()
    expect(page.get_by_test_id("match-count")).to_contain_text("130 transcripts")
    rows.nth(0).get_by_test_id("select-row").check()
    rows.nth(2).get_by_test_id("select-row").check()
    page.get_by_test_id("bulk-action").select_option("delete")
    apply.click()
    expect(page.get_by_test_id("bulk-message")).to_contain_text("2 transcripts deleted.")
    expect(page.get_by_test_id("match-count")).to_contain_text("128 transcripts")
    screenshot("bulk-deleted")
    page.get_by_test_id("bulk-undo").click()
    expect(page.get_by_test_id("bulk-message")).to_contain_text("2 transcripts brought back.")
    expect(page.get_by_test_id("match-count")).to_contain_text("130 transcripts")
    expect(count).to_have_text("None selected")


def test_filter_by_a_label_answer(curator_page, live_server):
    dataset = Dataset.objects.get(slug="support")
    curator = get_user_model().objects.get(username="cur")
    schema = create_label_schema(
        dataset,
        author=curator,
        name="Triage",
        questions=[
            {
                "key": "topic",
                "kind": "choice",
                "prompt": "Topic?",
                "options": [
                    {"value": "billing", "label": "Billing"},
                    {"value": "bug", "label": "Bug"},
                ],
            }
        ],
    )
    for transcript in Transcript.objects.filter(title__in=["chat 003", "chat 007"]):
        answer = create_annotation(
            transcript, annotator=curator, schema=schema, question="topic", value="billing"
        )
        submit_annotation(answer, user=curator)
    page = curator_page
    page.reload()
    page.get_by_test_id("filters").get_by_label("Label").select_option("topic:billing")
    rows = page.locator("#transcript-table tr[data-transcript]")
    expect(rows).to_have_count(2)
    expect(page.get_by_test_id("match-count")).to_contain_text("2 transcripts")
    expect(page).to_have_url(
        f"{live_server.url}/datasets/support/?label=topic%3Abilling&sort=-updated"
    )


def test_typing_in_a_filter_while_another_answers_is_never_wiped(curator_page, live_server):
    """A change answers with the table and the filter fields again: what was typed meanwhile
    in another field stays as typed, with the focus, and the last answer is the one shown."""
    page = curator_page
    rows = page.locator("#transcript-table tr[data-transcript]")
    expect(rows).to_have_count(50)
    settled(page)  # a click before htmx has the form would send nothing (a flake under load)
    filters = page.get_by_test_id("filters")
    changed_by = filters.get_by_label("Last changed by")
    # Check "Approved" (a request goes out), then at once type into another field, before
    # the answer is in: the answer must not put the field back as the server saw it.
    page.evaluate(
        """() => {
            const form = document.getElementById('transcript-filters');
            form.addEventListener('htmx:beforeRequest', () => {
                const field = document.getElementById('filter_updated_by');
                field.focus();
                field.value = 'cu';  // typed after the request's fields were read
            }, { once: true });
            form.querySelector('input[value="approved"]').click();
        }"""
    )
    expect(page.get_by_test_id("match-count")).to_contain_text("60 transcripts")
    expect(changed_by).to_have_value("cu")
    expect(changed_by).to_be_focused()
    changed_by.press_sequentially("r")
    changed_by.press("Enter")
    expect(page).to_have_url(
        f"{live_server.url}/datasets/support/?status=approved&updated_by=cur&sort=-updated"
    )
    expect(page.get_by_test_id("match-count")).to_contain_text("60 transcripts")
    expect(changed_by).to_have_value("cur")
