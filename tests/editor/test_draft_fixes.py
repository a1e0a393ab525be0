"""Quick fixes wherever a diagnostic is shown, and live diagnostics placed in the field being
typed (issue 31, item 10): the message edit form's live panel and raw mode offer the fixes of
the draft; a fix applied to a draft changes the form or the text, nothing is saved."""

from __future__ import annotations

import re

import pytest

from editor import editing
from editor.errors import FixNotFound
from editor.models import Transcript
from editor.storage.create import create_transcript

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
# Message 0 is a call without a call id (fixable in its own header), message 1 its reply.
CALL_WITHOUT_ID = (
    "version: 2.2\n"
    "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{}<|call|>\n"
    "<|start|>tool name=functions.f<|channel|>commentary<|message|>{}<|end|>"
)


@pytest.fixture
def call(dataset, annotator):
    return create_transcript(dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=annotator)


@pytest.fixture
def as_annotator(client, annotator):
    client.force_login(annotator)
    return client


def form_of(message_index, **fields):
    base = {
        "version": 1,
        "role": "assistant",
        "channel": "commentary",
        "recipient": "functions.f",
        "constrain": "json",
        "end": "call",
        "content": "{}",
    }
    return {**base, **fields}


def validate(client, transcript, index, data):
    return client.post(f"/transcripts/{transcript.pk}/messages/{index}/validate/", data, headers=HX)


def test_a_live_diagnostic_names_the_field_and_the_place_in_it(as_annotator, call):
    response = validate(as_annotator, call, 0, form_of(0, content='{"a": 1,\n "b": nope}'))
    html = response.content.decode()
    item = html.split('data-code="E-BODY-CONSTRAINT-VIOLATION"', 1)[1].split("</li>", 1)[0]
    assert "content, line 2 col 7" in item
    assert "line 3:7" not in item  # not the file's line and column
    # One about the message as a whole (a call without an id) names no file position either.
    call = html.split('data-code="E-CALL-ID-MISSING"', 1)[1].split("</li>", 1)[0]
    assert "message #0 · the message&#x27;s markup" in call and "line 2:1" not in call


def test_the_draft_offers_its_fixes(as_annotator, call):
    html = validate(as_annotator, call, 0, form_of(0, content='{"a": 1}')).content.decode()
    item = html.split('data-code="E-CALL-ID-MISSING"', 1)[1].split("</li>", 1)[0]
    assert 'data-action="fix"' in item
    assert f'hx-post="/transcripts/{call.pk}/messages/0/validate/"' in item
    assert 'hx-include="#message-0"' in item


def test_a_fix_stays_offered_when_a_field_is_cleared(as_annotator, call):
    html = validate(as_annotator, call, 0, form_of(0, channel="", content="")).content.decode()
    item = html.split('data-code="E-CALL-ID-MISSING"', 1)[1].split("</li>", 1)[0]
    assert 'data-action="fix"' in item


def test_a_fix_of_the_draft_comes_back_in_the_form_and_saves_nothing(as_annotator, call):
    draft = form_of(0, content='{"a": 1}')
    check = editing.validate_message_draft(
        Transcript.objects.get(pk=call.pk), 0, {"content": '{"a": 1}'}
    )
    fix = next(d for d in check.diagnostics if d.get("fix") and d["message_index"] == 0)
    response = validate(
        as_annotator, call, 0, {**draft, "code": fix["code"], "fix_id": fix["fix"]["id"]}
    )
    html = response.content.decode()
    assert response["HX-Retarget"] == "#message-0" and response["HX-Reswap"] == "outerHTML"
    assert re.search(r'name="call_id" value="call_1"', html)
    assert "{&quot;a&quot;: 1}" in html  # what was typed is kept
    assert 'id="diagnostics" ' in html  # and the panel follows
    stored = Transcript.objects.get(pk=call.pk)
    assert stored.version == 1 and stored.source_text == CALL_WITHOUT_ID


def test_a_fix_no_longer_offered_is_a_clear_error(as_annotator, call):
    response = validate(as_annotator, call, 0, {**form_of(0), "code": "X", "fix_id": "nope"})
    assert response.status_code == FixNotFound.status
    assert 'id="message-0-error"' in response.content.decode()


def test_raw_mode_offers_fixes_and_applies_them_to_the_text(as_annotator, call):
    page = as_annotator.get(f"/transcripts/{call.pk}/source/").content.decode()
    assert 'data-action="fix"' in page
    diagnostic = next(d for d in call.diagnostics if d.get("fix"))
    typed = CALL_WITHOUT_ID.replace("<|message|>{}<|call|>", '<|message|>{"typed": true}<|call|>')
    response = as_annotator.post(
        f"/transcripts/{call.pk}/source/validate/",
        {
            "text": typed,
            "spec": "openchatml-2.2",
            "code": diagnostic["code"],
            "message_index": 0,
            "fix_id": diagnostic["fix"]["id"],
            "fix_title": diagnostic["fix"]["title"],
        },
        headers=HX,
    )
    html = response.content.decode()
    textarea = re.search(
        r'<textarea name="text" id="source-text"[^>]*>(.*?)</textarea>', html, re.S
    )
    assert textarea and 'hx-swap-oob="true"' in textarea.group(0)
    assert "call_id=call_1" in textarea.group(1) and "{&quot;typed&quot;: true}" in textarea.group(
        1
    )
    assert 'data-testid="fixed"' in html
    assert Transcript.objects.get(pk=call.pk).version == 1  # nothing saved


def test_raw_mode_fix_of_a_changed_text_says_so(as_annotator, call):
    response = as_annotator.post(
        f"/transcripts/{call.pk}/source/validate/",
        {"text": CALL_WITHOUT_ID, "spec": "openchatml-2.2", "code": "X", "fix_id": "gone"},
        headers=HX,
    )
    html = response.content.decode()
    assert 'data-code="fix-not-found"' in html
    assert 'id="source-text"' not in html  # the textarea is left as typed


def test_a_fix_of_another_message_says_when_it_is_offered(as_annotator, call):
    """While message 1 is edited, message 0's fix is named, not applied to a form that does
    not hold message 0."""
    html = validate(
        as_annotator,
        call,
        1,
        {
            "version": 1,
            "role": "tool",
            "name": "functions.f",
            "channel": "commentary",
            "content": "{}",
        },
    ).content.decode()
    items = re.findall(r'<li class="diagnostic[^>]*data-message-index="0">(.*?)</li>', html, re.S)
    [item] = [found for found in items if "E-CALL-ID-MISSING" in found]
    assert 'data-action="fix"' not in item
    assert 'data-testid="fix-later"' in item and "your edit of message #1" in item
