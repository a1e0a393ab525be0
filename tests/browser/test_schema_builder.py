"""The label schema builder in a real browser: a curator starts from a template, adds a
question, watches the preview follow, saves; then makes a queue that asks only that schema,
and the annotator sees only its questions in the queue."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.labels import create_label_schema
from editor.models import Dataset, LabelSchema, Membership, ReviewQueue, Role
from editor.storage.create import create_transcript
from tests.browser.conftest import settled
from tests.editor.samples import conversation

PASSWORD = "a-long-test-password"


@pytest.fixture
def dataset(transactional_db):
    dataset = Dataset.objects.create(name="Support", slug="support")
    for name, role in (("ann", Role.ANNOTATOR), ("cur", Role.CURATOR)):
        user = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=user, dataset=dataset, role=role)
    curator = get_user_model().objects.get(username="cur")
    for n in range(2):
        create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"Chat {n}"
        )
    # a schema the new queue will not ask
    create_label_schema(
        dataset,
        author=curator,
        name="Legacy",
        questions=[{"key": "legacy_note", "kind": "text", "prompt": "Legacy note"}],
    )
    return dataset


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def test_build_a_schema_and_a_queue_that_asks_only_it(
    page, live_server, dataset, screenshot, console_errors
):
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in(page, live_server, "cur")
    page.goto(f"{live_server.url}/datasets/support/labels/")
    settled(page)

    # one click: a starting template fills the form, and the preview shows its questions
    page.locator('[data-starter="helpfulness"]').click()
    expect(page.locator('[data-question-row="0"]')).to_have_attribute("data-kind", "rating")
    expect(page.locator("#schema-name")).to_have_value("Helpfulness rating")
    preview = page.get_by_test_id("schema-preview")
    expect(
        preview.locator('fieldset[data-question="helpfulness"] input[type=radio]')
    ).to_have_count(5)
    settled(page)

    # add a question; it previews once it holds, and follows what is typed
    page.locator('[data-add="choice"]').click()
    row = page.locator('[data-question-row="2"]')
    expect(row).to_have_attribute("data-kind", "choice")
    expect(preview.locator('[data-preview="2"] .preview-pending')).to_be_visible()  # no prompt yet
    settled(page)
    row.locator("input[name=q2-prompt]").fill("Did the assistant stay on topic?")
    row.locator("input[name=q2-key]").fill("on_topic")
    row.locator("textarea").fill("yes | On topic | 1\npartly | Partly | 2\nno | Off topic | 3")
    on_topic = preview.locator('fieldset[data-question="on_topic"]')
    expect(on_topic.locator("legend")).to_have_text("Did the assistant stay on topic?")
    expect(on_topic.locator("label.option")).to_have_count(3)
    expect(on_topic).to_contain_text("Off topic")

    # a mistake is named on its question as it is typed
    row.locator("input[name=q2-key]").fill("On Topic")
    expect(page.locator("#q2-problems")).to_contain_text("key")
    row.locator("input[name=q2-key]").fill("on_topic")
    expect(page.locator("#q2-problems li")).to_have_count(0)
    # the JSON tab says the same
    page.locator("details.schema-json summary").click()
    expect(page.locator("#schema-json")).to_have_value(
        __import__("re").compile(r'"key": "on_topic"')
    )
    screenshot("builder-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot("builder-390")
    page.set_viewport_size({"width": 1280, "height": 800})

    # move it to the top, then save
    settled(page)
    row.locator('[data-action="up"]').click()
    settled(page)
    page.locator('[data-question-row="1"] [data-action="up"]').click()
    expect(page.locator('[data-question-row="0"]')).to_have_attribute("data-kind", "choice")
    settled(page)
    page.locator('[data-action="create-schema"]').click()
    expect(page.locator(".flash")).to_contain_text("Schema created.")
    schema = LabelSchema.objects.get(name="Helpfulness rating")
    keys = [q["key"] for q in schema.current_version.questions]
    assert keys == ["on_topic", "helpfulness", "helpfulness_note"]
    expect(page.get_by_test_id("schema-form")).to_be_visible()  # the builder stays on it

    # a queue that asks only the new schema
    page.goto(f"{live_server.url}/datasets/support/")
    page.locator("details.create-queue summary").click()
    form = page.get_by_test_id("queue-form")
    form.locator("#queue-name").fill("Helpfulness pass")
    form.get_by_label("Helpfulness rating").check()
    screenshot("queue-form")
    form.get_by_role("button", name="Create the queue").click()
    queue = ReviewQueue.objects.get(name="Helpfulness pass")
    assert list(queue.schemas.all()) == [schema]
    page.goto(f"{live_server.url}/datasets/support/#queues")
    asks = page.locator(f'[data-queue="{queue.pk}"] [data-testid="queue-asks"]')
    expect(asks).to_have_text("Asks: Helpfulness rating v1")

    log_in(page, live_server, "ann")
    page.goto(f"{live_server.url}/queues/{queue.pk}/")
    page.locator('[data-action="start"]').click()
    workspace = page.locator("#queue-workspace")
    expect(workspace).to_have_attribute("data-state", "claimed")
    expect(workspace.locator('fieldset[data-question="on_topic"]')).to_be_visible()
    expect(workspace.locator('fieldset[data-question="helpfulness"]')).to_be_visible()
    expect(workspace.locator('fieldset[data-question="legacy_note"]')).to_have_count(0)
    assert console_errors == []
