"""Errors at scale (issue 31, item 10), as an annotator meets them in the browser: the codes'
facet and each row's codes on the dataset page, the export preview naming the transcripts
behind each loss without touching the table, history diffs with the text of inserted and
deleted messages and moves as moves, quick fixes in the edit form and in raw mode, and live
diagnostics placed in the field being typed."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor import editing
from editor.models import Dataset, Membership, Role, Transcript
from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcript, create_transcripts
from tests.browser.conftest import SCREENSHOTS, settled
from tests.editor.samples import conversation

PASSWORD = "a-long-test-password"
CALL_WITHOUT_ID = (
    "version: 2.2\n"
    "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{}<|call|>\n"
    "<|start|>tool name=functions.f<|channel|>commentary<|message|>{}<|end|>"
)


@pytest.fixture
def ann(transactional_db):
    dataset = Dataset.objects.create(name="Support chats", slug="support")
    user = get_user_model().objects.create_user("ann", password=PASSWORD)
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    return dataset, user


@pytest.fixture
def mixed(ann):
    """12 clean transcripts, 7 cut short (E-STREAM-TRUNCATED, W-HEADER-MISSING) and 3 calls
    without a call id (E-CALL-ID-MISSING)."""
    dataset, user = ann
    clean = TranscriptContent.from_text(conversation(turns=2))
    body = conversation(turns=2).split("---\n", 2)[-1].rstrip()
    cut = TranscriptContent.from_text(body[: body.rfind("<|")])
    call = TranscriptContent.from_text(CALL_WITHOUT_ID)
    items = [NewTranscript(clean, title=f"clean {n}") for n in range(12)]
    items += [NewTranscript(cut, title=f"cut {n}") for n in range(7)]
    items += [NewTranscript(call, title=f"call {n}") for n in range(3)]
    create_transcripts(dataset, items, author=user)
    return dataset


def log_in(page, live_server, next_path: str):
    page.goto(f"{live_server.url}/accounts/login/?next={next_path}")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_the_codes_facet_counts_filters_and_rows_show_codes(
    page, live_server, mixed, screenshot, console_errors
):
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in(page, live_server, "/datasets/support/")
    facet = page.get_by_test_id("code-facet")
    expect(facet.locator('[data-code="E-STREAM-TRUNCATED"]')).to_contain_text("7")
    expect(facet.locator('[data-code="E-CALL-ID-MISSING"]')).to_contain_text("3")
    rows = page.locator("#transcript-table tr[data-transcript]")
    expect(rows).to_have_count(22)
    # Each row names its codes, not only "1 error".
    cut_row = rows.filter(has_text="cut 0")
    expect(cut_row.locator('.code-badge[data-code="E-STREAM-TRUNCATED"]')).to_be_visible()
    expect(rows.filter(has_text="clean 0").locator(".code-badge")).to_have_count(0)
    screenshot("facet-desktop")

    settled(page)
    facet.locator('[data-code="E-CALL-ID-MISSING"]').click()
    expect(rows).to_have_count(3)
    expect(page).to_have_url(re.compile(r"code=E-CALL-ID-MISSING"))
    expect(page.get_by_test_id("filters").get_by_label("Diagnostic code")).to_have_value(
        "E-CALL-ID-MISSING"
    )
    # The facet now counts within the filtered set; the chosen code is marked.
    expect(facet.locator('[data-code="E-STREAM-TRUNCATED"]')).to_have_count(0)
    expect(facet.locator('[aria-current="true"]')).to_have_attribute(
        "data-code", "E-CALL-ID-MISSING"
    )
    settled(page)
    facet.locator('[aria-current="true"]').click()  # again: every code
    expect(rows).to_have_count(22)

    page.set_viewport_size({"width": 390, "height": 844})
    expect(facet.locator('[data-code="E-STREAM-TRUNCATED"]')).to_be_visible()
    screenshot("facet-phone")
    # The facet and the first rows as the phone shows them (the full page is very tall).
    page.get_by_test_id("match-count").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "test_errors_at_scale-facet-phone-viewport.png"))
    assert console_errors == []


def test_the_export_preview_names_the_transcripts_and_leaves_the_table_alone(
    page, live_server, mixed, console_errors
):
    log_in(page, live_server, "/datasets/support/")
    filters = page.get_by_test_id("filters")
    filters.get_by_label("Diagnostic code").fill("E-STREAM-TRUNCATED")
    filters.get_by_label("Diagnostic code").press("Enter")
    rows = page.locator("#transcript-table tr[data-transcript]")
    expect(rows).to_have_count(7)
    url = page.url
    settled(page)

    export = page.get_by_test_id("export-form")
    export.get_by_label("Spec").select_option("openai-messages")
    losses = page.get_by_test_id("export-loss-summary")
    expect(losses).to_be_visible()
    # A loss of many transcripts names five, linked, and counts the others.
    many = losses.locator("li", has=page.get_by_test_id("loss-more")).first
    expect(many.locator("a[data-transcript]")).to_have_count(5)
    expect(many.get_by_test_id("loss-more")).to_have_text(re.compile(r"and \d+ more"))
    expect(many.locator("a[data-transcript]").first).to_have_attribute(
        "href", re.compile(r"^/transcripts/\d+/$")
    )
    settled(page)
    page.get_by_test_id("export-check").click()
    settled(page)
    expect(losses).to_be_visible()
    # The table and the address keep their filters.
    assert page.url == url
    expect(rows).to_have_count(7)
    assert console_errors == []


def test_history_shows_the_text_of_inserted_and_deleted_messages_and_moves(
    page, live_server, ann, console_errors
):
    dataset, user = ann
    talk = create_transcript(
        dataset, text=conversation(turns=3), spec="openchatml-2.2", author=user, title="Talk"
    )
    editing.move_message(talk, 0, 2, expected_version=1, author=user)
    log_in(page, live_server, f"/transcripts/{talk.pk}/history/")
    moved = page.locator('[data-change="moved"]')
    expect(moved).to_have_count(1)
    expect(moved.get_by_test_id("moved")).to_have_text("message #0 moved to #2")
    expect(page.locator('[data-change="added"], [data-change="removed"]')).to_have_count(0)

    editing.delete_message(
        Transcript.objects.select_related("dataset").get(pk=talk.pk),
        3,
        expected_version=2,
        author=user,
    )
    page.reload()
    removed = page.locator('[data-change="removed"]')
    expect(removed.get_by_test_id("message-text")).to_have_text("Answer 1.")
    assert console_errors == []


def test_quick_fixes_in_the_edit_form_survive_a_cleared_field(
    page, live_server, ann, screenshot, console_errors
):
    dataset, user = ann
    call = create_transcript(
        dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=user, title="Call"
    )
    log_in(page, live_server, f"/transcripts/{call.pk}/?audience=annotator")
    page.locator('#message-0 [data-action="edit"]').click()
    settled(page)
    content = page.locator('#message-0 textarea[name="content"]')
    content.fill('{"a": 1,\n "b": nope}')
    panel = page.locator("#diagnostics")
    expect(panel).to_have_attribute("data-draft", "true")
    # The live diagnostic says where in the field being typed, not where in the file.
    body = panel.locator('[data-code="E-BODY-CONSTRAINT-VIOLATION"]')
    expect(body.get_by_test_id("diagnostic-where")).to_contain_text("content, line 2 col 7")
    fix = panel.locator('[data-code="E-CALL-ID-MISSING"] [data-action="fix"]')
    expect(fix).to_be_visible()

    content.fill("")  # a field cleared: the fix is still offered
    expect(panel.locator('[data-code="E-BODY-CONSTRAINT-VIOLATION"]')).to_have_count(1)
    content.fill('{"a": 1}')
    expect(panel.locator('[data-code="E-BODY-CONSTRAINT-VIOLATION"]')).to_have_count(0)
    expect(fix).to_be_visible()
    screenshot("draft-fix-offered")
    settled(page)
    fix.click()
    form = page.locator("form#message-0")
    expect(form.locator('input[name="call_id"]')).to_have_value("call_1")
    expect(form.locator('textarea[name="content"]')).to_have_value('{"a": 1}')
    assert Transcript.objects.get(pk=call.pk).version == 1  # nothing saved yet
    settled(page)
    form.locator('[data-action="save"]').click()
    expect(page.locator("#version-label")).to_have_text("version 2")
    saved = Transcript.objects.get(pk=call.pk).canonical().messages[0]
    assert saved.call_id == "call_1" and saved.content == '{"a": 1}'
    assert console_errors == []


def test_quick_fixes_in_raw_mode(page, live_server, ann, console_errors):
    dataset, user = ann
    call = create_transcript(
        dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=user, title="Call"
    )
    log_in(page, live_server, f"/transcripts/{call.pk}/source/")
    settled(page)  # typed before htmx takes the editor over, the text would validate nothing
    source = page.locator("#source-text")
    source.press("Control+End")
    source.press_sequentially("\n")
    panel = page.locator("#diagnostics")
    expect(panel).to_have_attribute("data-draft", "true")
    settled(page)
    panel.locator('[data-code="E-CALL-ID-MISSING"] [data-action="fix"]').first.click()
    expect(page.get_by_test_id("fixed")).to_be_visible()
    settled(page)
    expect(page.locator("#source-text")).to_have_value(re.compile(r"call_id=call_1"))
    assert Transcript.objects.get(pk=call.pk).version == 1
    # The fixed diagnostic is gone from the panel; the reply's own stays (it has no fix).
    fixed = panel.locator('[data-code="E-CALL-ID-MISSING"][data-line="2"]')
    expect(fixed).to_have_count(0)
    expect(panel.locator('[data-code="E-CALL-ID-MISSING"]')).to_have_count(1)
    assert console_errors == []
