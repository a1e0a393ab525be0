"""Lists at real size (issue 10): a dataset of 1,000 small transcripts (20 messages each;
``OCM_BENCH_LIST_TRANSCRIPTS`` sets how many, e.g. 100000 for the issue's target size) and
three of 10,000 messages (~4 MB each).

* a page of the transcript list (50 rows, the long transcripts among them): the query alone
  (summary columns and the stored ``message_count``) and the API route;
* the dataset page (first page, sorted by last change; a filtered page) and the dashboard;
* the codes' facet of the dataset page (every other small transcript has two diagnostics):
  the count query over every transcript and over a filter, and the page filtered by a code;
* text search on the dataset page: a word in every transcript (as a curator and as a viewer,
  who searches only what the end user sees; first page, and a later page in another order)
  and words in the long transcripts' tool calls.

Runs once per database, each in a child process with a throwaway database
(``bench.databases``).

    .venv/bin/python -m bench.bench_lists          # or `make bench` (every benchmark)
"""

from __future__ import annotations

import os

from bench.bench_editor import long_transcript
from bench.databases import on_each_database
from bench.report import get_page, main, timed

SMALL_TRANSCRIPTS = int(os.environ.get("OCM_BENCH_LIST_TRANSCRIPTS", "1000"))
# "Plus a few of 10,000 messages" (issue 10's size): a list's cost must not depend on them.
LONG_TRANSCRIPTS = 3
LONG_MESSAGES = 10_000


def run() -> None:
    on_each_database("bench.bench_lists")


def _child() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connections
    from django.test import Client

    from bench.fixtures import add_transcripts, bench_dataset
    from editor import formats
    from editor.db import planner_stats
    from editor.listing import TranscriptList
    from editor.models import Membership, Message, Role, Transcript, TranscriptFilter
    from editor.storage.content import TranscriptContent
    from editor.storage.create import NewTranscript, create_transcripts

    user, dataset = bench_dataset()
    viewer = get_user_model().objects.create_user("bench-viewer")
    Membership.objects.create(user=viewer, dataset=dataset, role=Role.VIEWER)

    big = TranscriptContent.from_text(
        long_transcript(formats, LONG_MESSAGES, 500), "openchatml-2.2"
    )
    small_text = long_transcript(formats, 20, 100)
    small = TranscriptContent.from_text(small_text, "openchatml-2.2")
    # Every other small transcript has two diagnostics (no header, cut short): what the
    # codes' facet counts and each row shows.
    body = small_text.split("---\n", 2)[-1].rstrip()
    flawed = TranscriptContent.from_text(body[: body.rfind("<|")], "openchatml-2.2")
    long_ones = [NewTranscript(big, title=f"long {n}") for n in range(LONG_TRANSCRIPTS)]
    create_transcripts(dataset, long_ones, author=user)
    add_transcripts(dataset, user, SMALL_TRANSCRIPTS, lambda n: flawed if n % 2 else small)
    # As an import of this size ends (and autovacuum would soon after any bulk write): the
    # planner's statistics. Without them PostgreSQL's first searches scan instead of using
    # the GIN index (seconds instead of milliseconds; docs/performance.md, Text search).
    planner_stats.refresh(Transcript, Message)
    print(
        f"  ({LONG_TRANSCRIPTS} transcripts of {LONG_MESSAGES:,} messages, "
        f"{len(big.source_text) / 1e6:.1f} MB each, "
        f"{SMALL_TRANSCRIPTS:,} of 20 messages)"
    )

    timed(
        "list page query: summaries()",
        lambda n: list(Transcript.objects.filter(dataset=dataset).summaries().order_by("pk")[:50]),
    )
    client = Client()
    client.force_login(user)
    timed(
        "API list, first page",
        lambda n: get_page(client, f"/api/v1/datasets/{dataset.slug}/transcripts"),
    )
    timed("dataset page, first page", lambda n: get_page(client, f"/datasets/{dataset.slug}/"))
    timed(
        "dataset page, filtered, page 10",
        lambda n: get_page(
            client,
            f"/datasets/{dataset.slug}/",
            {"has": "tool_calls", "code": "W-HEADER-MISSING", "sort": "-messages", "page": 10},
        ),
    )
    timed("dashboard", lambda n: get_page(client, "/"))
    # The count itself, as the first view after a change makes it (later views read it from
    # the cache: the dataset page timings above).
    every = TranscriptList(dataset, TranscriptFilter())
    timed("codes' facet, counted: every transcript", lambda n: _uncached(every))
    with_errors = TranscriptList(dataset, TranscriptFilter(has_errors=True, spec="openchatml-2.2"))
    timed("codes' facet, counted: with errors", lambda n: _uncached(with_errors))
    timed(
        "dataset page, filtered by a code (facet click)",
        lambda n: get_page(client, f"/datasets/{dataset.slug}/", {"code": "E-STREAM-TRUNCATED"}),
    )
    timed(
        "dataset page, search: in every transcript",
        lambda n: get_page(client, f"/datasets/{dataset.slug}/", {"q": "harbour"}),
    )
    timed(
        "same search, sorted by title, page 3",
        lambda n: get_page(
            client, f"/datasets/{dataset.slug}/", {"q": "harbour", "sort": "title", "page": 3}
        ),
    )
    as_viewer = Client()
    as_viewer.force_login(viewer)
    timed(
        "same search, as a viewer",
        lambda n: get_page(as_viewer, f"/datasets/{dataset.slug}/", {"q": "harbour"}),
    )
    # Only the long transcripts have 1,400 turns; a call's arguments are hidden content.
    timed(
        "dataset page, search: in a tool call",
        lambda n: get_page(client, f"/datasets/{dataset.slug}/", {"q": "tides 1400"}),
    )
    connections.close_all()  # before the parent drops the database


def _uncached(listed):
    from django.core.cache import cache

    cache.clear()
    return listed.code_counts(0)


if __name__ == "__main__":
    main(run, _child)
