"""The raw-source page of a very long transcript is a read-only window of its text, not the
whole of it twice (textarea and highlighting): the page's size and the request's peak memory
are bounded, the windows one after another are the whole text, each begins at a message
start, and a diagnostic's line opens the window that holds it."""

from __future__ import annotations

import html
import re
import tracemalloc
from itertools import pairwise

import pytest

from editor import formats
from editor.presentation.source_window import (
    SOURCE_EDITOR_MAX_CHARS,
    SOURCE_WINDOW_CHARS,
    source_window,
)
from editor.storage.create import create_transcript
from tests.support.huge import huge_harmony

pytestmark = pytest.mark.django_db

MESSAGES = 50_000
PAGE_BYTES = 3 * SOURCE_WINDOW_CHARS  # highlighted (a mark per token) and escaped
PEAK_BYTES = 40 * 1024**2  # mostly the 5.2 MB source itself, read and decompressed
WINDOW_RE = re.compile(r'data-source-window data-start="(\d+)" data-end="(\d+)"')
NEXT_RE = re.compile(r'data-action="next-window" href="\?at=(\d+)"')


@pytest.fixture
def huge(dataset, annotator, settings):
    settings.OCM_MAX_TRANSCRIPT_MESSAGES = MESSAGES
    return create_transcript(
        dataset, author=annotator, text=huge_harmony(MESSAGES), spec="harmony", title="huge"
    )


@pytest.fixture
def logged_in(client, annotator):
    client.force_login(annotator)
    return client


def source_page(client, transcript, **params):
    response = client.get(f"/transcripts/{transcript.pk}/source/", params)
    assert response.status_code == 200
    return response.content.decode()


def test_a_source_that_fits_is_still_edited_whole(logged_in, dataset, annotator):
    text = huge_harmony(200)
    assert len(text) < SOURCE_EDITOR_MAX_CHARS
    small = create_transcript(dataset, author=annotator, text=text, spec="harmony")
    page = source_page(logged_in, small)
    assert 'id="source-text"' in page and "data-source-window" not in page
    assert html.escape(text, quote=False)[:200] in page


def test_a_huge_source_is_shown_a_bounded_window_at_a_time(logged_in, huge):
    text = huge.source_text
    tracemalloc.start()
    try:
        page = source_page(logged_in, huge)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES
    assert len(page.encode()) < PAGE_BYTES  # was twice the text and a mark per token
    assert 'id="source-text"' not in page and 'data-testid="too-long-to-edit"' in page
    starts = {0} | {m.source.start for m in formats.parse(text, spec="harmony").transcript.messages}
    windows, params = [], {}
    while True:
        page = source_page(logged_in, huge, **params)
        start, end = map(int, WINDOW_RE.search(page).groups())
        windows.append((start, end))
        assert start in starts and (end in starts or end == len(text))
        assert 0 < end - start <= SOURCE_WINDOW_CHARS
        found = NEXT_RE.search(page)
        if found is None:
            break
        params = {"at": found.group(1)}
    assert windows[0][0] == 0 and windows[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in pairwise(windows))
    assert len(windows) >= len(text) // SOURCE_WINDOW_CHARS


def test_a_window_is_highlighted_as_the_whole_text(huge):
    text = huge.source_text
    window = source_window(text, "harmony", at=None, line=None)
    window = source_window(text, "harmony", at=window.end)  # the second: not at the start
    whole = formats.render.token_spans(text, "harmony")
    inside = [s for s in whole if window.start <= s.start < window.end]
    assert [
        (s.start + window.start, s.end + window.start)
        for s in formats.render.token_spans(window.text, "harmony")
    ] == [(s.start, s.end) for s in inside]


def test_a_line_opens_the_window_that_holds_it_and_bad_parameters_do_not_fail(logged_in, huge):
    text = huge.source_text
    line = text.count("\n") + 1  # the last line: the Harmony text is one long line after the system
    page = source_page(logged_in, huge, line=line)
    start, end = map(int, WINDOW_RE.search(page).groups())
    assert f'id="L{line}"' in page
    assert start <= text.rfind("\n") + 1 < end or start == 0
    for params in ({"at": "x"}, {"at": -4}, {"line": "y"}, {"line": -1}):
        page = source_page(logged_in, huge, **params)
        assert WINDOW_RE.search(page).group(1) == "0"
    page = source_page(logged_in, huge, at=10**12)
    assert WINDOW_RE.search(page).groups() == (str(len(text)), str(len(text)))


def test_a_json_document_is_cut_at_line_ends():
    lines = [f'  {{"role": "user", "content": "message {i}"}},' for i in range(20_000)]
    text = "[\n" + "\n".join(lines) + "\n]\n"
    window = source_window(text, "openai-messages")
    assert window.text.endswith("\n") and len(window.text) <= SOURCE_WINDOW_CHARS
    second = source_window(text, "openai-messages", at=window.end)
    assert second.first_line == window.last_line + 1 and second.previous == 0
    assert second.start == window.end and text[second.start - 1] == "\n"


def test_the_debug_page_of_a_huge_transcript_highlights_the_sources_first_part(logged_in, huge):
    response = logged_in.get(f"/transcripts/{huge.pk}/", {"audience": "debug"})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'data-testid="debug-source-part"' in page
    assert len(page.encode()) < 2 * PAGE_BYTES  # the source's first part and a page of cards
