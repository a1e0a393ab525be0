"""A live site and a logged-in Chromium page for the benchmarks that time what the user waits
for in the browser: the app served by a threaded WSGI server on 127.0.0.1 (production
settings, plain http) and Debian's Chromium driven by Playwright. Used inside a benchmark's
child process (``bench.databases``), after ``django.setup()``."""

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
def logged_in_page(user, *, width: int = 1280, height: int = 800):
    """``(page, base_url)``: a Chromium page whose session is ``user``'s."""
    from django.core.wsgi import get_wsgi_application
    from django.test import Client
    from playwright.sync_api import sync_playwright

    server = ThreadedWSGIServer(("127.0.0.1", 0), _QuietHandler)
    server.set_app(get_wsgi_application())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    client = Client()
    client.force_login(user)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": width, "height": height})
            cookie = client.cookies["sessionid"]
            context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": base}])
            try:
                yield context.new_page(), base
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # one line a request would drown the figures
        pass
