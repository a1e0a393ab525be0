"""The transcript page's view of a transcript: pages built on demand, and the views of long
transcripts kept per process for the requests that follow, within a bound."""

import pytest

from editor import editing, formats
from editor.presentation import transcript_view as views
from editor.storage.create import create_transcript

pytestmark = pytest.mark.django_db


def chat(count: int) -> str:
    messages = [
        formats.Message(role="user" if n % 2 == 0 else "assistant", content=f"Message {n}")
        for n in range(count)
    ]
    return formats.serialize(formats.Transcript(spec="chatml", messages=messages))


def test_pages_and_the_page_of_a_message(dataset, curator):
    transcript = create_transcript(dataset, author=curator, text=chat(120), spec="chatml")
    view = views.transcript_view(transcript, "annotator")
    assert view.page_count == 3
    assert [turn.cards[0].index for turn in view.page(2)] == list(range(100, 120))
    assert [len(turns) for turns in (view.pages(0, 1),)] == [100]
    assert view.page_holding(99) == 1 and view.page_holding(100) == 2
    assert view.page_holding(10_000) == 2  # past the end: the last page
    assert view.card(57).index == 57 and view.card(500) is None


def test_a_long_transcripts_view_is_kept_until_its_version_changes(dataset, curator, monkeypatch):
    monkeypatch.setattr(views, "CACHED_VIEW_MIN_MESSAGES", 100)
    transcript = create_transcript(dataset, author=curator, text=chat(150), spec="chatml")
    first = views.transcript_view(transcript, "annotator")
    assert views.transcript_view(transcript, "annotator") is first
    assert views.transcript_view(transcript, "end_user") is not first
    result = editing.edit_message(
        transcript, 3, {"content": "Changed"}, expected_version=transcript.version, author=curator
    )
    after = views.transcript_view(result.transcript, "annotator")
    assert after is not first
    assert after.card(3).item.content == "Changed"


def test_the_views_kept_hold_a_bounded_number_of_messages(dataset, curator, monkeypatch):
    monkeypatch.setattr(views, "CACHED_VIEW_MIN_MESSAGES", 100)
    monkeypatch.setattr(views, "CACHED_VIEWS_MAX_MESSAGES", 400)
    monkeypatch.setattr(views, "_views", views.OrderedDict())
    transcripts = [
        create_transcript(dataset, author=curator, text=chat(150), spec="chatml") for _ in range(4)
    ]
    for transcript in transcripts:
        views.transcript_view(transcript, "annotator")
    held = sum(view.transcript.message_count for view in views._views.values())
    assert held <= 400 and len(views._views) == 2
    assert (
        transcripts[-1].pk,
        transcripts[-1].created_at,
        transcripts[-1].version,
        "annotator",
        None,  # no training convention: the annotator rendering
    ) in (views._views)


def test_one_stored_message_is_read_alone(dataset, curator, django_assert_num_queries):
    transcript = create_transcript(dataset, author=curator, text=chat(30), spec="chatml")
    with django_assert_num_queries(1):
        message = transcript.stored_message(17)
    assert message == transcript.stored_messages()[17]
    assert transcript.stored_message(30) is None
