"""Who has a transcript open, and the History panel following others' saves (issue 31,
item 11): ``editor.presence`` and the page's heartbeat."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from editor import editing, presence
from editor.models import Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


@pytest.fixture
def talk(dataset, annotator):
    return create_transcript(dataset, text=conversation(), spec="openchatml-2.2", author=annotator)


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def ping(client, transcript, seen):
    return client.post(f"/transcripts/{transcript.pk}/presence/", {"seen": seen}, headers=HX)


def test_each_page_sees_the_others_and_not_itself(talk, annotator, curator, viewer):
    assert presence.heartbeat(talk.pk, annotator) == []
    assert presence.heartbeat(talk.pk, curator) == ["annotator"]
    assert presence.heartbeat(talk.pk, viewer) == ["annotator", "curator"]
    assert presence.heartbeat(talk.pk, annotator) == ["curator", "viewer"]
    assert presence.heartbeat(talk.pk + 1, annotator) == []  # per transcript


def test_a_page_that_stopped_pinging_is_closed(talk, annotator, curator, monkeypatch):
    now = 1_000_000.0
    monkeypatch.setattr(presence.time, "time", lambda: now)
    presence.heartbeat(talk.pk, annotator)
    now += presence.STALE_SECONDS + 1
    assert presence.heartbeat(talk.pk, curator) == []


def test_the_page_pings_every_ten_seconds(talk, annotator):
    html = logged_in(annotator).get(f"/transcripts/{talk.pk}/").content.decode()
    element = html.split('id="presence"', 1)[1].split(">", 1)[0]
    assert f'hx-post="/transcripts/{talk.pk}/presence/"' in element
    assert 'hx-trigger="load, every 10s"' in element
    assert '"seen": 1' in element


def test_the_answer_names_the_others(talk, annotator, curator):
    ping(logged_in(curator), talk, 1)
    html = ping(logged_in(annotator), talk, 1).content.decode()
    assert "also open by curator" in html
    assert 'id="revisions"' not in html  # nothing saved since: no History panel
    # The answer waits for the next period (pinging as it loads would ping again at once).
    assert 'hx-trigger="every 10s"' in html


def test_the_history_panel_follows_others_saves(talk, annotator, curator):
    mine = logged_in(annotator)
    ping(mine, talk, 1)
    editing.edit_message(
        Transcript.objects.select_related("dataset").get(pk=talk.pk),
        1,
        {"content": "Theirs."},
        expected_version=1,
        author=curator,
    )
    html = ping(mine, talk, 1).content.decode()
    panel = html.split('id="revisions" hx-swap-oob="true"', 1)[1]
    assert 'data-revision="2"' in panel and "by curator" in panel
    assert "r2 by curator: reload to see it" in html
    # The page's own version and messages are left alone: no form is swapped.
    assert 'id="transcript-version"' not in html and "<form" not in html
    # The next ping says it heard of version 2: nothing more to swap.
    assert '"seen": 2' in html
    assert 'id="revisions"' not in ping(mine, talk, 2).content.decode()


def test_a_poll_costs_a_few_queries(talk, annotator, django_assert_max_num_queries):
    client = logged_in(annotator)
    ping(client, talk, 1)
    # session, user, the transcript with its dataset and the caller's role
    with django_assert_max_num_queries(3):
        ping(client, talk, 1)
    # and the revisions when someone saved
    with django_assert_max_num_queries(4):
        ping(client, talk, 0)


def test_outsiders_are_not_told(talk, outsider):
    assert ping(logged_in(outsider), talk, 1).status_code == 404
