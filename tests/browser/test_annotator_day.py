"""The annotator's day (issue 31), in a real browser and with the keyboard alone: a queue of 20
items asking a rating of each assistant message, a span tag and a required question about the
whole conversation. Annotator 1 does all 20; annotator 2 does the first 6 and disagrees on 3 of
them; the reviewer settles those from the review page with keys. No mouse event happens at all
(a listener counts every trusted pointer, mouse and click-with-a-pointer event, across pages).

The figures it prints (keystrokes per item) are those of docs/performance.md."""

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
    Status,
    Transcript,
)
from tests.browser.conftest import settled
from tests.editor.samples import conversation

PASSWORD = "a-long-test-password"
ITEMS = 20
SECOND_DOES = 6
DISAGREE_ON = 3  # annotator 2 calls the first three conversations bad
QUESTIONS = [
    {
        "key": "helpful",
        "kind": "rating",
        "prompt": "How helpful is this answer?",
        "applies_to": "message",
        "roles": ["assistant"],
        "scale": 5,
    },
    {
        "key": "claims",
        "kind": "span",
        "prompt": "Tag wrong claims",
        "roles": ["assistant"],
        "tags": [{"value": "wrong", "label": "Wrong claim", "key": "w"}],
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
]

# Every trusted pointer or mouse event, and every click that came from a pointer (a click that
# Enter or Space made has detail 0), counted in sessionStorage so that page loads keep it.
COUNT_MOUSE = """
for (const type of ["pointerdown", "pointerup", "mousedown", "mouseup", "click", "dblclick",
                    "contextmenu", "wheel"]) {
  document.addEventListener(type, (event) => {
    if (!event.isTrusted) return;
    if (type === "click" && event.detail === 0) return;  // the keyboard's click
    sessionStorage.setItem("mouse", String(Number(sessionStorage.getItem("mouse") || 0) + 1));
    sessionStorage.setItem("mouse-last", type);
  }, true);
}
"""


@pytest.fixture
def day(transactional_db):
    dataset = Dataset.objects.create(name="Support", slug="support")
    users = {}
    for name, role in (
        ("ann1", Role.ANNOTATOR),
        ("ann2", Role.ANNOTATOR),
        ("rev", Role.REVIEWER),
        ("cur", Role.CURATOR),
    ):
        users[name] = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=users[name], dataset=dataset, role=role)
    create_label_schema(dataset, author=users["cur"], name="Quality", questions=QUESTIONS)
    from editor.storage.create import create_transcript

    transcripts = [
        create_transcript(
            dataset,
            author=users["cur"],
            text=conversation(turns=2),
            spec="openchatml-2.2",
            title=f"Support chat {n + 1}",
        )
        for n in range(ITEMS)
    ]
    return queues.create_queue(
        dataset,
        transcripts,
        name="Support answers",
        author=users["cur"],
        overlap=2,
        instructions="Rate each answer; tag claims that are **wrong**.",
    )


class Keys:
    """The keyboard, counting what is pressed."""

    def __init__(self, page):
        self.page = page
        self.count = 0

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)
            self.count += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.count += len(text)


def log_in(page, live_server, username: str) -> None:
    """With keys: the fields filled (typing, no pointer), Enter sends."""
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def mouse_events(page) -> int:
    return int(page.evaluate("Number(sessionStorage.getItem('mouse') || 0)"))


def work_one_item(page, keys: Keys, *, overall: str, ratings: tuple[str, str], tag: bool):
    """One item: the required question from the answer panel, then j to each assistant
    message and a number to rate it, a tag on the selected words, Ctrl+Enter."""
    workspace = page.locator("#queue-workspace")
    expect(page.locator("#answer-panel")).to_be_focused()
    keys.press(overall)
    expect(page.locator('fieldset[data-question="overall"] .answer-status')).to_have_text("saved")
    keys.press("j", ratings[0])  # an item starts on message #0: j goes to #1, the first answer
    rating = page.locator('#message-1 fieldset[data-question="helpful"]')
    expect(rating).to_be_focused()
    # Saved before the next key: the live server's threads share one in-memory SQLite
    # connection in tests, where two writes at once fail (a real database makes one wait).
    expect(rating.locator(".answer-status")).to_have_text("saved")
    keys.press("j", "j", ratings[1])  # message #3
    expect(
        page.locator('#message-3 fieldset[data-question="helpful"] .answer-status')
    ).to_have_text("saved")
    if tag:
        # The words to tag are selected (as caret browsing and Shift+arrows would), then the
        # tag's key: select_text sets the selection by script, not with the pointer.
        page.locator("#message-3 .body").select_text()
        keys.press("w")
        expect(page.locator("#message-3 .body mark.span-tag")).to_have_count(1)
        settled(page)
    number = workspace.get_attribute("data-assignment")
    keys.press("Control+Enter")
    expect(workspace).not_to_have_attribute("data-assignment", number or "")
    settled(page)


def test_an_annotators_day_with_the_keyboard_alone(
    page, live_server, day, screenshot, console_errors
):
    page.add_init_script(COUNT_MOUSE)
    page.set_viewport_size({"width": 1280, "height": 800})
    keys = Keys(page)

    # Annotator 1: all twenty items.
    log_in(page, live_server, "ann1")
    page.goto(f"{live_server.url}/queues/{day.pk}/")
    expect(page.locator('[data-action="start"]')).to_be_focused()
    keys.press("Enter")
    expect(page.locator("#queue-workspace")).to_have_attribute("data-state", "claimed")
    settled(page)
    started = keys.count
    for n in range(ITEMS):
        if n == 0:  # the screenshots: an item half done, at a desk and on a phone
            keys.press("1")
            expect(page.locator("#questions .answer-status")).to_have_text("saved")
            keys.press("j", "4")
            expect(page.locator("#message-1 .answer-status")).to_have_text("saved")
            page.locator("#message-3 .body").select_text()
            keys.press("w")
            settled(page)
            screenshot("queue-1280")
            page.set_viewport_size({"width": 390, "height": 844})
            page.evaluate("window.scrollTo(0, 0)")
            screenshot("queue-390")
            page.set_viewport_size({"width": 1280, "height": 800})
            keys.press("Escape")  # back to the answer panel
            keys.press("j", "j", "5")  # message #3
            number = page.locator("#queue-workspace").get_attribute("data-assignment")
            keys.press("Control+Enter")
            expect(page.locator("#queue-workspace")).not_to_have_attribute(
                "data-assignment", number or ""
            )
            settled(page)
            continue
        work_one_item(page, keys, overall="1", ratings=("4", "5"), tag=n % 2 == 0)
    per_item_first = (keys.count - started) / ITEMS
    expect(page.get_by_test_id("queue-progress")).to_have_text(f"{ITEMS} / {ITEMS} done by you")
    expect(page.locator("#queue-workspace")).to_contain_text("Nothing left to do")
    assert mouse_events(page) == 0

    # Annotator 2: the first six, calling the first three bad and rating lower.
    log_in(page, live_server, "ann2")
    page.goto(f"{live_server.url}/queues/{day.pk}/")
    keys.press("Enter")
    expect(page.locator("#queue-workspace")).to_have_attribute("data-state", "claimed")
    settled(page)
    for n in range(SECOND_DOES):
        disagree = n < DISAGREE_ON
        work_one_item(
            page,
            keys,
            overall="2" if disagree else "1",
            ratings=("2", "5") if disagree else ("4", "5"),
            tag=n % 2 == 0,
        )
    assert mouse_events(page) == 0
    second = get_user_model().objects.get(username="ann2")
    done = QueueAssignment.objects.filter(annotator=second, state=AssignmentState.SUBMITTED)
    assert done.count() == SECOND_DOES
    overall = dict(
        Annotation.objects.filter(annotator=second, question="overall").values_list(
            "transcript__title", "value"
        )
    )
    assert [overall[f"Support chat {n + 1}"] for n in range(SECOND_DOES)] == ["bad"] * 3 + [
        "good"
    ] * 3

    # The reviewer: on each of the three disagreements, approve annotator 1's work (a) and
    # reject annotator 2's with a comment (r, the comment, Ctrl+Enter); then the next item,
    # where they agree, is approved twice.
    log_in(page, live_server, "rev")
    page.goto(f"{live_server.url}/queues/{day.pk}/review/")
    workspace = page.locator("#review-workspace")
    expect(workspace.locator("tr[data-disagree] .disagree")).to_be_visible()
    expect(workspace.locator("#message-1 .review-message[data-disagree]")).to_be_visible()
    expect(workspace.locator("#message-1")).to_contain_text("2 / 5")
    expect(workspace.locator("td", has_text="Bad")).to_have_count(1)  # a label, not "bad"
    screenshot("review-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    page.evaluate("window.scrollTo(0, 0)")
    screenshot("review-390")
    page.set_viewport_size({"width": 1280, "height": 800})
    review_keys = keys.count
    for _ in range(DISAGREE_ON):
        item = workspace.get_attribute("data-item")
        expect(workspace.locator(".submissions li[aria-current]")).to_contain_text("ann1")
        keys.press("a")
        expect(workspace).to_contain_text("approved the work of ann1")
        expect(workspace.locator(".submissions li[aria-current]")).to_contain_text("ann2")
        settled(page)
        keys.press("r")
        expect(page.locator("#review-comment")).to_be_focused()
        keys.type("It is a good conversation.")
        keys.press("Control+Enter")
        expect(workspace).to_contain_text("rejected the work of ann2")
        expect(workspace).not_to_have_attribute("data-item", item or "")
        settled(page)
    expect(workspace.locator("[data-disagree]")).to_have_count(0)  # item 4: they agree
    keys.press("a")
    expect(workspace).to_contain_text("approved the work of ann1")
    settled(page)
    keys.press("a")
    expect(workspace).to_contain_text("approved the work of ann2")
    settled(page)
    # n goes on without deciding: item 6 stays waiting.
    item = workspace.get_attribute("data-item")
    keys.press("n")
    expect(workspace).not_to_have_attribute("data-item", item or "")
    per_item_review = (keys.count - review_keys) / (DISAGREE_ON + 1)
    assert mouse_events(page) == 0

    titles = [f"Support chat {n + 1}" for n in range(5)]
    statuses = dict(Transcript.objects.filter(title__in=titles).values_list("title", "status"))
    assert [statuses[t] for t in titles] == [Status.REJECTED] * 3 + [Status.APPROVED] + [
        Status.IN_REVIEW
    ]
    assert QueueAssignment.objects.filter(state=AssignmentState.REJECTED).count() == DISAGREE_ON
    assert console_errors == []
    print(
        f"\nkeystrokes per item: annotating {per_item_first:.1f}, "
        f"reviewing {per_item_review:.1f} (a 26-character comment included on 3 of 4)"
    )
