"""A judge's suggestions in the browser: on the transcript page's question panel the model's
answer is pre-selected and marked ("Suggested by …", data-source="model"), and one key (y)
makes each one the annotator's own answer."""

import pytest
from playwright.sync_api import expect

from editor.labels import create_label_schema
from editor.models import Annotation, Suggestion
from tests.browser.conftest import settled
from tests.browser.geography import geography, log_in
from tests.support.judging import QUESTIONS
from tests.support.label_questions import message_schema


@pytest.fixture
def setup(transactional_db):
    world = geography(answer="Canberra.")
    transcript = world.transcript
    schema = create_label_schema(
        world.dataset, author=world.curator, name="Quality", questions=QUESTIONS
    )
    for question, value in (("helpful", "yes"), ("quality", 4)):
        Suggestion.objects.create(
            transcript=transcript,
            schema_version=schema.current_version,
            question=question,
            value=value,
            rationale="The answer is right and short.",
            model="judge-model",
        )
    return transcript


def test_suggestions_preselected_marked_and_accepted_with_y(
    live_server, page, setup, screenshot, console_errors
):
    transcript = setup
    log_in(page, live_server, "ann", f"/transcripts/{transcript.pk}/")
    settled(page)

    helpful = page.locator('fieldset[data-question="helpful"]')
    marked = helpful.locator('[data-suggestion][data-source="model"]')
    expect(marked).to_contain_text("Suggested by judge-model")
    expect(helpful.locator('input[value="yes"]')).to_be_checked()
    quality = page.locator('fieldset[data-question="quality"]')
    expect(quality.locator('input[value="4"]')).to_be_checked()
    expect(page.locator('[data-action="accept-suggestion"]')).to_have_count(2)
    assert not Annotation.objects.exists()  # shown, not anyone's answer yet
    screenshot("suggestions-preselected")

    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("y")
    expect(page.locator("[data-suggestion].accepted")).to_have_count(2)
    expect(page.locator('[data-action="accept-suggestion"]')).to_have_count(0)
    settled(page)
    answers = dict(Annotation.objects.values_list("question", "value"))
    assert answers == {"helpful": "yes", "quality": 4}
    assert set(Annotation.objects.values_list("annotator__username", flat=True)) == {"ann"}
    assert set(Suggestion.objects.values_list("accepted_by__username", flat=True)) == {"ann"}
    expect(page.locator('fieldset[data-question="helpful"] input[value="yes"]')).to_be_checked()
    screenshot("suggestions-accepted")


def test_a_suggestion_about_a_message_shown_on_it_and_accepted(
    live_server, page, transactional_db, screenshot, console_errors
):
    """A judge of a question about each message leaves its answer on that message's card."""
    world = geography(answer="Sydney.")
    schema = message_schema(world.dataset, world.curator)  # "correct" about each answer
    Suggestion.objects.create(
        transcript=world.transcript,
        schema_version=schema.current_version,
        question="correct",
        message_index=1,
        value="no",
        rationale="The capital is Canberra.",
        model="judge-model",
    )
    log_in(page, live_server, "ann", f"/transcripts/{world.transcript.pk}/")
    settled(page)
    asked = page.locator('#message-1 fieldset[data-question="correct"]')
    expect(asked.locator('[data-suggestion][data-source="model"]')).to_contain_text(
        "Suggested by judge-model"
    )
    expect(asked.locator('input[value="no"]')).to_be_checked()
    expect(page.locator('#message-0 fieldset[data-question="correct"]')).to_have_count(0)
    screenshot("message-suggestion")

    asked.locator('[data-action="accept-suggestion"]').click()
    expect(page.locator("#message-1 [data-suggestion].accepted")).to_have_count(1)
    settled(page)
    annotation = Annotation.objects.get()
    assert (annotation.message_index, annotation.value, annotation.annotator.username) == (
        1,
        "no",
        "ann",
    )
    assert console_errors == []
