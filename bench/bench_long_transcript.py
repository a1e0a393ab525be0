"""A 10,000-message transcript, as the annotator waits for it (issue 31's targets):

* a deep link to message #9,900 in the browser: from navigation until that message is shown
  and current (target: within 1 s), and how many message elements the page then holds;
* ``G`` (the last message) from the top of the transcript, until #9,999 is shown and current,
  and the page's size after it (target: a few hundred message elements at most);
* server time of the edit form of message #9,990 (target: under 300 ms) and of one more page
  of messages as the list scrolls.

Runs in a child process on a throwaway SQLite database and on PostgreSQL when a server
answers (``bench.databases``); the browser is Debian's Chromium (``bench.browser``).

    .venv/bin/python -m bench.bench_long_transcript
"""

from __future__ import annotations

import os
import statistics
import time

from bench.databases import on_each_database
from bench.report import main

MESSAGES = 10_000
BROWSER_ROUNDS = 5


def run() -> None:
    on_each_database("bench.bench_long_transcript")


def _child() -> None:
    os.environ["DJANGO_HTTPS_ONLY"] = "false"  # the live site below is plain http
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from bench.bench_editor import long_transcript
    from bench.browser import logged_in_page
    from bench.report import timed
    from editor import formats
    from editor.models import Dataset, Membership, Role
    from editor.storage.create import create_transcript

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench")
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)
    text = long_transcript(formats, MESSAGES, 180)
    long = create_transcript(dataset, text=text, spec="openchatml-2.2", author=user)
    page_url = f"/transcripts/{long.pk}/?audience=annotator"

    client = Client()
    client.force_login(user)
    hx = {"HX-Request": "true"}
    timed(
        "server: edit form of message #9,990",
        lambda n: client.get(f"/transcripts/{long.pk}/messages/9990/edit/", headers=hx),
    )
    timed(
        "server: one more page of messages (#7,500)",
        lambda n: client.get(page_url + "&page=150", headers=hx),
    )

    with logged_in_page(user) as (page, base):
        deep_link, jump = [], []
        for _ in range(BROWSER_ROUNDS):
            started = time.perf_counter()
            page.goto(f"{base}/transcripts/{long.pk}/?goto=9900")
            page.wait_for_selector('#message-9900[aria-current="true"]')
            deep_link.append((time.perf_counter() - started) * 1000)
        deep_link_dom = _dom(page)
        for _ in range(BROWSER_ROUNDS):
            page.goto(base + page_url)
            page.wait_for_selector("#message-0")
            page.wait_for_load_state("load")
            started = time.perf_counter()
            page.keyboard.press("Shift+G")
            page.wait_for_selector(f'#message-{MESSAGES - 1}[aria-current="true"]')
            jump.append((time.perf_counter() - started) * 1000)
        jump_dom = _dom(page)
    _browser_figure("browser: deep link to #9,900, until shown", deep_link, deep_link_dom)
    _browser_figure("browser: G from the top, until #9,999 shown", jump, jump_dom)
    connections.close_all()  # before the parent drops the database


def _dom(page) -> tuple[int, int]:
    return page.evaluate(
        "() => [document.querySelectorAll('#message-list .message').length,"
        " document.getElementsByTagName('*').length]"
    )


def _browser_figure(label: str, times: list[float], dom: tuple[int, int]) -> None:
    print(
        f"  {label:58} p50 {statistics.median(times):7.1f} ms   max {max(times):7.1f} ms"
        f"   {dom[0]} messages, {dom[1]} elements in the page",
        flush=True,
    )


if __name__ == "__main__":
    main(run, _child)
