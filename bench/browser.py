"""A live site and Chromium pages for the benchmarks that time what the user waits for in the
browser: the app served by a threaded WSGI server on 127.0.0.1 (production settings, plain
http) and Debian's Chromium driven by Playwright. Used inside a benchmark's child process
(``bench.databases``), after ``django.setup()``.

``logged_in_page``: one page whose session is a user's. ``live_site``: the server, a browser
and a user's session cookie, for a benchmark that opens a fresh context (empty cache) per run.
``live_server`` alone serves an HTTP client (``session_cookie`` logs it in).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]


@contextmanager
def live_server():
    """The app on a free port of 127.0.0.1: its base URL."""
    from django.core.wsgi import get_wsgi_application
    from django.urls import get_resolver

    # The URLconf is read before serving, as runserver's checks read it when it starts (the
    # API's schemas take seconds to build): no first request pays for it.
    get_resolver().check()
    server = ThreadedWSGIServer(("127.0.0.1", 0), _QuietHandler)
    server.set_app(get_wsgi_application())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def live_site(user):
    """``(browser, base_url, cookie)``: Chromium, the app and ``user``'s session cookie, for
    runs that each open a context of their own."""
    with live_server() as base:
        cookie = session_cookie(user, base)
        with _browser() as browser:
            yield browser, base, cookie


@contextmanager
def _browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def session_cookie(user, base: str) -> dict:
    """A session cookie of ``user`` for ``base``, in Playwright's shape. Made before
    Playwright starts: its event loop makes Django refuse database calls in that thread."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    return {"name": "sessionid", "value": cookie.value, "url": base}


@contextmanager
def logged_in_page(user, *, width: int = 1280, height: int = 800):
    """``(page, base_url)``: a Chromium page whose session is ``user``'s."""
    with live_server() as base:
        cookie = session_cookie(user, base)
        with _browser() as browser:
            context = browser.new_context(viewport={"width": width, "height": height})
            context.add_cookies([cookie])
            yield context.new_page(), base


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # one line a request would drown the figures
        pass
