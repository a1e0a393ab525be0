"""GET /transcripts/{id}/render pages its items (offset, limit, total, next): the pages of
every audience, one after another, are the whole rendering, on every valid fixture of every
spec (hidden channels, calls, CoT markers, FIM segments, JSON specs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache

from editor import formats
from editor.formats import render as render_module
from editor.formats import training
from editor.formats.render import render as render_whole
from editor.formats.specs import TEXT_SPECS
from editor.models import DatasetTokenizer
from editor.presentation.render_pages import RENDER_PAGE_MAX, render_page
from editor.presentation.training import training_rendering
from editor.storage.create import create_transcript

from .conftest import assert_error

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AUDIENCES = ("end_user", "annotator", "debug", "training")
VALID = sorted(
    (path.parent.parent.name, path)
    for path in FIXTURES.glob("*/valid/*")
    if not path.name.endswith(".expected.json")
)
TRAINING = sorted((FIXTURES / "training").glob("*.harmony"))


@pytest.fixture(autouse=True)
def small_windows(monkeypatch):
    """Windows of a few messages and chunks of a few characters: every page's layout is
    found across several windows, every source read in many chunks."""
    monkeypatch.setattr(training, "LAYOUT_WINDOW", 2)
    monkeypatch.setattr(render_module, "STREAM_CHUNK", 7)


def whole(transcript, audience: str) -> dict:
    """The rendering as the route gave it before it was paged: all messages at once."""
    if audience == "training":
        return training_rendering(transcript, None)
    return render_whole(
        transcript.canonical(), audience, source_text=transcript.source_text or None
    ).to_dict()


def pages(transcript, audience: str, limit: int, *, forget: bool = False) -> list[dict]:
    """Every page in order; with ``forget``, each found afresh (the training layout starts
    from the first message, not from where the page before it ended)."""
    cache.clear()
    out, offset = [], 0
    while True:
        if forget:
            cache.clear()
        page = render_page(transcript, audience, offset=offset, limit=limit)
        out.append(page)
        offset += limit
        if offset >= page["total"]:
            return out


def assert_pages_make_the_whole(transcript, audience: str, limit: int, forget=False) -> None:
    expected = whole(transcript, audience)
    got = pages(transcript, audience, limit, forget=forget)
    assert [item for page in got for item in page["items"]] == expected["items"]
    assert {page["total"] for page in got} == {len(expected["items"])}
    assert all(len(page["items"]) <= limit for page in got)
    if audience == "debug":
        assert "".join(page["source"] for page in got) == expected["source"]
        assert [span for page in got for span in page["spans"]] == expected["spans"]
        at = 0
        for page in got:
            assert page["source_offset"] == at
            at += len(page["source"])
        if transcript.spec in TEXT_SPECS:  # each page's source begins with its first message
            parsed = formats.parse(transcript.source_text, spec=transcript.spec).transcript
            for page in got[1:]:
                assert page["source_offset"] == parsed.messages[page["offset"]].source.start
    if audience == "training":
        assert {page["convention"] for page in got} == {expected["convention"]}
        counted = [page["trained_tokens"] for page in got if "trained_tokens" in page]
        assert sum(counted) == expected.get("trained_tokens", 0)


@pytest.mark.parametrize(("spec", "path"), VALID, ids=[f"{s}/{p.name}" for s, p in VALID])
def test_pages_of_every_audience_make_the_whole_rendering(dataset, annotator, spec, path):
    transcript = create_transcript(
        dataset, author=annotator, text=path.read_text(encoding="utf-8"), spec=spec
    )
    for audience in AUDIENCES:
        for limit in (1, 2, 3):
            assert_pages_make_the_whole(transcript, audience, limit)
    for limit in (1, 3):
        assert_pages_make_the_whole(transcript, "training", limit, forget=True)


@pytest.mark.parametrize("stored", [True, False], ids=["stored-counts", "counted"])
@pytest.mark.parametrize("path", TRAINING, ids=[p.name for p in TRAINING])
def test_training_pages_with_a_tokenizer_and_every_convention(dataset, annotator, path, stored):
    def name_the_tokenizer():
        DatasetTokenizer.objects.create(dataset=dataset, kind="tiktoken", encoding="cl100k_base")

    if stored:  # the counts are stored with the transcript, current
        name_the_tokenizer()
    transcript = create_transcript(
        dataset, author=annotator, text=path.read_text(encoding="utf-8"), spec="harmony"
    )
    if not stored:  # none stored: each rendering counts
        name_the_tokenizer()
        assert transcript.token_counts is None
    for convention in ("all_assistant", "last_assistant_turn", "gpt_oss"):
        expected = training_rendering(transcript, convention)
        assert expected["trained_tokens"] > 0
        for limit in (1, 2, 4):
            got, offset = [], 0
            cache.clear()
            while offset < len(expected["items"]):
                got.append(
                    render_page(
                        transcript, "training", offset=offset, limit=limit, convention=convention
                    )
                )
                offset += limit
            assert [item for page in got for item in page["items"]] == expected["items"]
            assert sum(page["trained_tokens"] for page in got) == expected["trained_tokens"]


def url(transcript) -> str:
    return f"/transcripts/{transcript.pk}/render"


@pytest.fixture
def harmony(dataset, annotator):
    text = (FIXTURES / "training" / "two-turns-with-call.harmony").read_text(encoding="utf-8")
    return create_transcript(dataset, author=annotator, text=text, spec="harmony")


def test_a_small_transcript_is_one_page_with_paging_fields(as_annotator, harmony):
    body = as_annotator.get(url(harmony), {"audience": "annotator"}).json()
    assert body["items"] == whole(harmony, "annotator")["items"]
    assert (body["total"], body["offset"], body["limit"]) == (11, 0, RENDER_PAGE_MAX)
    assert body["next"] is None  # written as null, not left out
    assert "source" not in body and "spans" not in body and "source_offset" not in body


def test_next_is_the_url_of_the_next_page_until_the_last(as_annotator, harmony):
    params = {"audience": "debug", "limit": 4}
    body = as_annotator.get(url(harmony), params).json()
    seen = list(body["items"])
    sources = [body["source"]]
    while body["next"] is not None:
        assert body["next"].startswith(f"/api/v1{url(harmony)}?")
        assert "audience=debug" in body["next"]
        body = as_annotator.client.get(body["next"], headers=as_annotator.headers).json()
        seen += body["items"]
        sources.append(body["source"])
    assert [item["index"] for item in seen] == list(range(11))
    assert len(sources) == 3 and "".join(sources) == harmony.source_text


@pytest.mark.parametrize("audience", AUDIENCES)
@pytest.mark.parametrize("offset", [11, 50, 2**63 - 1])
def test_past_the_end_is_an_empty_last_page(as_annotator, harmony, audience, offset):
    params = {"audience": audience, "offset": offset}
    body = as_annotator.get(url(harmony), params).json()
    assert body["items"] == [] and body["next"] is None
    assert body["total"] == (11 if audience != "end_user" else 4)
    if audience == "debug":
        assert body["source"] == "" and body["spans"] == []


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": RENDER_PAGE_MAX + 1}, {"offset": -1}, {"limit": "many"}],
)
def test_a_bad_page_is_a_422(as_annotator, harmony, params):
    response = as_annotator.get(url(harmony), {"audience": "annotator", **params})
    assert_error(response, 422, "invalid-request")


def test_a_viewer_pages_the_end_user_rendering_only(as_viewer, harmony):
    body = as_viewer.get(url(harmony), {"limit": 1}).json()
    assert body["audience"] == "end_user"
    visible = [item["index"] for item in whole(harmony, "end_user")["items"]]
    assert body["total"] == len(visible) < 11  # the hidden channels are not counted
    assert [item["index"] for item in body["items"]] == visible[:1]
    assert all(item["visible_to_end_user"] for item in body["items"])
    for audience in ("annotator", "debug", "training"):
        response = as_viewer.get(url(harmony), {"audience": audience, "limit": 1})
        assert_error(response, 403, "E-PERM-VISIBILITY")
