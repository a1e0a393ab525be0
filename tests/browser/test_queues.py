"""A review queue in a real browser: an annotator works through items with the keyboard, a
reviewer rejects one, the annotator reads the comment and resubmits, the curator's dashboard
counts it all."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor import queues
from editor.labels import create_label_schema
from editor.models import (
    Annotation,
    AssignmentState,
    Dataset,
    Membership,
    QueueAssignment,
    Role,
)
from editor.storage.create import create_transcript
from tests.browser.conftest import settled
from tests.editor.samples import conversation

PASSWORD = "a-long-test-password"


def leave_the_field(page) -> None:
    """Take the focus off the field typed in, so that keys reach the page's shortcuts. (A
    click on the body's corner did, until a scrolled page put a link under that corner.) htmx
    must have taken over what it swapped in first, or a shortcut follows a plain link."""
    settled(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")


@pytest.fixture
def queue(transactional_db):
    dataset = Dataset.objects.create(name="Support", slug="support")
    users = {}
    for name, role in (("ann", Role.ANNOTATOR), ("rev", Role.REVIEWER), ("cur", Role.CURATOR)):
        users[name] = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=users[name], dataset=dataset, role=role)
    transcripts = [
        create_transcript(
            dataset,
            author=users["cur"],
            text=conversation(turns=2),
            spec="openchatml-2.2",
            title=f"Chat {n}",
        )
        for n in range(3)
    ]
    create_label_schema(
        dataset,
        author=users["cur"],
        name="Tone",
        questions=[
            {
                "key": "kind",
                "kind": "choice",
                "prompt": "Is the assistant kind?",
                "required": True,
                "options": [
                    {"value": "yes", "label": "Yes", "key": "1"},
                    {"value": "no", "label": "No", "key": "2"},
                ],
            },
            {
                "key": "issues",
                "kind": "span",
                "prompt": "Tag rude words",
                "roles": ["assistant"],
                "tags": [{"value": "rude", "label": "Rude", "key": "r"}],
            },
        ],
    )
    return queues.create_queue(
        dataset,
        transcripts,
        name="Tone check",
        author=users["cur"],
        instructions="Keep it **kind**.",
    )


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def test_work_review_resubmit_and_count(page, live_server, queue, screenshot, console_errors):
    log_in(page, live_server, "ann")
    page.goto(f"{live_server.url}/queues/{queue.pk}/")
    page.locator('[data-action="start"]').click()
    expect(page.locator("#queue-workspace")).to_have_attribute("data-state", "claimed")
    progress = page.get_by_test_id("queue-progress")
    expect(progress).to_have_text("0 / 3 done by you")

    # Keyboard only: move to a message (an item starts on #0), edit it, save, submit the
    # item; skip the next.
    leave_the_field(page)
    page.keyboard.press("j")
    page.keyboard.press("e")
    expect(page.locator('#message-1 textarea[name="content"]')).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("A kinder answer.")
    page.keyboard.press("Control+Enter")
    expect(page.locator("article#message-1 .body")).to_contain_text("A kinder answer.")
    settled(page)
    # A required question: Ctrl+Enter is refused until it is answered (key 1).
    leave_the_field(page)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#queue-workspace")).to_contain_text("Answer the required question first")
    settled(page)
    leave_the_field(page)
    page.keyboard.press("1")
    expect(page.locator('fieldset[data-question="kind"] .answer-status')).to_have_text("saved")
    # Tag a word of the last answer: select it, press the tag's key.
    page.locator("article#message-3 .body").select_text()
    page.keyboard.press("r")
    expect(page.locator("article#message-3 .body mark.span-tag")).to_have_count(1)
    expect(page.locator("article#message-3 .spans li")).to_have_count(1)
    screenshot("working")
    settled(page)
    leave_the_field(page)
    page.keyboard.press("Control+Enter")
    expect(progress).to_have_text("1 / 3 done by you")
    settled(page)
    page.keyboard.press("s")
    expect(page.locator("#queue-workspace")).to_contain_text("Skipped item #2")
    settled(page)
    page.keyboard.press("2")
    expect(page.locator('fieldset[data-question="kind"] .answer-status')).to_have_text("saved")
    page.keyboard.press("Control+Enter")
    expect(progress).to_have_text("2 / 3 done by you")
    expect(page.locator("#queue-workspace")).to_contain_text("Nothing left to do")
    assert console_errors == []  # every answer's parts found their place in the workspace

    log_in(page, live_server, "rev")
    page.goto(f"{live_server.url}/queues/{queue.pk}/review/")
    page.locator("#review-comment").fill("Please keep the greeting.")
    page.locator('[data-action="reject"]').click()
    expect(page.locator("#review-workspace [role=status]")).to_contain_text("rejected")

    log_in(page, live_server, "ann")
    page.goto(f"{live_server.url}/queues/{queue.pk}/")
    expect(page.locator("#returned")).to_contain_text("Please keep the greeting.")
    page.locator('#returned [data-action="resume"]').click()
    expect(page.locator("[data-review-comment]")).to_contain_text("Please keep the greeting.")
    page.locator('[data-action="submit"]').click()
    expect(page.locator("#queue-workspace")).to_contain_text("Submitted item #1")

    log_in(page, live_server, "cur")
    page.goto(f"{live_server.url}/queues/{queue.pk}/dashboard/")
    expect(page.locator('td[data-state="submitted"]')).to_have_text("2")
    expect(page.locator('td[data-state="skipped"]')).to_have_text("1")
    expect(page.locator('tr[data-annotator="ann"]')).to_be_visible()
    figure = page.locator('#label-figures [data-question="kind"]')
    expect(figure).to_contain_text("2 items answered")
    expect(figure.locator(".agreement")).to_contain_text("Agreement")
    expect(figure.locator("svg.bars rect")).to_have_count(2)
    screenshot("dashboard")
    assert QueueAssignment.objects.filter(state=AssignmentState.SUBMITTED).count() == 2
    spans = Annotation.objects.filter(question="issues")
    assert [(s.value, s.state, s.message_index) for s in spans] == [("rude", "submitted", 3)]
    assert sorted(Annotation.objects.filter(question="kind").values_list("value", flat=True)) == [
        "no",
        "yes",
    ]


# --- the keyboard flow of one item ------------------------------------------------------------


@pytest.fixture
def rated(transactional_db):
    """A queue whose items ask a rating of each assistant message, a span tag, a required
    question about the whole transcript ("1 Good", "2 Bad") and a free-text note; "ann" holds
    the first item already (so the page loads with it)."""
    dataset = Dataset.objects.create(name="Ratings", slug="ratings")
    users = {}
    for name, role in (("ann", Role.ANNOTATOR), ("cur", Role.CURATOR)):
        users[name] = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=users[name], dataset=dataset, role=role)
    transcripts = [
        create_transcript(
            dataset,
            author=users["cur"],
            text=conversation(turns=3),
            spec="openchatml-2.2",
            title=f"Chat {n}",
        )
        for n in range(3)
    ]
    create_label_schema(dataset, author=users["cur"], name="Quality", questions=QUALITY)
    queue = queues.create_queue(dataset, transcripts, name="Ratings", author=users["cur"])
    queues.claim_next(queue, users["ann"])
    return queue


QUALITY = [
    {
        "key": "helpful",
        "kind": "rating",
        "prompt": "How helpful is this answer?",
        "applies_to": "message",
        "roles": ["assistant"],
        "scale": 5,
    },
    {
        "key": "issues",
        "kind": "span",
        "prompt": "Tag wrong claims",
        "roles": ["assistant"],
        "tags": [{"value": "wrong", "label": "Wrong", "key": "w"}],
    },
    {
        "key": "overall",
        "kind": "choice",
        "prompt": "Overall, is the conversation good?",
        "required": True,
        "options": [
            {"value": "good", "label": "Good", "key": "1"},
            {"value": "bad", "label": "Bad", "key": "2"},
        ],
    },
    {"key": "note", "kind": "text", "prompt": "Anything else?"},
]


def open_item(page, live_server, queue):
    log_in(page, live_server, "ann")
    page.goto(f"{live_server.url}/queues/{queue.pk}/")
    expect(page.locator("#queue-workspace")).to_have_attribute("data-state", "claimed")
    settled(page)


def answer_of(question: str, annotator: str = "ann"):
    found = Annotation.objects.filter(question=question, annotator__username=annotator)
    return list(found.order_by("message_index").values_list("message_index", "value"))


def test_ctrl_enter_submits_from_a_radio_button_and_from_the_text_answer(
    page, live_server, rated, console_errors
):
    open_item(page, live_server, rated)
    progress = page.get_by_test_id("queue-progress")
    overall = page.locator('fieldset[data-question="overall"]')
    overall.locator('input[value="good"]').focus()
    page.keyboard.press("Space")  # answered; the radio button keeps the focus
    page.keyboard.press("Control+Enter")
    expect(progress).to_have_text("1 / 3 done by you")
    settled(page)

    # The next item: the note typed last is saved with the item, not lost to the submit.
    page.keyboard.press("1")
    expect(page.locator('fieldset[data-question="overall"] .answer-status')).to_have_text("saved")
    note = page.locator('fieldset[data-question="note"] textarea')
    note.focus()
    page.keyboard.type("Short but right.")
    page.keyboard.press("Control+Enter")
    expect(progress).to_have_text("2 / 3 done by you")
    assert [v for _, v in answer_of("note")] == ["Short but right."]
    assert console_errors == []


def test_number_keys_answer_the_question_you_are_on(page, live_server, rated):
    open_item(page, live_server, rated)
    # Nothing focused: 1 answers the required question (its hint says "1 Good"), not the
    # first message rating, and the item can be submitted.
    page.keyboard.press("1")
    overall = page.locator('fieldset[data-question="overall"]')
    expect(overall.locator(".answer-status")).to_have_text("saved")
    assert answer_of("overall") == [(None, "good")]
    assert answer_of("helpful") == []
    # The focus comes back to the question just answered, marked as the one you are on.
    expect(overall).to_be_focused()
    expect(overall).to_have_attribute("aria-current", "true")
    expect(overall.locator(".you-are-on")).to_be_visible()
    # A radio button has the focus: a number key still answers (its own question).
    page.keyboard.press("2")
    expect(overall.locator('input[value="bad"]')).to_be_checked()
    settled(page)
    # A message's rating has the focus: the key rates that message.
    rating = page.locator('#message-1 fieldset[data-question="helpful"]')
    rating.locator('input[value="3"]').focus()
    page.keyboard.press("4")
    expect(rating.locator('input[value="4"]')).to_be_checked()
    expect(rating.locator(".answer-status")).to_have_text("saved")
    assert answer_of("helpful") == [(1, 4)]
    # In a text field a number is text.
    page.locator('fieldset[data-question="note"] textarea').focus()
    page.keyboard.press("1")
    expect(page.locator('fieldset[data-question="note"] textarea')).to_have_value("1")
    expect(overall.locator('input[value="bad"]')).to_be_checked()
    # (Saved before the next request: in tests the live server's threads share one SQLite
    # connection, where two writes at once fail.)
    expect(page.locator('fieldset[data-question="note"] .answer-status')).to_have_text("saved")
    # s skips (from a radio button too), Ctrl+Enter with nothing answered is refused in words.
    rating.locator('input[value="4"]').focus()
    page.keyboard.press("s")
    expect(page.locator("#queue-workspace")).to_contain_text("Skipped item #1")


def test_submit_is_three_tabs_from_the_page_load(page, live_server, rated):
    open_item(page, live_server, rated)
    page.reload()
    settled(page)
    for _ in range(3):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { const a = document.activeElement; return a.dataset.action || a.className; }"
        )
        if focused == "skip-to-panel":
            page.keyboard.press("Enter")
        if focused == "submit":
            break
    assert focused == "submit"


def test_at_phone_width_submit_and_the_questions_need_no_scrolling(
    page, live_server, rated, screenshot
):
    page.set_viewport_size({"width": 390, "height": 844})
    open_item(page, live_server, rated)
    screenshot("phone")
    submit = page.locator('[data-action="submit"]')
    required = page.locator('fieldset[data-question="overall"]')
    expect(submit).to_be_in_viewport()
    expect(required).to_be_in_viewport()
    page.locator("#message-5").scroll_into_view_if_needed()  # reading the transcript's end
    expect(submit).to_be_in_viewport()
    expect(page.locator('[data-action="skip"]')).to_be_in_viewport()
