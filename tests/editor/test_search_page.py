"""A page of a text search (editor.search.search_page): whichever way it is found — the
few matches read first, the sorted transcripts looked into one by one, or every match — it
holds the same transcripts, in the same order, with the same snippets, as the page of the
exact set of matches. Runs on SQLite (FTS5) and PostgreSQL (GIN)."""

import pytest
from django.urls import reverse

from editor import formats
from editor.listing import search
from editor.models import Message, Transcript
from tests.conftest import make_transcript

pytestmark = pytest.mark.django_db

M = formats.Message
PER_PAGE = 4

# The settings that send a search down each of search_page's ways.
PAST_ESTIMATES = {"PROBE_MATCHES": 0, "EXACT_COUNT_LIMIT": 0, "SAMPLE_TRANSCRIPTS": 5}
WAYS = {
    "few matches": {},
    "each looked into, counted": {"PROBE_MATCHES": 0},
    "looked into in order": {**PAST_ESTIMATES, "WALK_BUDGET": 10**6},
    "every match": {**PAST_ESTIMATES, "WALK_BUDGET": 0},
}


@pytest.fixture
def beacons(dataset, annotator):
    """24 transcripts: "beacon" where the end user sees it in two of every three, at
    different places and in different numbers of messages; in an analysis (hidden) in the
    others, two of which (t00, t12) have no beacon at all."""
    for n in range(24):
        messages = [M(role="user", content=f"Opening {n}.")] * (n % 5)
        if n % 3:
            messages += [
                M(role="user", content=f"First beacon of t{n:02}."),
                M(role="assistant", channel="final", content=f"Second beacon of t{n:02}."),
            ]
        elif n % 4:
            messages += [M(role="assistant", channel="analysis", content=f"Hidden beacon {n}.")]
        messages.append(M(role="user", content="Thanks."))
        make_transcript(dataset, annotator, f"{'zyxwvutsrqponmlkjihgfedcba'[n]}-t{n:02}", *messages)
    return dataset


def exact(dataset, text, search_hidden, sort):
    rows = Transcript.objects.filter(dataset=dataset).sorted_by(sort)
    return list(rows.containing(text, search_hidden).values_list("pk", flat=True))


def searched(dataset, text, search_hidden, sort, number):
    rows = Transcript.objects.filter(dataset=dataset).summaries().sorted_by(sort)
    return search.search_page(rows, text, search_hidden, number, PER_PAGE)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("sort", ["-updated", "title", "-messages", "errors", "id"])
@pytest.mark.parametrize("search_hidden", [True, False])
def test_every_way_finds_the_pages_of_the_exact_search(
    beacons, monkeypatch, way, sort, search_hidden
):
    for name, value in WAYS[way].items():
        monkeypatch.setattr(search, name, value)
    expected = exact(beacons, "beacon", search_hidden, sort)
    assert len(expected) == (22 if search_hidden else 16)
    pages = []
    for number in range(1, 10):
        page = searched(beacons, "beacon", search_hidden, sort, number)
        estimated = isinstance(page.paginator, search.EstimatedPaginator)
        assert estimated == (way == "looked into in order")
        pages.append([transcript.pk for transcript in page])
        assert page.has_next() == (number * PER_PAGE < len(expected))
        if not page.has_next():
            break
    assert [pk for rows in pages for pk in rows] == expected


@pytest.mark.parametrize("way", WAYS)
def test_every_way_cuts_snippets_from_the_first_matching_message(beacons, monkeypatch, way):
    for name, value in WAYS[way].items():
        monkeypatch.setattr(search, name, value)
    for number in (1, 2):
        for transcript in searched(beacons, "beacon", False, "title", number):
            n = transcript.title[-2:]
            assert transcript.snippet == f"First <mark>beacon</mark> of t{n}."


def test_a_search_without_a_match_is_an_empty_page_on_every_way(beacons, monkeypatch):
    for way in WAYS.values():
        for name, value in way.items():
            monkeypatch.setattr(search, name, value)
        page = searched(beacons, "lighthouse", True, "-updated", 1)
        assert list(page) == []
        assert page.paginator.count == 0


def test_long_lists_with_many_matches_get_an_estimate_never_below_what_was_seen(
    beacons, monkeypatch
):
    for name, value in PAST_ESTIMATES.items():
        monkeypatch.setattr(search, name, value)
    monkeypatch.setattr(search, "SAMPLE_TRANSCRIPTS", 6)  # the first six by title: 4 match
    page = searched(beacons, "beacon", False, "title", 1)
    assert isinstance(page.paginator, search.EstimatedPaginator)
    assert page.paginator.count == 16  # 4/6 of the 24
    assert (page.start_index(), page.end_index()) == (1, 4)
    page = searched(beacons, "beacon", False, "title", 4)
    assert page.paginator.count >= 16
    assert (page.start_index(), page.end_index(), page.has_next()) == (13, 16, False)


def test_many_matches_in_a_short_list_are_counted_exactly(beacons, monkeypatch):
    monkeypatch.setattr(search, "PROBE_MATCHES", 0)
    page = searched(beacons, "beacon", False, "title", 2)
    assert not isinstance(page.paginator, search.EstimatedPaginator)
    assert (page.paginator.count, page.paginator.num_pages) == (16, 4)


def test_a_page_past_the_end_of_an_estimate_is_the_last_page(beacons, monkeypatch):
    for name, value in PAST_ESTIMATES.items():
        monkeypatch.setattr(search, name, value)
    page = searched(beacons, "beacon", False, "title", 40)
    assert page.number == 4
    assert len(page) == 4
    assert page.paginator.count == 16  # exact: every match was found to get there


@pytest.mark.parametrize("search_hidden", [True, False])
@pytest.mark.parametrize("query", ["beacon", "first beacon", "t07", "Hidden", "nothing", '"', ""])
def test_a_message_looked_up_matches_as_in_the_whole_search(beacons, query, search_hidden):
    probed = Message.objects.probed_for(query, search_hidden)
    assert set(probed) == set(Message.objects.containing(query, search_hidden))
    rows = Transcript.objects.filter(dataset=beacons)
    assert set(rows.probed_for(query, search_hidden)) == set(rows.containing(query, search_hidden))


def test_the_page_says_an_estimate_is_one(client, annotator, beacons, monkeypatch):
    for name, value in PAST_ESTIMATES.items():
        monkeypatch.setattr(search, name, value)
    monkeypatch.setattr("editor.views.datasets.PAGE_SIZE", PER_PAGE)
    client.force_login(annotator)
    url = reverse("dataset", args=[beacons.slug])
    html = client.get(url, {"q": "beacon", "sort": "title"}).content.decode()
    assert 'data-estimated="true"' in html
    assert "about " in html
    assert 'rel="next"' in html
    assert 'rel="last"' not in html  # no last page of an estimate
    html = client.get(url, {"q": "beacon", "sort": "title", "page": 2}).content.decode()
    assert "First <mark>beacon</mark> of t" in html
    assert 'rel="prev"' in html


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("sort", ["-updated", "title"])
@pytest.mark.parametrize("search_hidden", [True, False])
def test_every_way_lists_the_exact_search_for_the_api(
    beacons, monkeypatch, way, sort, search_hidden
):
    for name, value in WAYS[way].items():
        monkeypatch.setattr(search, name, value)
    rows = Transcript.objects.filter(dataset=beacons).sorted_by(sort)
    listed = search.rows_containing(rows, "beacon", search_hidden, rows_needed=PER_PAGE)
    expected = exact(beacons, "beacon", search_hidden, sort)
    assert list(listed.values_list("pk", flat=True)) == expected
    assert listed.count() == len(expected)
    assert list(listed.values_list("pk", flat=True)[PER_PAGE : 2 * PER_PAGE]) == expected[4:8]


def test_the_api_lists_a_search_in_order(client, annotator, beacons, monkeypatch):
    monkeypatch.setattr(search, "PROBE_MATCHES", 0)
    monkeypatch.setattr(search, "SAMPLE_TRANSCRIPTS", 5)
    client.force_login(annotator)
    url = f"/api/v1/datasets/{beacons.slug}/transcripts"
    answer = client.get(url, {"q": "beacon", "sort": "title", "limit": 5, "offset": 5}).json()
    expected = exact(beacons, "beacon", True, "title")
    assert answer["count"] == len(expected)
    assert [item["id"] for item in answer["items"]] == expected[5:10]
