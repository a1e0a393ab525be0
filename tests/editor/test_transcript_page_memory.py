"""The transcript page of a long transcript is built a page of rows at a time
(``transcript_view.PagedView``): every audience shows the same pages, turns and cards as the
whole rendering (``TranscriptView``), the page's HTML is the same, and at 50,000 messages (the
most a transcript may hold) the first answer, G, the next page and the edit form each stay
under ``PEAK_BYTES`` of traced memory (the whole view took 72 MB)."""

from __future__ import annotations

import json
import re
import tracemalloc

import pytest

from editor.labels.annotations import create_annotation
from editor.presentation import transcript_view as views
from editor.storage.create import create_transcript
from tests.support.huge import huge_harmony
from tests.support.label_questions import message_schema

HARM = {
    "key": "harm",
    "kind": "span",
    "prompt": "Mark harmful words",
    "applies_to": "message",
    "roles": ["user"],
    "tags": [{"value": "harm", "label": "Harmful", "key": "h"}],
}

pytestmark = pytest.mark.django_db

AUDIENCES = ("end_user", "annotator", "debug", "training")
# Replies with no call before them, and a call nobody answers, so that pages carry
# diagnostics; after it, calls end pages and their replies begin the next (a turn is five
# messages, a page 50).
ODD = (
    "<|start|>functions.lookup to=assistant<|channel|>commentary<|message|>{}<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.lookup <|constrain|>json"
    '<|message|>{"q": 1}<|call|>'
    "<|start|>user<|message|>never mind<|end|>"
) + "<|start|>user<|message|>again<|end|>" * 3  # six messages: after it, calls end pages


def long_text(turns_before: int, turns_after: int) -> str:
    before = huge_harmony(1 + 5 * turns_before)
    after = huge_harmony(1 + 5 * turns_after).split("<|end|>", 1)[1]  # no second system
    return before + ODD + after + ODD


@pytest.fixture
def long(dataset, curator, monkeypatch):
    """A 663-message Harmony transcript, paged from 100 messages on."""
    monkeypatch.setattr(views, "CACHED_VIEW_MIN_MESSAGES", 100)
    monkeypatch.setattr(views, "PAGED_VIEW_MIN_MESSAGES", 100)
    monkeypatch.setattr(views, "_views", views.OrderedDict())
    transcript = create_transcript(
        dataset, author=curator, text=long_text(70, 60), spec="harmony", title="long"
    )
    assert transcript.message_count == 1 + 5 * 130 + 12
    assert transcript.diagnostics
    return transcript


def test_short_transcripts_are_rendered_whole_and_long_ones_paged(long, dataset, curator):
    short = create_transcript(dataset, author=curator, text=huge_harmony(40), spec="harmony")
    for audience in AUDIENCES:
        assert isinstance(views.transcript_view(short, audience), views.TranscriptView)
        assert isinstance(views.transcript_view(long, audience), views.PagedView)


def test_a_spec_whose_file_messages_hold_several_is_rendered_whole(dataset, curator, monkeypatch):
    messages = [
        {"role": "user", "content": f"question {n}"}
        if n % 2 == 0
        else {
            "role": "assistant",
            "reasoning_content": f"thinking {n}",
            "content": f"answer {n}",
            "tool_calls": [
                {
                    "id": f"c{n}",
                    "type": "function",
                    "function": {"name": "f", "arguments": "{}"},
                }
            ],
        }
        for n in range(20)
    ]
    transcript = create_transcript(
        dataset, author=curator, text=json.dumps(messages), spec="openai-messages"
    )
    monkeypatch.setattr(views, "CACHED_VIEW_MIN_MESSAGES", 10)
    monkeypatch.setattr(views, "PAGED_VIEW_MIN_MESSAGES", 10)
    assert not views.pages_from_rows(transcript, "annotator")
    view = views.transcript_view(transcript, "annotator")
    assert isinstance(view, views.TranscriptView)
    assert [len(turn.cards) for turn in view.page(0)[:2]] == [1, 3]


@pytest.mark.parametrize("audience", AUDIENCES)
def test_a_paged_view_shows_what_the_whole_view_shows(long, audience):
    convention = "gpt_oss" if audience == "training" else None
    whole = views._view(long, audience, convention)
    paged = views._paged_view(long, audience, convention)
    assert paged.page_count == whole.page_count > 2
    for number in range(whole.page_count):
        assert paged.page(number) == whole.page(number), number
    assert paged.pages(1, 2) == whole.pages(1, 2)
    assert paged.page(whole.page_count) == whole.page(whole.page_count) == []
    for index in (-3, 0, 1, 49, 50, 51, 99, 100, 349, 350, 351, 655, 656, 10_000):
        assert paged.page_holding(index) == whole.page_holding(index), index
    for index in (0, 2, 3, 4, 349, 351, 352, 654, 655, 656, 657):
        assert paged.card(index) == whole.card(index), index
    assert (paged.source, paged.spans) == (whole.source, whole.spans)
    assert paged.convention == whole.convention
    assert paged.trained_tokens == whole.trained_tokens
    assert (paged.pairs, paged.replies) == (whole.pairs, whole.replies)
    assert paged.counts == whole.counts
    if audience != "end_user":
        assert sum(card.errors + card.warnings for card in cards(paged)) > 0
        assert any(turn.cards[0].answers is not None for turn in paged.page(0))
        # A call on one page answered on the next: the link goes both ways across pages.
        crossing = [c for c in cards(paged) if c.replies and c.replies[0] // 50 != c.index // 50]
        assert crossing


def cards(view):
    return [card for n in range(view.page_count) for turn in view.page(n) for card in turn.cards]


MESSAGE_LIST = re.compile(r'<div id="message-list".*?</section>', re.S)
DEBUG_SOURCE = re.compile(r'<pre class="source".*?</pre>', re.S)


CSRF_TOKEN = re.compile(r'(name="csrfmiddlewaretoken" value=|"X-CSRFToken": )"[^"]*"')


def page_html(client, transcript, params, headers=None) -> str:
    """The page's answer to ``params``, its CSRF tokens (new in each answer) left out."""
    response = client.get(f"/transcripts/{transcript.pk}/", params, headers=headers or {})
    assert response.status_code == 200, response.content[:300]
    return CSRF_TOKEN.sub("", response.content.decode())


@pytest.mark.parametrize(
    "params",
    [
        {"audience": "end_user"},
        {"audience": "annotator"},
        {"audience": "annotator", "goto": "655"},
        {"audience": "annotator", "goto": "352", "edit": "352"},
        {"audience": "end_user", "goto": "400"},
        {"audience": "training"},
        {"audience": "training", "convention": "all_assistant", "goto": "600"},
        {"audience": "debug"},
    ],
)
def test_the_page_is_the_same_paged_or_whole(client, curator, long, monkeypatch, params):
    client.force_login(curator)
    paged = page_html(client, long, params)
    monkeypatch.setattr(views, "PAGED_VIEW_MIN_MESSAGES", 100_000)
    monkeypatch.setattr(views, "_views", views.OrderedDict())
    whole = page_html(client, long, params)
    pattern = DEBUG_SOURCE if params["audience"] == "debug" else MESSAGE_LIST
    assert pattern.search(paged).group() == pattern.search(whole).group()
    assert paged == whole


def test_labels_of_messages_are_the_same_paged_or_whole(client, curator, long, monkeypatch):
    schema = message_schema(long.dataset, curator, HARM)
    for index, question, value, span in (
        (361, "correct", "no", None),
        (2, "correct", "yes", None),
        (357, "harm", "harm", (7, 14)),
    ):
        start, end = span or (None, None)
        create_annotation(
            long,
            annotator=curator,
            schema=schema,
            question=question,
            value=value,
            message_index=index,
            start=start,
            end=end,
        )
    client.force_login(curator)
    asked = [{"audience": "annotator"}, {"audience": "annotator", "goto": "357"}]
    paged = [page_html(client, long, params) for params in asked]
    assert isinstance(views.message_labels(long, curator), views.LabelsByPage)
    monkeypatch.setattr(views, "PAGED_VIEW_MIN_MESSAGES", 100_000)
    monkeypatch.setattr(views, "_views", views.OrderedDict())
    whole = [page_html(client, long, params) for params in asked]
    assert paged == whole
    assert 'class="message-labels"' in paged[0] and "data-spannable" in paged[1]
    assert '<mark class="span-tag"' in paged[1]


@pytest.mark.parametrize("audience", ("end_user", "annotator", "training"))
def test_the_next_pages_are_the_same_paged_or_whole(client, curator, long, monkeypatch, audience):
    client.force_login(curator)
    asked = [({"audience": audience, "page": str(n)}, False) for n in range(5, 15)]
    asked += [({"audience": audience, "page": "3", "before": "1"}, True)]
    htmx = {"HX-Request": "true"}
    paged = [page_html(client, long, params, htmx) for params, _ in asked]
    monkeypatch.setattr(views, "PAGED_VIEW_MIN_MESSAGES", 100_000)
    monkeypatch.setattr(views, "_views", views.OrderedDict())
    whole = [page_html(client, long, params, htmx) for params, _ in asked]
    assert paged == whole
    assert 'class="message-page"' in paged[0]


MESSAGES = 50_000
PEAK_BYTES = 40 * 1024**2  # mostly the 5.2 MB source text, read and decompressed


@pytest.fixture
def huge(dataset, annotator, settings):
    settings.OCM_MAX_TRANSCRIPT_MESSAGES = MESSAGES
    return create_transcript(
        dataset, author=annotator, text=huge_harmony(MESSAGES), spec="harmony", title="huge"
    )


def traced(client, transcript, params, headers=None) -> tuple[str, int]:
    """The page's answer to ``params`` with nothing kept, and the request's traced peak."""
    with views._views_lock:
        views._views.clear()
    tracemalloc.start()
    try:
        html = page_html(client, transcript, params, headers)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return html, peak


@pytest.mark.parametrize("audience", AUDIENCES)
def test_the_first_answer_of_a_huge_transcript_is_bounded(client, curator, huge, audience):
    client.force_login(curator)
    html, peak = traced(client, huge, {"audience": audience})
    assert peak < PEAK_BYTES, peak // 1024**2
    if audience == "debug":
        assert 'data-testid="debug-source-part"' in html
    else:
        assert html.count('class="message-page"') == 1
        assert 'data-index="0"' in html or 'data-index="1"' in html
        assert 'data-next-page="1"' in html


def test_g_the_next_page_and_the_edit_form_of_a_huge_transcript_are_bounded(client, curator, huge):
    message_schema(huge.dataset, curator, HARM)  # labels of every assistant and user message
    client.force_login(curator)
    last = MESSAGES - 1
    html, peak = traced(client, huge, {"audience": "annotator", "goto": str(last)})
    assert peak < PEAK_BYTES and f'data-index="{last}"' in html
    assert 'data-spannable data-message-index="49996"' in html
    assert f'data-focus="{last}"' in html and 'data-previous-page="998"' in html
    html, peak = traced(
        client, huge, {"audience": "annotator", "page": "500"}, {"HX-Request": "true"}
    )
    assert peak < PEAK_BYTES and 'data-index="25000"' in html and 'data-index="25050"' not in html
    # The reply on the page links to its call, the call to its reply.
    assert 'data-answers="25003"' in html and 'data-replies="25004"' in html
    html, peak = traced(client, huge, {"audience": "annotator", "goto": "31337", "edit": "31337"})
    assert peak < PEAK_BYTES and 'id="f-31337-role"' in html
