"""What the user waits for on a dataset of 11,000 ten-turn transcripts (issue 34's targets):

* the dataset page, cold (a fresh browser context: empty cache, no connection kept): from
  navigation start until the first transcript row is in the DOM and painted (target: under
  300 ms), and until the page's load event;
* log-in: the login page opened, the form filled and submitted; from the submission until
  the landing page is loaded (target: under 0.45 s), on the landing page's own clock (the
  POST and its redirect are one navigation), and the whole by the wall clock;
* the converted export: the 11,000 transcripts as openai-messages through the API route a
  user calls (``GET /api/v1/datasets/{slug}/export?spec=openai-messages``) timed to its last
  byte (target: under 2.5 s), beside ``export_dataset`` in process (wall and CPU time: on a
  shared machine the CPU time is the figure that compares).

Medians of ``ROUNDS`` runs each, on a threaded WSGI server and Debian's Chromium
(``bench.browser``). Runs in a child process on a throwaway SQLite database and on PostgreSQL
when a server answers (``bench.databases``), with production settings on plain http; set
``OCM_BENCH_DEBUG=true`` to serve with DEBUG settings instead, as ``make run`` does.

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_pages
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.databases import on_each_database

TRANSCRIPTS = 11_000
MESSAGES = 10
ROUNDS = 5
PASSWORD = "a long bench passphrase"  # a throwaway user of a throwaway database
ROW = 'table[data-testid="transcripts"] tbody tr[data-transcript]'
TARGETS_MS = {"dataset page": 300, "log-in": 450, "export": 2500}


def run() -> None:
    on_each_database("bench.bench_pages")


def _child() -> None:
    os.environ["DJANGO_HTTPS_ONLY"] = "false"  # the live site below is plain http
    if os.environ.get("OCM_BENCH_DEBUG", "").lower() in {"1", "true", "yes"}:
        os.environ["DJANGO_DEBUG"] = "true"  # what `make run` serves
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections

    from bench.browser import live_site
    from editor.models import Membership, Role

    call_command("migrate", verbosity=0)
    print(f"  settings: DEBUG={settings.DEBUG}", flush=True)
    user = get_user_model().objects.create_user("bench", password=PASSWORD)
    dataset = _loaded_dataset()
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)

    with live_site(user) as (browser, base, cookie):
        _figures("dataset page: first row painted", _dataset_page(browser, base, cookie, dataset))
        _figures("log-in: submit to the landing page loaded", _login(browser, base))
    _export(user, dataset)
    connections.close_all()  # before the parent drops the database


def _loaded_dataset():
    """11,000 transcripts of ten messages in one dataset, imported as a user would."""
    import bench.bench_storage as storage
    from editor import formats
    from editor.importing import import_transcripts
    from editor.models import Dataset

    dataset = Dataset.objects.create(name="Bench", slug="bench")
    storage.TRANSCRIPTS = TRANSCRIPTS  # bench_storage writes its own JSONL, this many lines
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "bench.jsonl"
        storage._write_jsonl(source, formats)
        started = time.perf_counter()
        report = import_transcripts(source, dataset=dataset)
    created = report.counts["created"]
    print(
        f"  imported {created:,} transcripts in {time.perf_counter() - started:.1f} s", flush=True
    )
    return dataset


# Set at document start in every page: when the first transcript row enters the DOM, the time
# of the next frame after it (the row painted), in ms since navigation start.
FIRST_ROW_WATCH = """
(() => {
  const seen = () => document.querySelector(ROW_SELECTOR);
  const mark = () => requestAnimationFrame(() => setTimeout(() => {
    window.__firstRowPainted = performance.now();
  }, 0));
  const observer = new MutationObserver(() => {
    if (seen()) { observer.disconnect(); mark(); }
  });
  observer.observe(document, {childList: true, subtree: true});
})();
""".replace("ROW_SELECTOR", json.dumps(ROW))


def _dataset_page(browser, base, cookie, dataset) -> dict[str, list[float]]:
    painted, wall = [], []
    phases: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_cookies([cookie])
        context.add_init_script(FIRST_ROW_WATCH)
        page = context.new_page()
        started = time.perf_counter()
        page.goto(f"{base}/datasets/{dataset.slug}/", wait_until="commit")
        page.wait_for_selector(ROW)
        wall.append((time.perf_counter() - started) * 1000)
        page.wait_for_function("window.__firstRowPainted !== undefined")
        page.wait_for_load_state("load")
        page.wait_for_timeout(50)  # loadEventEnd is set once the load handlers have run
        painted.append(page.evaluate("window.__firstRowPainted"))
        for name, at in page.evaluate(NAVIGATION_PHASES).items():
            phases.setdefault(name, []).append(at)
        context.close()
    return {"first row painted": painted, **phases, "wall, goto to row": wall}


# Where the time goes, in ms since navigation start: the server's answer, the document
# read, the first paint and the load event (scripts and styles fetched).
NAVIGATION_PHASES = """() => {
  const n = performance.getEntriesByType('navigation')[0];
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  return {
    'response, first byte': n.responseStart,
    'response, last byte': n.responseEnd,
    'DOMContentLoaded': n.domContentLoadedEventEnd,
    'first contentful paint': paint ? paint.startTime : NaN,
    'load event': n.loadEventEnd,
  };
}"""


def _login(browser, base) -> dict[str, list[float]]:
    """Each run in a fresh context: the login page opened (its styles and scripts fetched),
    then the form submitted. The landing page's clock starts at the submission (the POST and
    its redirect are one navigation), so its figures leave out Playwright's own overhead."""
    whole, landed = [], []
    phases: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        started = time.perf_counter()
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_username", "bench")
        page.fill("#id_password", PASSWORD)
        page.click('[data-testid="login-form"] button[type="submit"]')
        page.wait_for_selector('[data-testid="current-user"]')
        page.wait_for_load_state("load")
        whole.append((time.perf_counter() - started) * 1000)
        page.wait_for_timeout(50)  # loadEventEnd is set once the load handlers have run
        for name, at in page.evaluate(NAVIGATION_PHASES).items():
            phases.setdefault(f"submit → {name}", []).append(at)
        landed.append(page.evaluate("performance.getEntriesByType('navigation')[0].redirectEnd"))
        context.close()
    return {
        **phases,
        "submit → redirected (POST done)": landed,
        "wall: open, fill, submit, loaded": whole,
    }


def _export(user, dataset) -> None:
    """The route a user calls, read to its last byte over HTTP, and ``export_dataset`` alone."""
    import httpx

    from bench.browser import live_server, session_cookie
    from editor.exporting import export_dataset

    over_http, in_process, in_process_cpu, sizes = [], [], [], set()
    with live_server() as base:
        cookie = session_cookie(user, base)
        url = f"{base}/api/v1/datasets/{dataset.slug}/export?spec=openai-messages"
        with httpx.Client(cookies={cookie["name"]: cookie["value"]}, timeout=120) as client:
            for _ in range(ROUNDS):
                started = time.perf_counter()
                with client.stream("GET", url) as response:
                    response.raise_for_status()
                    size = sum(len(chunk) for chunk in response.iter_raw())
                over_http.append((time.perf_counter() - started) * 1000)
                sizes.add(size)
                started, cpu = time.perf_counter(), time.process_time()
                for _line in export_dataset(dataset, spec="openai-messages"):
                    pass
                in_process.append((time.perf_counter() - started) * 1000)
                in_process_cpu.append((time.process_time() - cpu) * 1000)
    _figures(
        f"export to openai-messages ({TRANSCRIPTS:,}, {max(sizes) / 1e6:.1f} MB)",
        {
            "GET …/export, last byte": over_http,
            "export_dataset in process": in_process,
            # CPU time: what the export costs, however busy the machine is
            "export_dataset in process, CPU": in_process_cpu,
        },
    )


def _figures(label: str, series: dict[str, list[float]]) -> None:
    target = next(ms for name, ms in TARGETS_MS.items() if label.startswith(name))
    print(f"  {label} (target under {target:,} ms)", flush=True)
    for name, times in series.items():
        print(
            f"    {name:32} p50 {statistics.median(times):8.1f} ms"
            f"   min {min(times):8.1f}   max {max(times):8.1f}   ({len(times)} runs)",
            flush=True,
        )


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child()
    else:
        run()
