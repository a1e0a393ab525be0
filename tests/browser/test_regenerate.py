"""Regenerate in the browser, against the local OpenAI-compatible server: the streamed answer
reaches the page piece by piece, then Keep leaves it an alternative and Accept makes it the
turn (one revision). And the curator's Models page: add a connection, test it."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.models import Alternative, ModelConnection, Transcript
from editor.presentation.transcript_view import PAGE_SIZE
from editor.storage.create import create_transcript
from tests.browser.conftest import settled
from tests.browser.geography import geography, log_in
from tests.browser.test_accessibility import serious_violations
from tests.support.openai_server import Reply


@pytest.fixture
def setup(transactional_db, openai_server):
    world = geography(answer="Sydney.")
    return world.dataset, world.transcript


def test_streamed_answer_then_keep_then_accept(
    live_server, page, setup, openai_server, screenshot, console_errors
):
    dataset, transcript = setup
    ModelConnection.objects.create(
        dataset=dataset, name="local", base_url=openai_server.base_url, model="test-model"
    )
    openai_server.reply(
        Reply(
            content="Canberra is the capital of Australia.",
            reasoning="Not Sydney.",
            chunk_delay=0.25,
        ),
        Reply(content="Canberra."),
    )
    log_in(page, live_server, "ann", f"/transcripts/{transcript.pk}/")
    settled(page)

    message = page.locator("#message-1")
    message.locator('[data-action="menu"] summary').click()
    message.locator('[data-action="regenerate"]').click()
    box = page.locator('[data-regenerate-box="1"]')
    text = box.locator("[data-regenerate-text]")
    # The first words are on the page while the model is still answering.
    expect(text).to_contain_text("Canberra")
    assert box.get_attribute("aria-busy") == "true"
    assert "Australia." not in text.inner_text()
    expect(text).to_have_text("Canberra is the capital of Australia.")
    expect(box.locator('[data-action="keep-regenerated"]')).to_be_visible()
    expect(box).to_have_attribute(
        "data-alternative", str(Alternative.objects.get(source="model").pk)
    )
    expect(box.locator("[data-regenerate-reasoning]")).to_have_text("Not Sydney.")
    screenshot("streamed")
    assert serious_violations(page) == []

    box.locator('[data-action="keep-regenerated"]').click()
    expect(box).to_have_attribute("data-kept", "true")
    assert Alternative.objects.filter(source="model").count() == 1
    assert Transcript.objects.get(pk=transcript.pk).version == transcript.version

    message.locator('[data-action="menu"] summary').click()
    message.locator('[data-action="regenerate"]').click()
    box = page.locator('[data-regenerate-box="1"]')
    expect(box.locator("[data-regenerate-text]")).to_have_text("Canberra.")
    box.locator('[data-action="accept-regenerated"]').click()
    page.wait_for_load_state("load")
    expect(page.locator("#message-1")).to_contain_text("Canberra.")
    saved = Transcript.objects.get(pk=transcript.pk)
    assert saved.version == transcript.version + 1
    assert saved.stored_messages()[1].content == "Canberra."
    assert Alternative.objects.filter(source="model").count() == 2
    settled(page)
    screenshot("accepted")
    assert console_errors == []


def test_a_failing_model_shows_its_error(live_server, page, setup, openai_server, console_errors):
    dataset, transcript = setup
    ModelConnection.objects.create(
        dataset=dataset, name="local", base_url=openai_server.base_url, model="test-model"
    )
    openai_server.reply(Reply(status=500, error_message="CUDA out of memory"))
    log_in(page, live_server, "ann", f"/transcripts/{transcript.pk}/")
    settled(page)
    page.locator('#message-1 [data-action="menu"] summary').click()
    page.locator('#message-1 [data-action="regenerate"]').click()
    alert = page.locator('[data-regenerate-box="1"] [role="alert"]')
    expect(alert).to_contain_text("CUDA out of memory")
    expect(alert).to_have_attribute("data-code", "model-call-failed")
    assert not Alternative.objects.exists()


def test_no_connection_no_regenerate(live_server, page, setup):
    _, transcript = setup
    log_in(page, live_server, "ann", f"/transcripts/{transcript.pk}/")
    expect(page.locator("#message-1")).to_be_visible()
    expect(page.locator('[data-action="regenerate"]')).to_have_count(0)


def test_curator_adds_and_tests_a_connection(
    live_server, page, setup, openai_server, screenshot, console_errors
):
    openai_server.reply("Hello from the test model.")
    log_in(page, live_server, "cur", "/datasets/geo/")
    page.locator('[data-action="models"]').click()
    form = page.get_by_test_id("model-connection-form")
    form.get_by_label("Name").fill("local")
    form.get_by_label("Base URL").fill(openai_server.base_url)
    form.get_by_label("Model").fill("test-model")
    form.get_by_label("Key's environment variable").fill("OCM_BROWSER_TEST_KEY")
    form.get_by_role("button", name="Add").click()
    row = page.locator("tr[data-model-connection]")
    expect(row).to_have_count(1)
    expect(row.get_by_test_id("key-unset")).to_be_visible()
    settled(page)
    row.get_by_role("button", name="Test connection").click()
    result = row.get_by_test_id("connection-test")
    expect(result).to_contain_text("Hello from the test model.")
    expect(result).to_have_attribute("data-ok", "true")
    screenshot("models-page")
    assert serious_violations(page) == []
    page.reload()
    expect(
        page.locator("tr[data-model-connection]").get_by_test_id("connection-tokens")
    ).not_to_have_text("0 / 0")
    # The dataset's total, by purpose: the test's request.
    usage = page.get_by_test_id("model-usage")
    expect(usage.locator('tr[data-purpose="test"] th')).to_have_text("Test connection")
    expect(usage.get_by_test_id("dataset-tokens-in")).not_to_have_text("0")
    screenshot("models-usage")
    assert serious_violations(page) == []
    assert console_errors == []


def test_regenerate_on_an_assistant_message_of_a_later_page(
    live_server, page, setup, openai_server, screenshot, console_errors
):
    """The first page of a long transcript holds no assistant message: the Regenerate of one
    that a later page brings (swapped in as the list scrolls) still streams its answer."""
    dataset, _ = setup
    questions = PAGE_SIZE + 5
    text = "".join(
        f"<|start|>user<|message|>Question {n}: what is the capital of country {n}?<|end|>\n"
        for n in range(questions)
    ) + ("<|start|>assistant<|channel|>final<|message|>Sydney.<|end|>\n")
    long = create_transcript(
        dataset,
        author=get_user_model().objects.get(username="ann"),
        text=text,
        spec="openchatml-2.2",
        title="Long",
    )
    ModelConnection.objects.create(
        dataset=dataset, name="local", base_url=openai_server.base_url, model="test-model"
    )
    openai_server.reply(Reply(content="Canberra is the capital of Australia.", chunk_delay=0.1))
    log_in(page, live_server, "ann", f"/transcripts/{long.pk}/")
    settled(page)
    later = page.locator(f"#message-{questions}")
    expect(later).to_have_count(0)  # not on the first page
    page.locator(".loader-after").scroll_into_view_if_needed()
    expect(later).to_be_visible()
    settled(page)

    later.locator('[data-action="menu"] summary').click()
    later.locator('[data-action="regenerate"]').click()
    box = page.locator(f'[data-regenerate-box="{questions}"]')
    expect(box.locator("[data-regenerate-text]")).to_contain_text("Canberra")
    expect(box.locator("[data-regenerate-text]")).to_have_text(
        "Canberra is the capital of Australia."
    )
    expect(box.locator('[data-action="keep-regenerated"]')).to_be_visible()
    expect(box).to_have_attribute(
        "data-alternative", str(Alternative.objects.get(source="model").pk)
    )
    sent = openai_server.bodies()[0]["messages"]
    assert len(sent) == questions and sent[-1]["content"].startswith(f"Question {questions - 1}")
    screenshot("later-page")
    assert console_errors == []
