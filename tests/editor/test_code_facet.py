"""The dataset page's diagnostic codes (issue 31, item 10): a facet of the codes present in
the filtered set, with counts, one click filtering by a code; each row names its codes."""

import re

import pytest

from editor import editing
from editor.db.json_items import rows_per_item_value
from editor.listing import TranscriptList
from editor.models import Transcript, TranscriptFilter

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def facet(html: str) -> dict[str, int]:
    part = html.split('data-testid="code-facet"', 1)[1].split("</nav>", 1)[0]
    return {code: int(n) for code, n in re.findall(r'data-code="([^"]+)" data-count="(\d+)"', part)}


def test_code_counts_count_transcripts_not_diagnostics(varied):
    listed = TranscriptList(varied["plain"].dataset, TranscriptFilter(search_hidden=True))
    counts = dict(listed.code_counts(5))
    assert counts["E-STREAM-TRUNCATED"] == 1
    assert counts["W-HEADER-MISSING"] == 1
    # Each transcript counted once however many diagnostics of the code it holds.
    every = Transcript.objects.filter(dataset=varied["plain"].dataset)
    holding = {
        code: sum(1 for t in every if any(d["code"] == code for d in t.diagnostics))
        for code in counts
    }
    assert counts == holding


def test_code_counts_follow_the_filters(varied):
    dataset = varied["plain"].dataset
    only_errors = TranscriptList(
        dataset, TranscriptFilter(has_errors=True, search_hidden=True)
    ).code_counts(1)
    assert "E-STREAM-TRUNCATED" in dict(only_errors)
    assert "W-HEADER-MISSING" not in dict(only_errors)
    assert (
        TranscriptList(dataset, TranscriptFilter(code="E-NO-SUCH", search_hidden=True)).code_counts(
            0
        )
        == []
    )


def test_an_empty_set_has_no_codes():
    rows = Transcript.objects.none()
    assert rows_per_item_value(rows, "diagnostics", "code") == []


def test_the_page_shows_the_facet_and_one_click_filters(client, curator, varied):
    dataset = varied["plain"].dataset
    client.force_login(curator)
    html = client.get(f"/datasets/{dataset.slug}/").content.decode()
    codes = facet(html)
    assert codes["E-STREAM-TRUNCATED"] == 1 and codes["W-HEADER-MISSING"] == 1
    link = re.search(
        r'href="([^"]+)" hx-get="[^"]+" class="facet[^"]*"\s+data-code="E-STREAM', html
    )
    assert link and "code=E-STREAM-TRUNCATED" in link.group(1)
    filtered = client.get(link.group(1).replace("&amp;", "&"), headers=HX).content.decode()
    assert re.findall(r'data-transcript="(\d+)"', filtered) == [str(varied["truncated"].pk)]
    # The chosen code is marked; clicking it again shows every code.
    assert 'aria-current="true"' in filtered
    again = re.search(r'href="([^"]+)" hx-get="[^"]+" class="facet[^"]* active"', filtered)
    assert again and "code=" not in again.group(1)


def test_each_row_names_its_codes(client, curator, varied):
    dataset = varied["plain"].dataset
    client.force_login(curator)
    html = client.get(f"/datasets/{dataset.slug}/").content.decode()
    row = html.split(f'data-transcript="{varied["truncated"].pk}"', 1)[1].split("</tr>", 1)[0]
    assert 'class="code-badge sev-error" data-code="E-STREAM-TRUNCATED"' in row
    clean = html.split(f'data-transcript="{varied["plain"].pk}"', 1)[1].split("</tr>", 1)[0]
    assert "code-badge" not in clean


def test_the_counts_are_kept_until_the_dataset_changes(
    client, curator, varied, django_assert_max_num_queries
):
    """One count statement; the next page views read it from the cache, until a save."""
    dataset = varied["plain"].dataset
    client.force_login(curator)

    def facet_queries():
        with django_assert_max_num_queries(40) as captured:
            html = client.get(f"/datasets/{dataset.slug}/").content.decode()
        return len([q for q in captured.captured_queries if "GROUP BY v" in q["sql"]]), html

    assert facet_queries()[0] == 1
    assert facet_queries()[0] == 0
    # A save changes what the facet counts: it is counted again, and says so.
    editing.replace_source(
        Transcript.objects.select_related("dataset").get(pk=varied["plain"].pk),
        "<|start|>user<|message|>cut short",
        as_draft=True,
        expected_version=Transcript.objects.get(pk=varied["plain"].pk).version,
        author=curator,
    )
    queries, html = facet_queries()
    assert queries == 1
    assert facet(html)["E-STREAM-TRUNCATED"] == 2


def test_a_long_facet_shows_the_most_held_and_folds_the_rest(client, curator, varied, monkeypatch):
    counts = [(f"E-CODE-{n:02}", 100 - n) for n in range(15)]
    monkeypatch.setattr(TranscriptList, "code_counts", lambda self, matches: counts)
    client.force_login(curator)
    html = client.get(f"/datasets/{varied['plain'].dataset.slug}/").content.decode()
    shown, folded = (
        html.split('data-testid="code-facet"', 1)[1]
        .split("</nav>", 1)[0]
        .split('<details class="more-codes">')
    )
    assert shown.count('class="facet ') == 12 and "E-CODE-00" in shown
    assert folded.count('class="facet ') == 3 and "3 more codes" in folded
