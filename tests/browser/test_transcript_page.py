"""Open a demo transcript from its dataset page and switch renderings without reloading."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from tests.browser.conftest import settled


@pytest.fixture
def logged_in(live_server, page, transactional_db):
    call_command("load_demo", verbosity=0)
    get_user_model().objects.create_superuser("boss", password="a-long-test-password")
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    return page


def test_switching_between_renderings_and_the_choice_is_remembered(logged_in, screenshot):
    """People who may edit open a transcript in the annotator rendering (labels, error badges
    and hidden parts show there); the rendering they pick last is where they start next time."""
    page = logged_in
    page.get_by_role("link", name="Demo transcripts").first.click()
    page.get_by_role("link", name="OpenChatML 2.2: weather in Tokyo with call ids").click()
    section = page.locator("#transcript-messages")
    messages = page.locator("#transcript-messages article[data-role]")
    expect(section).to_have_attribute("data-audience", "annotator")
    expect(messages).to_have_count(8)
    expect(page.locator('article[data-channel="analysis"][data-visible="false"]')).to_have_count(1)
    screenshot("annotator")

    page.get_by_role("link", name="End user").click()
    expect(section).to_have_attribute("data-audience", "end_user")
    expect(page).to_have_url(re.compile(r"\?audience=end_user$"))
    expect(messages).to_have_count(3)  # user, preamble, final
    expect(page.locator('article[data-channel="analysis"]')).to_have_count(0)
    screenshot("end-user")
    page.goto(page.url.split("?")[0])
    expect(section).to_have_attribute("data-audience", "end_user")

    page.get_by_role("link", name="Annotator").click()
    expect(section).to_have_attribute("data-audience", "annotator")
    expect(messages).to_have_count(8)

    page.get_by_role("link", name="Source").click()
    expect(page.get_by_test_id("debug-source").locator("mark.tok").first).to_have_text("<|start|>")
    screenshot("debug")


def test_an_annotator_answers_whole_transcript_questions_on_the_transcript_page(
    live_server, page, transactional_db, console_errors
):
    from editor.labels import create_label_schema
    from editor.models import Dataset, Membership, Role
    from editor.storage.create import create_transcript
    from tests.editor.samples import conversation

    dataset = Dataset.objects.create(name="Support", slug="support")
    user = get_user_model().objects.create_user("ann", password="a-long-test-password")
    Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)
    curator = get_user_model().objects.create_user("cur")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    transcript = create_transcript(dataset, author=user, text=conversation(), spec="openchatml-2.2")
    create_label_schema(
        dataset,
        author=curator,
        name="Training",
        questions=[
            {
                "key": "usable",
                "kind": "choice",
                "prompt": "Usable for training?",
                "required": True,
                "options": [
                    {"value": "yes", "label": "Yes", "key": "1"},
                    {"value": "no", "label": "No", "key": "2"},
                ],
            }
        ],
    )
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/transcripts/{transcript.pk}/")
    expect(page.locator("#transcript-messages")).to_have_attribute("data-audience", "annotator")
    question = page.locator('#questions [data-question="usable"]')
    expect(question).to_contain_text("Usable for training?")
    question.get_by_label("No").check()
    expect(question.locator(".answer-status")).to_have_text("saved")
    page.reload()
    expect(page.locator('#questions [data-question="usable"] input[value="no"]')).to_be_checked()
    assert console_errors == []


def test_number_keys_answer_on_the_transcript_page_too(live_server, page, transactional_db):
    """With the focus nowhere, a number key answers the first unanswered required question (the
    whole transcript's here, not the first message's), as in a queue."""
    from editor.labels import create_label_schema
    from editor.models import Annotation, Dataset, Membership, Role
    from editor.storage.create import create_transcript
    from tests.editor.samples import conversation

    dataset = Dataset.objects.create(name="Support", slug="support")
    users = get_user_model().objects
    user = users.create_user("ann", password="a-long-test-password")
    Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)
    curator = users.create_user("cur")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    transcript = create_transcript(dataset, author=user, text=conversation(), spec="openchatml-2.2")
    options = [
        {"value": "yes", "label": "Yes", "key": "1"},
        {"value": "no", "label": "No", "key": "2"},
    ]
    create_label_schema(
        dataset,
        author=curator,
        name="Both",
        questions=[
            {
                "key": "usable",
                "kind": "choice",
                "prompt": "Usable?",
                "required": True,
                "options": options,
            },
            {
                "key": "right",
                "kind": "choice",
                "prompt": "Right?",
                "applies_to": "message",
                "roles": ["assistant"],
                "options": options,
            },
        ],
    )
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/transcripts/{transcript.pk}/")
    settled(page)
    page.keyboard.press("2")
    usable = page.locator('#questions [data-question="usable"]')
    expect(usable.locator('input[value="no"]')).to_be_checked()
    expect(usable.locator(".answer-status")).to_have_text("saved")
    assert Annotation.objects.get(question="usable").value == "no"
