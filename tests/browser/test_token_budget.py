"""Token budgets (issue 32): a curator names the dataset's tokenizer and context length,
filters the dataset to the transcripts over 4,096 tokens, sorts by tokens, and sees each
message's count and the total against the context length on a transcript."""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from bench.bench_editor import long_transcript
from editor import formats
from editor.models import Dataset, Membership, Role, Transcript
from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcripts
from tests.browser.conftest import settled
from tests.editor.samples import conversation


@pytest.fixture
def curator_page(live_server, page, transactional_db):
    users = get_user_model().objects
    curator = users.create_user("cur", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Support chats", slug="support")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    short = TranscriptContent.from_text(conversation())
    # About 6,000 tokens under cl100k_base: over a 4,096 context.
    long = TranscriptContent.from_text(long_transcript(formats, 60, 400))
    create_transcripts(
        dataset,
        [NewTranscript(short, title=f"short {i}") for i in range(5)]
        + [NewTranscript(long, title=f"long {i}") for i in range(2)],
        author=curator,
    )
    page.goto(f"{live_server.url}/accounts/login/?next=/datasets/support/tokenizer/")
    page.get_by_label("Username").fill("cur")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    return page


def test_filter_to_transcripts_over_4096_tokens(curator_page, live_server, screenshot):
    page = curator_page
    expect(page.get_by_test_id("no-tokenizer")).to_be_visible()
    form = page.get_by_test_id("tokenizer-form")
    form.get_by_label("tiktoken: cl100k_base").check()
    form.get_by_label("Context length (tokens)").fill("4096")
    form.get_by_role("button", name="Save").click()
    expect(page.locator("[data-key='tiktoken:cl100k_base']")).to_be_visible()
    expect(page.get_by_text("4096 tokens")).to_be_visible()

    page.get_by_role("link", name="Support chats").click()
    rows = page.locator("#transcript-table tr[data-transcript]")
    expect(rows).to_have_count(7)
    # Every row counted (the recount ran when the tokenizer was set).
    expect(page.locator("#transcript-table td[data-token-count]")).to_have_count(7)
    filters = page.get_by_test_id("filters")
    filters.get_by_label("Over N tokens").fill("4096")
    filters.get_by_role("button", name="Filter").click()
    settled(page)
    expect(page.get_by_test_id("match-count")).to_contain_text("2 transcripts")
    expect(rows).to_have_count(2)
    expect(page).to_have_url(re.compile(r"tokens_over=4096"))
    for count in page.locator("#transcript-table td[data-token-count]").all():
        assert int(count.get_attribute("data-token-count")) > 4096
    screenshot("over-4096")

    page.locator("#transcript-table").get_by_role("link", name="Tokens").click()
    settled(page)
    expect(page).to_have_url(re.compile(r"sort=-tokens"))

    rows.first.get_by_role("link").first.click()
    budget = page.get_by_test_id("token-budget")
    expect(budget).to_have_attribute("data-over", "true")
    expect(budget).to_contain_text("/ 4,096 tokens")
    messages = page.locator("article.message[data-tokens]")
    expect(messages.first).to_be_visible()
    first = messages.first.get_attribute("data-tokens")
    assert int(first) > 0
    expect(messages.first.locator(".tokens")).to_have_text(f"{first} tok")
    stored = Transcript.objects.get(title="long 0").token_counts
    assert int(budget.get_attribute("data-token-total")) == stored["total"]
    screenshot("transcript-budget")
