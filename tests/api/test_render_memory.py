"""A 50,000-message Harmony transcript (the most a transcript may hold,
OCM_MAX_TRANSCRIPT_MESSAGES) rendered page by page through the API: every page of every
audience holds at most RENDER_PAGE_MAX items and the request's peak memory (tracemalloc,
the whole request: the transcript's row and source text included) stays under
PAGE_PEAK_BYTES; the whole rendering took hundreds of megabytes."""

from __future__ import annotations

import tracemalloc

import pytest

from editor.presentation.render_pages import RENDER_PAGE_MAX
from editor.storage.create import create_transcript
from tests.support.huge import huge_harmony

pytestmark = pytest.mark.django_db

MESSAGES = 50_000
# The page's own share is a few megabytes; most of this is the transcript's source text
# (5.2 MB here, read and decompressed once per request), which OCM_MAX_TRANSCRIPT_BYTES bounds.
PAGE_PEAK_BYTES = 40 * 1024**2


@pytest.fixture
def huge(dataset, annotator, settings):
    settings.OCM_MAX_TRANSCRIPT_MESSAGES = MESSAGES
    return create_transcript(
        dataset, author=annotator, text=huge_harmony(MESSAGES), spec="harmony", title="huge"
    )


def measured(client, path: str, params: dict) -> tuple[dict, int]:
    """The answer to GET ``path`` and the request's peak of traced memory."""
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    response = client.get(path, params)
    peak = tracemalloc.get_traced_memory()[1] - before
    assert response.status_code == 200, response.content[:300]
    return response.json(), peak


@pytest.fixture
def tracing():
    tracemalloc.start()
    yield
    tracemalloc.stop()


def test_every_annotator_page_of_a_huge_transcript_is_bounded(as_annotator, huge, tracing):
    path = f"/transcripts/{huge.pk}/render"
    offset, seen, peaks = 0, 0, []
    while True:
        body, peak = measured(as_annotator, path, {"audience": "annotator", "offset": offset})
        assert body["total"] == MESSAGES and len(body["items"]) <= RENDER_PAGE_MAX
        assert [item["index"] for item in body["items"]] == list(
            range(offset, offset + len(body["items"]))
        )
        seen += len(body["items"])
        peaks.append(peak)
        if body["next"] is None:
            break
        offset += RENDER_PAGE_MAX
    assert seen == MESSAGES and len(peaks) == MESSAGES // RENDER_PAGE_MAX
    assert max(peaks) < PAGE_PEAK_BYTES, [p // 1024**2 for p in peaks]


@pytest.mark.parametrize("audience", ["end_user", "debug", "training"])
def test_first_and_last_pages_of_every_audience_are_bounded(as_annotator, huge, tracing, audience):
    path = f"/transcripts/{huge.pk}/render"
    first, peak = measured(as_annotator, path, {"audience": audience})
    assert len(first["items"]) == RENDER_PAGE_MAX and peak < PAGE_PEAK_BYTES
    last_offset = first["total"] - 1  # the last item's page: every message before it is read
    last, peak = measured(as_annotator, path, {"audience": audience, "offset": last_offset})
    assert len(last["items"]) == 1 and last["next"] is None
    assert peak < PAGE_PEAK_BYTES
    # The last message is a tool's reply (the text stops inside a turn).
    reply = "<|start|>functions.get_weather to=assistant"
    if audience == "debug":  # the page's source: its one message, to the end of the text
        assert last["source"].startswith(reply)
        assert last["source_offset"] + len(last["source"]) == len(huge.source_text)
        assert len(first["source"]) < len(huge.source_text) // 40
    if audience == "training":  # its parts are where it is in the whole text
        item = last["items"][0]
        assert item["trained"] is False and item["index"] == MESSAGES - 1
        header = item["parts"][0]
        assert huge.source_text[header["start"] : header["end"]].startswith(reply)
        assert item["parts"][-1]["end"] == len(huge.source_text)
