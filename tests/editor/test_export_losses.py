"""The dataset page's export preview names the transcripts behind each loss (linked, a few,
then "and N more"), and never touches the table's filters (issue 31, item 10)."""

from __future__ import annotations

import re

import pytest

from editor import formats
from editor.exporting import LOSS_EXAMPLES
from editor.storage.create import create_transcript
from tests.editor.dataset_page import whole_page

pytestmark = pytest.mark.django_db

M = formats.Message
# A call id: ChatML cannot write it (a loss), OpenChatML 2.2 can.
WITH_CALL_ID = formats.Transcript(
    spec="openchatml-2.2",
    messages=[
        M(role="user", content="Weather?"),
        M(
            role="assistant",
            channel="commentary",
            recipient="functions.weather",
            call_id="c1",
            content="{}",
            end="call",
        ),
    ],
)


@pytest.fixture
def lossy(dataset, curator):
    text = formats.serialize(WITH_CALL_ID)
    return [
        create_transcript(
            dataset, text=text, spec="openchatml-2.2", author=curator, title=f"lossy {n}"
        )
        for n in range(LOSS_EXAMPLES + 2)
    ]


def preview(client, dataset, htmx=True, **options):
    headers = {"HX-Request": "true"} if htmx else {}
    query = {"format": "jsonl", "preview": "1", **options}
    return client.get(f"/datasets/{dataset.slug}/export/", query, headers=headers)


def test_each_loss_names_its_transcripts_linked_and_counts_the_rest(
    client, curator, dataset, lossy
):
    client.force_login(curator)
    html = preview(client, dataset, spec="chatml").content.decode()
    items = re.findall(r'<li data-field="([^"]+)">(.*?)</li>', html, re.S)
    assert items
    for _field, item in items:
        named = re.findall(r'<a href="/transcripts/(\d+)/"', item)
        assert len(named) == LOSS_EXAMPLES
        assert {int(pk) for pk in named} <= {t.pk for t in lossy}
        assert "and 2 more" in item
    assert "lossy 0" in html


def test_the_full_page_preview_keeps_the_table_unfiltered(client, curator, dataset, lossy):
    """Without JavaScript the page comes back whole: its table must not read the export's
    spec and statuses (same names as the filters') as filters."""
    client.force_login(curator)
    html = preview(client, dataset, htmx=False, spec="chatml").content.decode()
    assert 'data-testid="export-loss-summary"' in html
    rows = re.findall(r'<tr data-transcript="(\d+)"', html)
    assert len(rows) == len(lossy)  # none is in chatml: the spec was not read as a filter
    assert (
        'id="filter_spec"' in html
        and '<option value="chatml" selected>'
        not in html.split('id="filter_spec"')[1].split("</select>")[0]
    )


def test_the_check_button_asks_in_place(client, curator, dataset, lossy):
    client.force_login(curator)
    html = whole_page(client, f"/datasets/{dataset.slug}/")
    button = re.search(r'<button[^>]*data-testid="export-check"[^>]*>', html, re.S).group(0)
    assert 'hx-target="#export-preview"' in button and "hx-get=" in button
