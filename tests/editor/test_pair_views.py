"""The pairs pages (editor/views/pairs.py): a transcript's pairs side by side with what
changed, a dataset's pairs filtered and paged, and Exclude / Include (htmx and plain)."""

from __future__ import annotations

import pytest
from django.test import Client

from editor import editing
from editor.models import PreferencePair, Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def edited(dataset, annotator, curator):
    transcript = create_transcript(
        dataset, text=conversation(), spec="openchatml-2.2", author=annotator, title="Two turns"
    )
    editing.edit_message(
        transcript, 1, {"content": "Answer 0, better."}, expected_version=1, author=annotator
    )
    current = Transcript.objects.get(pk=transcript.pk)
    editing.edit_message(current, 3, {"channel": "analysis"}, expected_version=2, author=curator)
    return transcript


def test_a_transcripts_pairs_side_by_side(edited, annotator, curator):
    response = client_for(annotator).get(f"/transcripts/{edited.pk}/pairs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('data-side="rejected"') == 2 and page.count('data-side="chosen"') == 2
    assert "Answer 0, better." in page and "Answer 0." in page
    assert '<span class="add">+Answer 0, better.</span>' in page  # the content's diff
    assert "<del>final</del> → <ins>analysis</ins>" in page  # a field's change
    mine = PreferencePair.objects.get(author=annotator)
    theirs = PreferencePair.objects.get(author=curator)
    # The annotator excludes its own pair, not the curator's.
    assert f'action="/pairs/{mine.pk}/exclude/"' in page
    assert f'action="/pairs/{theirs.pk}/exclude/"' not in page
    assert (
        'data-action="pairs"'
        in client_for(annotator).get(f"/transcripts/{edited.pk}/").content.decode()
    )


def test_viewers_and_outsiders_do_not_see_pairs(edited, viewer, outsider):
    pair = PreferencePair.objects.first()
    assert client_for(viewer).get(f"/transcripts/{edited.pk}/pairs/").status_code == 403
    assert client_for(viewer).get(f"/datasets/{edited.dataset.slug}/pairs/").status_code == 403
    assert client_for(viewer).post(f"/pairs/{pair.pk}/exclude/").status_code == 403
    assert client_for(outsider).get(f"/transcripts/{edited.pk}/pairs/").status_code == 404
    assert client_for(outsider).get(f"/datasets/{edited.dataset.slug}/pairs/").status_code == 404
    assert client_for(outsider).post(f"/pairs/{pair.pk}/exclude/").status_code == 404
    assert (
        'data-action="pairs"'
        not in client_for(viewer).get(f"/datasets/{edited.dataset.slug}/").content.decode()
    )


def test_exclude_and_include_with_htmx(edited, annotator, curator):
    mine = PreferencePair.objects.get(author=annotator)
    client = client_for(annotator)
    response = client.post(
        f"/pairs/{mine.pk}/exclude/", {"shown_as": "pair"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    card = response.content.decode()
    assert card.lstrip().startswith(f'<article class="card pair excluded" id="pair-{mine.pk}"')
    assert f"excluded by {annotator.username}" in card
    assert 'data-action="include"' in card
    assert PreferencePair.objects.get(pk=mine.pk).excluded_by == annotator

    theirs = PreferencePair.objects.get(author=curator)
    assert client.post(f"/pairs/{theirs.pk}/exclude/").status_code == 403

    row = client_for(curator).post(
        f"/pairs/{mine.pk}/include/", {"shown_as": "row"}, headers={"HX-Request": "true"}
    )
    assert row.content.decode().lstrip().startswith(f'<tr data-pair="{mine.pk}"')
    assert PreferencePair.objects.get(pk=mine.pk).excluded_at is None


def test_exclude_without_javascript_goes_back(edited, curator):
    pair = PreferencePair.objects.first()
    back = f"/datasets/{edited.dataset.slug}/pairs/?excluded=yes"
    response = client_for(curator).post(f"/pairs/{pair.pk}/exclude/", {"next": back})
    assert response.status_code == 302 and response["Location"] == back
    response = client_for(curator).post(
        f"/pairs/{pair.pk}/include/", {"next": "https://elsewhere.example/"}
    )
    assert response["Location"] == f"/transcripts/{edited.pk}/pairs/"


def test_a_datasets_pairs_filtered_and_paged(edited, annotator, curator, monkeypatch):
    slug = edited.dataset.slug
    client = client_for(curator)
    page = client.get(f"/datasets/{slug}/pairs/").content.decode()
    assert page.count("<tr data-pair=") == 2
    assert 'data-action="pairs"' in client.get(f"/datasets/{slug}/").content.decode()

    PreferencePair.objects.filter(author=annotator).update(excluded_at="2026-01-01T00:00Z")
    excluded = client.get(f"/datasets/{slug}/pairs/", {"excluded": "yes"}).content.decode()
    assert excluded.count("<tr data-pair=") == 1 and 'data-excluded="true"' in excluded
    included = client.get(f"/datasets/{slug}/pairs/", {"excluded": "no"}).content.decode()
    assert included.count("<tr data-pair=") == 1 and 'data-excluded="false"' in included
    imported = client.get(f"/datasets/{slug}/pairs/", {"source": "import"}).content.decode()
    assert 'data-testid="no-pairs"' in imported

    unknown = client.get(f"/datasets/{slug}/pairs/", {"source": "nonsense"})
    assert unknown.status_code == 200
    assert 'data-code="invalid-filter"' in unknown.content.decode()
    assert unknown.content.decode().count("<tr data-pair=") == 2

    from editor.views import pairs as pair_views

    monkeypatch.setattr(pair_views, "PAGE_SIZE", 1)
    first = client.get(f"/datasets/{slug}/pairs/").content.decode()
    second = client.get(f"/datasets/{slug}/pairs/", {"page": "2"}).content.decode()
    beyond = client.get(f"/datasets/{slug}/pairs/", {"page": "x"}).content.decode()
    assert first.count("<tr data-pair=") == 1 and 'rel="next"' in first
    assert second.count("<tr data-pair=") == 1 and 'rel="prev"' in second
    assert "page 1 of 2" in beyond


def test_more_pairs_cost_no_more_queries(edited, annotator, curator):
    """A list reads each pair's names with it: never one query (nor a revision's snapshot)
    per row."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(client, url) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    client = client_for(annotator)
    urls = [f"/datasets/{edited.dataset.slug}/pairs/", f"/transcripts/{edited.pk}/pairs/"]
    before = [queries(client, url) for url in urls]
    template = PreferencePair.objects.first()
    for author in (annotator, curator, annotator):
        template.pk = None
        template.author = author
        template.save()
    assert [queries(client, url) for url in urls] == before


def test_a_long_prompt_shows_its_last_messages_and_many_pairs_are_paged(
    edited, annotator, monkeypatch
):
    from editor.views import pairs as pair_views

    pair = PreferencePair.objects.get(author=annotator)
    pair.prompt = [{"role": "user", "content": f"Message {i}"} for i in range(10)]
    pair.save()
    client = client_for(annotator)
    page = client.get(f"/transcripts/{edited.pk}/pairs/").content.decode()
    assert "… 7 earlier messages, then:" in page
    assert "Message 6<" not in page and "Message 7<" in page and "Message 9<" in page

    monkeypatch.setattr(pair_views, "PAGE_SIZE", 1)
    first = client.get(f"/transcripts/{edited.pk}/pairs/").content.decode()
    second = client.get(f"/transcripts/{edited.pk}/pairs/", {"page": "2"}).content.decode()
    assert first.count("<article class=") == 1 and 'rel="next"' in first
    assert second.count("<article class=") == 1 and "page 2 of 2" in second
