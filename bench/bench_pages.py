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
``OCM_BENCH_DEBUG=true`` to serve with DEBUG settings instead, as ``make run`` does;
``OCM_BENCH_PAGES=dataset`` to measure the dataset page only (no log-in, no export), and
``OCM_BENCH_ROUNDS=N`` for more runs than 5.

On a shared machine, figures from different hours do not compare. ``OCM_BENCH_TURNS=FOLDER``
(another copy of the project, e.g. ``git archive`` of an older commit, with this file in it)
serves the same SQLite database from that tree too, in a process of its own, and loads the
dataset page from each server in turn, so both see the same load (SQLite only, the dataset
page only)::

    flock /tmp/bench.lock env OCM_BENCH_TURNS=/tmp/old OCM_BENCH_ROUNDS=9 \
        .venv/bin/python -m bench.bench_pages

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_pages
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench.databases import on_each_database

TRANSCRIPTS = 11_000
MESSAGES = 10
ROUNDS = int(os.environ.get("OCM_BENCH_ROUNDS", "5"))
PASSWORD = "a long bench passphrase"  # a throwaway user of a throwaway database
ROW = 'table[data-testid="transcripts"] tbody tr[data-transcript]'
# The sections below the table, each in place (fetched after the table since issue 34).
SECTIONS = [
    '[data-testid="members"]',
    '[data-testid="queues"], #queues p.muted',
    '[data-testid="import-form"]',
    '[data-testid="export-form"]',
]
TARGETS_MS = {"dataset page": 300, "log-in": 450, "export": 2500}


def run() -> None:
    if os.environ.get("OCM_BENCH_TURNS"):
        from bench.databases import _collect_static, _in_child

        _collect_static()
        with tempfile.TemporaryDirectory() as folder:
            os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(40))  # both servers'
            _in_child("bench.bench_pages", "SQLite", f"sqlite:///{Path(folder) / 'b.sqlite3'}")
        return
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

    if os.environ.get("OCM_BENCH_TURNS"):
        _in_turns(user, dataset, Path(os.environ["OCM_BENCH_TURNS"]))
        connections.close_all()
        return
    only_dataset_page = os.environ.get("OCM_BENCH_PAGES", "") == "dataset"
    with live_site(user) as (browser, base, cookie):
        _figures("dataset page: first row painted", _dataset_page(browser, base, cookie, dataset))
        if not only_dataset_page:
            _figures("log-in: submit to the landing page loaded", _login(browser, base))
    if not only_dataset_page:
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
  // When the last of the sections below the table is in the DOM.
  const sections = new MutationObserver(() => {
    if (SECTION_SELECTORS.every((s) => document.querySelector(s))) {
      sections.disconnect();
      window.__sectionsIn = performance.now();
    }
  });
  sections.observe(document, {childList: true, subtree: true});
})();
""".replace("ROW_SELECTOR", json.dumps(ROW)).replace("SECTION_SELECTORS", json.dumps(SECTIONS))


def _dataset_page(browser, base, cookie, dataset) -> dict[str, list[float]]:
    series: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        for name, at in _dataset_page_once(browser, base, cookie, dataset).items():
            series.setdefault(name, []).append(at)
    return series


def _dataset_page_once(browser, base, cookie, dataset) -> dict[str, float]:
    """One cold load of the dataset page in a fresh context: its figures, in ms."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.add_cookies([{**cookie, "url": base}])
    context.add_init_script(FIRST_ROW_WATCH)
    page = context.new_page()
    started = time.perf_counter()
    page.goto(f"{base}/datasets/{dataset.slug}/", wait_until="commit")
    page.wait_for_selector(ROW)
    wall = (time.perf_counter() - started) * 1000
    painted = _value_once_set(page, "window.__firstRowPainted")
    page.wait_for_load_state("load")
    page.wait_for_timeout(50)  # loadEventEnd is set once the load handlers have run
    figures = {"first row painted": painted}
    figures.update(page.evaluate(NAVIGATION_PHASES))
    figures["sections below the table in"] = _value_once_set(page, "window.__sectionsIn")
    figures["wall, goto to row"] = wall
    context.close()
    return figures


def _value_once_set(page, expression: str) -> float:
    """``expression`` once the page has set it. Polled from here: ``wait_for_function``
    evaluates its predicate with eval, which the site's Content Security Policy refuses."""
    while (value := page.evaluate(expression)) is None:
        page.wait_for_timeout(10)
    return value


def _in_turns(user, dataset, other: Path) -> None:
    """The dataset page from this tree's server and from ``other``'s, taking turns (which
    goes first alternates), after one load of each to compile their templates."""
    from bench.browser import live_site

    with live_site(user) as (browser, base, cookie), _other_server(other) as other_base:
        servers = {"this tree": base, f"{other}": other_base}
        for url in servers.values():
            _dataset_page_once(browser, url, cookie, dataset)
        series: dict[str, dict[str, list[float]]] = {name: {} for name in servers}
        for round_ in range(ROUNDS):
            order = list(servers.items())
            for name, url in order if round_ % 2 == 0 else reversed(order):
                for figure, at in _dataset_page_once(browser, url, cookie, dataset).items():
                    series[name].setdefault(figure, []).append(at)
        for name, figures in series.items():
            _figures(f"dataset page: first row painted, {name}", figures)


@contextmanager
def _other_server(tree: Path):
    """``tree``'s code serving this process's database: its base URL."""
    serve = subprocess.Popen(
        [sys.executable, "-m", "bench.bench_pages", "--serve"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield serve.stdout.readline().strip()
    finally:
        serve.stdin.close()
        serve.wait(timeout=30)


def _serve() -> None:
    """This tree's app on a free port (its base URL on stdout) until stdin closes."""
    os.environ["DJANGO_HTTPS_ONLY"] = "false"
    import django

    django.setup()
    from django.core.management import call_command

    from bench.browser import live_server

    call_command("collectstatic", interactive=False, verbosity=0)
    with live_server() as base:
        print(base, flush=True)
        sys.stdin.read()


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
    elif "--serve" in sys.argv:
        _serve()
    else:
        run()
