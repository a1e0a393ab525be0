"""Pairwise review in a real browser: an annotator answers 5 pairwise items with the keyboard
only (1 / 2 / = pick, Ctrl+Enter submits), each item's candidates in an order of their own,
recorded with the answer; on a phone the candidates stack."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor import alternatives, queues
from editor.labels import create_label_schema
from editor.models import Annotation, AnnotationState, Dataset, Membership, Role
from editor.storage.create import create_transcript
from tests.browser.conftest import settled

PASSWORD = "a-long-test-password"
CITIES = ["Paris", "Rome", "Madrid", "Berlin", "Lisbon"]


@pytest.fixture
def queue(transactional_db):
    dataset = Dataset.objects.create(name="Prefs", slug="prefs")
    users = {}
    for name, role in (("ann", Role.ANNOTATOR), ("cur", Role.CURATOR)):
        users[name] = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=users[name], dataset=dataset, role=role)
    transcripts = []
    for city in CITIES:
        messages = [
            {"role": "system", "content": "Answer in one sentence.", "end": "end"},
            {"role": "user", "content": "Hello!", "end": "end"},
            {"role": "assistant", "content": "Hi, how can I help?", "end": "end"},
            {"role": "user", "content": f"Which country is {city} in?", "end": "end"},
            {"role": "assistant", "channel": "final", "content": f"{city}? Europe.", "end": "end"},
        ]
        transcript = create_transcript(
            dataset,
            author=users["cur"],
            canonical={"spec": "openchatml-2.2", "messages": messages},
            title=city,
        )
        alternatives.add_alternative(
            transcript,
            4,
            [{"role": "assistant", "channel": "final", "content": f"{city} is in {city}land."}],
            source="hand",
            author=users["cur"],
        )
        transcripts.append(transcript)
    create_label_schema(
        dataset,
        author=users["cur"],
        name="Preference",
        questions=[{"key": "better", "kind": "pairwise", "prompt": "Which answer is better?"}],
    )
    return queues.create_queue(dataset, transcripts, name="Compare", author=users["cur"])


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def shown_order(page) -> list[int]:
    return [
        int(pk)
        for pk in page.locator("[data-alternative]").evaluate_all(
            "(els) => els.map((el) => el.dataset.alternativeId)"
        )
    ]


def test_an_annotator_answers_5_pairwise_items_with_the_keyboard(
    page, live_server, queue, screenshot, console_errors
):
    log_in(page, live_server, "ann")
    page.goto(f"{live_server.url}/queues/{queue.pk}/")
    settled(page)
    expect(page.locator("[data-action='start']")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#queue-workspace")).to_have_attribute("data-state", "claimed")

    keys = ["1", "2", "=", "2", "1"]
    shown = []
    for number, key in enumerate(keys):
        settled(page)
        candidates = page.locator("[data-alternative]")
        expect(candidates).to_have_count(2)
        expect(candidates.nth(0)).to_contain_text("1")
        expect(candidates.nth(1)).to_contain_text("2")
        # The prompt: its last messages, the earlier ones behind "show all".
        expect(page.locator(".pairwise-prompt")).to_contain_text("Which country is")
        expect(page.locator(".pairwise-earlier summary")).to_contain_text("Show all")
        shown.append(shown_order(page))
        if number == 0:
            screenshot("item-1")
            page.set_viewport_size({"width": 390, "height": 844})
            first, second = (candidates.nth(i).bounding_box() for i in (0, 1))
            assert second["y"] >= first["y"] + first["height"]  # stacked on a phone
            screenshot("phone")
            page.set_viewport_size({"width": 1280, "height": 900})
            first, second = (candidates.nth(i).bounding_box() for i in (0, 1))
            assert second["x"] > first["x"] and second["y"] == first["y"]  # side by side
        page.keyboard.press(key)
        status = page.locator("fieldset[data-kind='pairwise'] .answer-status")
        expect(status).to_have_text("saved")
        if number == 2:
            # A reason, typed: the number keys and = are text there, not answers.
            page.locator("fieldset[data-kind='pairwise'] textarea[name='reason']").focus()
            page.keyboard.type("Both say it = 1 way.")
            expect(page.locator("input[name='choice'][value='tie']")).to_be_checked()
        page.keyboard.press("Control+Enter")
        done = f"{number + 1} / 5 done by you"
        expect(page.get_by_test_id("queue-progress")).to_have_text(done)
    expect(page.locator("#queue-workspace")).to_contain_text("Nothing left to do")
    screenshot("done")

    answers = {
        a.transcript.title: a
        for a in Annotation.objects.select_related("transcript").filter(question="better")
    }
    assert len(answers) == 5
    assert all(a.state == AnnotationState.SUBMITTED for a in answers.values())
    for city, key, order in zip(CITIES, keys, shown, strict=True):
        value = answers[city].value
        assert value["order"] == order  # the order shown, recorded
        assert value["choice"] == ("tie" if key == "=" else order[int(key) - 1])
        assert answers[city].message_index == 4
    assert answers["Madrid"].value["reason"] == "Both say it = 1 way."
    # Each in the annotator's own order (seeded: the same on a reload).
    annotator = answers["Paris"].annotator
    for city, order in zip(CITIES, shown, strict=True):
        transcript = answers[city].transcript
        key = alternatives.item_key(transcript, 4)
        assert order == alternatives.shuffled_order(order, annotator.pk, key)
    assert console_errors == []


def test_a_curator_adds_and_promotes_an_alternative_on_the_transcript_page(
    page, live_server, queue, screenshot, console_errors
):
    transcript = queue.items.get(position=1).transcript  # Rome: its alternative was added
    log_in(page, live_server, "cur")
    page.goto(f"{live_server.url}/transcripts/{transcript.pk}/")
    settled(page)
    panel = page.locator("#alternatives-4")
    expect(panel.locator("summary")).to_have_text("2 alternatives")
    panel.locator("summary").click()
    expect(panel.locator("[data-alternative]")).to_have_count(2)
    panel.locator("textarea[name='messages']").fill("Rome is the capital of Italy.")
    panel.locator("[data-action='add-alternative']").click()
    expect(page.locator("#alternatives-4 summary")).to_have_text("3 alternatives")
    settled(page)
    screenshot("panel")

    added = page.locator("#alternatives-4 [data-alternative]").nth(2)
    expect(added).to_contain_text("Rome is the capital of Italy.")
    added.locator("[data-action='promote']").click()
    expect(page.locator("#message-4 .body")).to_contain_text("Rome is the capital of Italy.")
    expect(page.locator("#version-label")).to_have_text("version 2")
    settled(page)
    page.locator("#alternatives-4 summary").click()
    current = page.locator("#alternatives-4 [data-alternative]", has_text="as it stands")
    expect(current).to_have_count(1)
    expect(current).to_contain_text("Rome is the capital of Italy.")
    assert console_errors == []
