"""TranscriptQuerySet.matching and sorted_by: the one place transcript lists filter and sort."""

from datetime import date

import pytest

from editor.models import Transcript, TranscriptFilter

pytestmark = pytest.mark.django_db

EVERY = {"plain", "tool call", "analysis", "system prompt", "truncated", "json"}


@pytest.mark.parametrize(
    ("wanted", "titles"),
    [
        (TranscriptFilter(), EVERY),
        (TranscriptFilter(statuses=["approved"]), {"system prompt"}),
        (TranscriptFilter(statuses=["approved", "draft"]), EVERY),
        (TranscriptFilter(spec="openai-messages"), {"json"}),
        (TranscriptFilter(has_errors=True), {"truncated"}),
        (TranscriptFilter(has_errors=False), EVERY - {"truncated"}),
        (TranscriptFilter(code="E-STREAM-TRUNCATED"), {"truncated"}),
        (TranscriptFilter(code="W-HEADER-MISSING"), {"tool call"}),
        (TranscriptFilter(code="E-NO-SUCH-CODE"), set()),
        (TranscriptFilter(contains=["tool_calls"]), {"tool call"}),
        (TranscriptFilter(contains=["analysis"]), {"analysis"}),
        (TranscriptFilter(contains=["system_prompt"]), {"system prompt"}),
        (TranscriptFilter(contains=["analysis", "system_prompt"]), set()),
        (TranscriptFilter(updated_by="curator"), {"system prompt"}),
        (TranscriptFilter(updated_by="annotator"), EVERY - {"system prompt"}),
        (TranscriptFilter(updated_since=date(2021, 1, 1)), EVERY - {"plain"}),
        (TranscriptFilter(has_errors=False, code="W-HEADER-MISSING"), {"tool call"}),
        (TranscriptFilter(has_errors=True, code="W-HEADER-MISSING"), set()),
    ],
)
def test_each_filter_keeps_only_the_matching_transcripts(varied, wanted, titles):
    rows = Transcript.objects.summaries().matching(wanted)
    assert {row.title for row in rows} == titles


def test_a_code_is_matched_whole_not_as_a_substring(varied):
    assert not Transcript.objects.matching(TranscriptFilter(code="E-STREAM")).exists()


@pytest.mark.parametrize(
    ("sort", "first", "last"),
    [
        ("title", "analysis", "truncated"),
        ("-title", "truncated", "analysis"),
        ("-messages", "json", "plain"),  # plain and truncated tie: the higher id first
        ("-updated", "system prompt", "plain"),
        ("updated", "plain", "system prompt"),
    ],
)
def test_sorting(varied, sort, first, last):
    titles = [row.title for row in Transcript.objects.sorted_by(sort)]
    assert (titles[0], titles[-1]) == (first, last)


def test_ties_are_broken_by_id_in_the_same_direction(varied):
    by_errors = list(Transcript.objects.sorted_by("errors").values_list("error_count", "pk"))
    assert by_errors == sorted(by_errors)
    reverse = list(Transcript.objects.sorted_by("-errors").values_list("error_count", "pk"))
    assert reverse == sorted(reverse, reverse=True)
