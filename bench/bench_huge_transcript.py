"""What one request costs on a 50,000-message Harmony transcript (the most a transcript may
hold, OCM_MAX_TRANSCRIPT_MESSAGES): server time (median of ``ROUNDS``) and the request's
peak of traced memory (tracemalloc, a separate run: tracing slows Python down), through the
Django stack. Issue 34, item 3: "one huge transcript pins the web workers".

Requests: the API's render pages (first and last, each audience), the whole rendering as
the route built it before it was paged (for comparison), the source page (first and last
window), the single-transcript export (own spec, converted, end user's) and the transcript
page (its first answer for each audience, G, a page as the list scrolls, the edit form).

Runs in a child process on a throwaway SQLite database and on PostgreSQL when a server
answers (``bench.databases``). ``OCM_BENCH_HUGE=page``: the transcript page's rows only.

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_huge_transcript
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import tracemalloc

from bench.databases import on_each_database

MESSAGES = 50_000
ROUNDS = 3


def run() -> None:
    on_each_database("bench.bench_huge_transcript")


def _child() -> None:
    os.environ["DJANGO_HTTPS_ONLY"] = "false"  # the test client speaks plain http
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from editor.formats.render import render
    from editor.models import ApiToken, Dataset, Membership, Role, Transcript
    from editor.presentation.training import training_rendering
    from editor.storage.create import create_transcript
    from tests.support.huge import huge_harmony

    call_command("migrate", verbosity=0)
    settings.OCM_MAX_TRANSCRIPT_MESSAGES = max(settings.OCM_MAX_TRANSCRIPT_MESSAGES, MESSAGES)
    user = get_user_model().objects.create_user("bench")
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    text = huge_harmony(MESSAGES)
    started = time.perf_counter()
    huge = create_transcript(dataset, text=text, spec="harmony", author=user)
    print(
        f"  {MESSAGES:,} messages, {len(text.encode()) / 1e6:.1f} MB of Harmony; "
        f"created in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    token = ApiToken.issue(user)[1]
    api = Client(headers={"Authorization": f"Bearer {token}"})
    browser = Client()
    browser.force_login(user)
    render_url = f"/api/v1/transcripts/{huge.pk}/render"

    def get(client, url, params=None):
        def step():
            response = client.get(url, params or {})
            assert response.status_code == 200, (url, response.status_code)
            return len(response.content)

        return step

    def whole(audience):
        def step():
            transcript = Transcript.objects.get(pk=huge.pk)
            if audience == "training":
                return len(str(training_rendering(transcript, None)))
            rendered = render(transcript.canonical(), audience, source_text=transcript.source_text)
            return len(str(rendered.to_dict()))

        return step

    if os.environ.get("OCM_BENCH_HUGE") == "page":  # the transcript page's rows only
        _transcript_page(browser, huge, user, get)
        return
    _measure("whole rendering, annotator (before: the route's answer)", whole("annotator"), 1)
    _measure("whole rendering, debug (before)", whole("debug"), 1)
    _measure("whole rendering, training (before)", whole("training"), 1)
    for audience in ("end_user", "annotator", "debug", "training"):
        _measure(f"API render {audience}, first page", get(api, render_url, {"audience": audience}))
        last = 19_999 if audience == "end_user" else MESSAGES - 1
        _measure(
            f"API render {audience}, last page",
            get(api, render_url, {"audience": audience, "offset": last}),
        )
    # Where each training page begins is kept per version (render_pages._page_layout): the
    # last page with nothing kept reads every row before it, as after a new version.
    training_last = get(api, render_url, {"audience": "training", "offset": MESSAGES - 1})
    _measure("API render training, last page, nothing kept", _forgetting(training_last))
    source_url = f"/transcripts/{huge.pk}/source/"
    _measure("source page, first window", get(browser, source_url))
    _measure("source page, last window", get(browser, source_url, {"at": len(text) - 1}))
    export_url = f"/api/v1/transcripts/{huge.pk}/export"
    _measure("API export, own spec", get(api, export_url))
    _measure("API export, to openai-messages", get(api, export_url, {"spec": "openai-messages"}))
    _measure("API export, end user's", get(api, export_url, {"audience": "end_user"}))
    _transcript_page(browser, huge, user, get)


def _transcript_page(browser, huge, user, get) -> None:
    """The transcript page keeps its view per process (transcript_view): its first answer,
    with nothing kept, and the next ones; G (the window of the last message), the next page
    as the list scrolls and the edit form, with nothing kept."""
    from django.test import Client

    page_url = f"/transcripts/{huge.pk}/"
    for audience in ("end_user", "annotator", "debug", "training"):
        page = get(browser, page_url, {"audience": audience})
        _measure(f"transcript page, {audience} (first answer)", _forgetting(page), 1)
        _measure(f"transcript page, {audience} (view kept)", page)
    last = {"audience": "annotator", "goto": MESSAGES - 1}
    _measure(
        "transcript page, annotator, G (first answer)", _forgetting(get(browser, page_url, last)), 1
    )
    htmx = Client(headers={"HX-Request": "true"})
    htmx.force_login(user)
    scrolled = get(htmx, page_url, {"audience": "annotator", "page": 500})
    _measure("transcript page, annotator, page 500 (nothing kept)", _forgetting(scrolled), 1)
    edit = {"audience": "annotator", "goto": 31_337, "edit": 31_337}
    _measure(
        "transcript page, annotator, edit form (nothing kept)",
        _forgetting(get(browser, page_url, edit)),
        1,
    )


def _forgetting(step):
    """``step`` with nothing kept from the runs before it: the shared cache and the views
    each process keeps."""
    from django.core.cache import cache

    from editor.presentation import transcript_view

    def forgetful():
        cache.clear()
        with transcript_view._views_lock:
            transcript_view._views.clear()
        return step()

    return forgetful


def _measure(label: str, step, rounds: int = ROUNDS) -> None:
    size = step()  # warm-up: first queries, template compilation
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    try:
        step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    print(
        f"  {label:58} {statistics.median(times) * 1000:8.0f} ms  "
        f"peak {peak / 1024**2:7.1f} MB  answer {size / 1024**2:6.2f} MB",
        flush=True,
    )


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child()
    else:
        run()
