"""POST /render pages a posted text's rendering as GET /transcripts/{id}/render pages a stored
one (offset, limit in the query; total, next in the answer): the pages of every audience, one
after another, are the whole rendering on every valid fixture of every spec; a small text is
one page, answered as before plus the paging fields; a 50,000-message text's page costs its
parse, not the whole rendering. /render, /validate, /convert and /formats/parse refuse a text
over the limits of one transcript (OCM_MAX_TRANSCRIPT_BYTES / _MESSAGES) with 422
``transcript-too-large``."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from editor import formats
from editor.formats import render as render_module
from editor.formats.pages import render_text_page
from editor.formats.render import render as render_whole
from editor.formats.specs import TEXT_SPECS
from editor.formats.training import render_training
from editor.presentation.render_pages import RENDER_PAGE_MAX
from tests.support.huge import huge_harmony

from .conftest import assert_error

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AUDIENCES = ("end_user", "annotator", "debug", "training")
VALID = sorted(
    (path.parent.parent.name, path)
    for path in FIXTURES.glob("*/valid/*")
    if not path.name.endswith(".expected.json")
)
HARMONY = (FIXTURES / "training" / "two-turns-with-call.harmony").read_text(encoding="utf-8")


def whole(text: str, spec: str | None, audience: str, convention: str | None = None) -> dict:
    """The rendering as the route gave it before it was paged: all messages at once."""
    transcript, _ = formats.parse(text, spec=spec)
    if audience == "training":
        return render_training(transcript, convention, text=text)
    return render_whole(transcript, audience, source_text=text).to_dict()


def pages(text: str, spec: str | None, audience: str, limit: int, convention=None) -> list:
    transcript, _ = formats.parse(text, spec=spec)
    out, offset = [], 0
    while True:
        page = render_text_page(
            transcript, text, audience, offset=offset, limit=limit, convention=convention
        )
        out.append(page)
        offset += limit
        if offset >= page["total"]:
            return out


def assert_pages_make_the_whole(text, spec, audience: str, limit: int, convention=None):
    expected = whole(text, spec, audience, convention)
    got = pages(text, spec, audience, limit, convention)
    assert [item for page in got for item in page["items"]] == expected["items"]
    assert {page["total"] for page in got} == {len(expected["items"])}
    assert all(len(page["items"]) <= limit for page in got)
    if audience == "debug":
        assert "".join(page["source"] for page in got) == expected["source"] == text
        assert [span for page in got for span in page["spans"]] == expected["spans"]
        at = 0
        for page in got:
            assert page["source_offset"] == at
            at += len(page["source"])
        if spec in TEXT_SPECS:  # each page's source begins with its first message
            parsed = formats.parse(text, spec=spec).transcript
            for page in got[1:]:
                assert page["source_offset"] == parsed.messages[page["offset"]].source.start
    if audience == "training":
        assert {page["convention"] for page in got} == {expected["convention"]}


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """The source read for message starts in chunks of a few characters."""
    monkeypatch.setattr(render_module, "STREAM_CHUNK", 7)


@pytest.mark.parametrize(("spec", "path"), VALID, ids=[f"{s}/{p.name}" for s, p in VALID])
def test_pages_of_every_audience_make_the_whole_rendering(spec, path):
    text = path.read_text(encoding="utf-8")
    for audience in AUDIENCES:
        for limit in (1, 2, 3):
            assert_pages_make_the_whole(text, spec, audience, limit)


@pytest.mark.parametrize("convention", ["all_assistant", "last_assistant_turn", "gpt_oss"])
@pytest.mark.parametrize("path", sorted((FIXTURES / "training").glob("*.harmony")))
def test_training_pages_under_every_convention(path, convention):
    text = path.read_text(encoding="utf-8")
    for limit in (1, 2, 4):
        assert_pages_make_the_whole(text, None, "training", limit, convention)


def test_an_unknown_audience_is_refused():
    transcript, _ = formats.parse(HARMONY)
    with pytest.raises(ValueError, match="audience"):
        render_text_page(transcript, HARMONY, "everyone", offset=0, limit=1)


# --- over HTTP ------------------------------------------------------------------------------


def test_a_small_text_is_one_page_answered_as_before(as_viewer):
    for audience in AUDIENCES:
        response = as_viewer.post("/render", {"text": HARMONY, "audience": audience})
        assert response.status_code == 200, response.content
        body = response.json()
        expected = whole(HARMONY, None, audience)
        assert {k: body[k] for k in expected} == expected
        assert (body["offset"], body["limit"], body["next"]) == (0, RENDER_PAGE_MAX, None)
        assert body["total"] == len(expected["items"])
        if audience == "debug":
            assert body["source"] == HARMONY and body["source_offset"] == 0
        else:
            assert "source" not in body and "source_offset" not in body


def test_next_is_the_url_to_post_the_same_body_to(as_viewer):
    sent = {"text": HARMONY, "audience": "debug"}
    body = as_viewer.post("/render?limit=4", sent).json()
    seen, sources = list(body["items"]), [body["source"]]
    while body["next"] is not None:
        assert body["next"].startswith("/api/v1/render?") and "limit=4" in body["next"]
        response = as_viewer.client.post(
            body["next"], sent, content_type="application/json", headers=as_viewer.headers
        )
        body = response.json()
        seen += body["items"]
        sources.append(body["source"])
    assert [item["index"] for item in seen] == list(range(11))
    assert len(sources) == 3 and "".join(sources) == HARMONY


def test_the_end_users_pages_count_the_visible_messages_only(as_viewer):
    body = as_viewer.post("/render?limit=1&offset=1", {"text": HARMONY}).json()
    visible = [item["index"] for item in whole(HARMONY, None, "end_user")["items"]]
    assert body["total"] == len(visible) < 11
    assert [item["index"] for item in body["items"]] == visible[1:2]


@pytest.mark.parametrize("audience", AUDIENCES)
@pytest.mark.parametrize("offset", [11, 2**63 - 1])
def test_past_the_end_is_an_empty_last_page(as_viewer, audience, offset):
    body = as_viewer.post(f"/render?offset={offset}", {"text": HARMONY, "audience": audience})
    body = body.json()
    assert body["items"] == [] and body["next"] is None
    if audience == "debug":
        assert body["source"] == "" and body["spans"] == []


@pytest.mark.parametrize("query", ["limit=0", f"limit={RENDER_PAGE_MAX + 1}", "offset=-1"])
def test_a_bad_page_is_a_422(as_viewer, query):
    response = as_viewer.post(f"/render?{query}", {"text": HARMONY})
    assert_error(response, 422, "invalid-request")


ROUTES = [
    ("/render", {}),
    ("/validate", {}),
    ("/convert", {"to": "chatml"}),
    ("/formats/parse", {}),
]


@pytest.mark.parametrize(("route", "extra"), ROUTES)
def test_a_text_of_too_many_messages_is_refused(as_viewer, settings, route, extra):
    settings.OCM_MAX_TRANSCRIPT_MESSAGES = 10  # the text holds 11
    response = as_viewer.post(route, {"text": HARMONY, **extra})
    body = assert_error(response, 422, "transcript-too-large")
    assert body["details"] == {"max_messages": 10, "messages": 11}
    settings.OCM_MAX_TRANSCRIPT_MESSAGES = 11
    assert as_viewer.post(route, {"text": HARMONY, **extra}).status_code == 200


@pytest.mark.parametrize(("route", "extra"), ROUTES)
def test_a_text_of_too_many_bytes_is_refused_before_it_is_parsed(
    as_viewer, settings, monkeypatch, route, extra
):
    settings.OCM_MAX_TRANSCRIPT_BYTES = len(HARMONY.encode()) - 1

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(formats, "parse", no_parse)
    response = as_viewer.post(route, {"text": HARMONY, **extra})
    body = assert_error(response, 422, "transcript-too-large")
    assert body["details"] == {"max_bytes": len(HARMONY.encode()) - 1}


# --- a 50,000-message text ------------------------------------------------------------------

MESSAGES = 50_000
# A page's own share, the transcript parsed: a few megabytes (the whole rendering took
# 100 MB for debug and training: docs/performance.md, "Huge transcripts").
PAGE_PEAK_BYTES = 8 * 1024**2


@pytest.fixture(scope="module")
def huge_text() -> str:
    return huge_harmony(MESSAGES)


@pytest.fixture(scope="module")
def huge_parsed(huge_text):
    return formats.parse(huge_text, spec="harmony").transcript


@pytest.fixture
def tracing():
    tracemalloc.start()
    yield
    tracemalloc.stop()


def traced_peak(action) -> tuple[object, int]:
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    result = action()
    return result, tracemalloc.get_traced_memory()[1] - before


@pytest.mark.parametrize("audience", AUDIENCES)
def test_first_and_last_pages_of_a_huge_text_are_bounded(huge_text, huge_parsed, tracing, audience):
    def page(offset: int) -> tuple[dict, int]:
        return traced_peak(
            lambda: render_text_page(
                huge_parsed, huge_text, audience, offset=offset, limit=RENDER_PAGE_MAX
            )
        )

    first, peak = page(0)
    assert len(first["items"]) == RENDER_PAGE_MAX and peak < PAGE_PEAK_BYTES
    last, peak = page(first["total"] - 1)  # the last item's page: every message before it
    assert len(last["items"]) == 1 and peak < PAGE_PEAK_BYTES
    if audience != "end_user":
        assert first["total"] == MESSAGES and last["items"][0]["index"] == MESSAGES - 1
    if audience == "debug":  # the page's source: its one message, to the end of the text
        assert last["source_offset"] + len(last["source"]) == len(huge_text)
        assert len(first["source"]) < len(huge_text) // 40
    if audience == "training":  # its parts are where it is in the whole text
        assert last["items"][0]["parts"][-1]["end"] == len(huge_text)


def test_a_posted_page_of_a_huge_text_costs_the_body_and_the_parse(
    as_viewer, settings, huge_text, tracing
):
    """The request's peak (tracemalloc, the test client's encoding of the body included)
    stays under the sum of its two floors, measured here: reading the posted body (a
    request to /formats/detect, which does not parse) and parsing the text."""
    settings.OCM_MAX_TRANSCRIPT_MESSAGES = MESSAGES
    assert as_viewer.post("/render", {"text": HARMONY}).status_code == 200  # warmed up
    sent = {"text": huge_text, "spec": "harmony", "audience": "training"}
    _, body_floor = traced_peak(lambda: as_viewer.post("/formats/detect", sent))
    _, parse_floor = traced_peak(lambda: formats.parse(huge_text, spec="harmony"))
    offset = MESSAGES - 1
    response, peak = traced_peak(lambda: as_viewer.post(f"/render?offset={offset}", sent))
    assert response.status_code == 200, response.content[:300]
    body = response.json()
    assert (body["total"], body["offset"], body["next"]) == (MESSAGES, offset, None)
    assert [item["index"] for item in body["items"]] == [MESSAGES - 1]
    assert peak < body_floor + parse_floor, [n // 1024**2 for n in (peak, body_floor, parse_floor)]
