"""Browser tests: pytest-playwright driving Debian's Chromium (never a downloaded browser).

Every test in this folder is marked `browser`; `-m "not browser"` skips them all.
"""

import os
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django's ORM refuses to run in
# a thread with a running loop unless told it is safe (it is: the loop is Playwright's).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(item.fspath).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture
def screenshot(page, request):
    """Save a full-page screenshot under tests/browser/screenshots/ (to look at, by humans)."""

    def take(name: str):
        SCREENSHOTS.mkdir(exist_ok=True)
        # caret="initial": hiding the caret makes Playwright insert a <style> element, which the
        # Content Security Policy blocks (a console error that tests watching the console see).
        page.screenshot(
            path=str(SCREENSHOTS / f"{request.node.name}-{name}.png"),
            full_page=True,
            caret="initial",
        )

    return take


def settled(page) -> None:
    """Wait until htmx has swapped and processed new content: a key pressed or a control
    clicked before that reaches content htmx has not taken over yet (a form then posts as a
    plain form, a link navigates)."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"
        # htmx marks each element it has taken over with its internal data.
        " && Array.from(document.querySelectorAll('[hx-get], [hx-post]'))"
        "      .every((element) => element['htmx-internal-data'])"
    )


@pytest.fixture
def console_errors(page):
    """Script errors and htmx's own error reports (an answer that found no target, …); an
    HTTP status such as a 409 or a 422 is an answer the page shows, not an error."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda m: (
            errors.append(m.text)
            if m.type == "error" and not m.text.startswith(NOT_ERRORS)
            else None
        ),
    )
    return errors


# A live validation still in flight when the message is saved is aborted on purpose
# (hx-sync); htmx logs every abort, and the afterRequest that comes with it, as an error.
# A failed request still shows as htmx:sendError or htmx:responseError.
NOT_ERRORS = ("Failed to load resource", "htmx:sendAbort", "htmx:afterRequest")
