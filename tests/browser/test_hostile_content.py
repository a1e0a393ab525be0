"""Hostile transcripts in every view: nothing executes, layouts hold, content stays as written.

One transcript carries script, event handlers, `javascript:`/`data:` links and images, HTML
comments, CSS, right-to-left overrides, zero-width characters, control tokens and a very long
single token in its bodies, names, recipients, call ids, title, metadata and YAML header. A
curator then walks every page that shows it (dashboard, dataset table and search, each
rendering, source, history and a diff, restore, conflict, label schemas, queue, claimed item,
import report); a viewer walks the ones a viewer may see. Any dialog, any console error (a
CSP violation included) or any element carrying an event handler or a script URL fails it.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor import labels, queues
from editor.editing import edit_message
from editor.models import Dataset, Membership, Role, Transcript
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.browser.conftest import SCREENSHOTS, settled
from tests.browser.test_editor import PASSWORD, log_in

XSS = "<script>alert('x')</script><img src=x onerror=alert('img')>"
INVISIBLE = "\u202etxt.exe\u202c \u200b\u200d\ufeff"
LONG_TOKEN = "A" * 1_000_000  # one megabyte: took Chromium 54 s to lay out in system-ui
HOSTILE_TEXT = (
    "---\n"
    f"title: \"<svg onload=alert('yaml')> {INVISIBLE}\"\n"
    "version: 2.2\n"
    "---\n"
    f"<|start|>system<|message|>{XSS}<!-- comment --><style>body{{display:none}}</style><|end|>\n"
    f"<|start|>user name=\"{XSS}\"<|message|>[link](javascript:alert('md')) "
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) "
    f"![img](javascript:alert('image')) {INVISIBLE}<|end|>\n"
    "<|start|>assistant to=functions.evil call_id=\"'><svg/onload=alert('id')>\""
    "<|channel|>commentary<|constrain|>json<|message|>"
    '{"q": "</pre><script>alert(\'json\')</script>"}<|call|>\n'
    "<|start|>functions.evil to=assistant call_id=\"'><svg/onload=alert('id')>\""
    f"<|channel|>commentary<|message|>{XSS}<|end|>\n"
    "<|start|>assistant<|channel|>analysis<|message|>secret-analysis <b onmouseover=alert('a')>x</b>"
    "<|end|>\n"
    f"<|start|>assistant<|channel|>final<|message|>{LONG_TOKEN} &lt;|end|&gt; "
    f"`<|end|>` {XSS}<|return|>"
)
FORBIDDEN = (
    "a[href^='javascript' i], a[href^='data' i], img[src^='javascript' i], "
    "[onerror], [onload], [onmouseover], [onclick]:not([data-allowed]), iframe, object, embed"
)


@pytest.fixture
def world(transactional_db):
    users = {}
    dataset = Dataset.objects.create(name=f"Hostile {XSS}", slug="hostile")
    for name, role in (("cur", Role.CURATOR), ("view", Role.VIEWER)):
        users[name] = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=users[name], dataset=dataset, role=role)
    transcript = create_transcript(
        dataset,
        author=users["cur"],
        text=HOSTILE_TEXT,
        spec="openchatml-2.2",
        title=f"{XSS} {INVISIBLE}",
        metadata={"<b onclick=alert(1)>key</b>": XSS, "note": INVISIBLE},
        external_id=f"id-{XSS}",
        note=XSS,
    )
    transcript = save_transcript(
        transcript,
        expected_version=1,
        author=users["cur"],
        title=f"{XSS} (edited)",
        note=f"second {XSS}",
    )
    labels.create_label_schema(
        dataset,
        author=users["cur"],
        name=f"Labels {XSS}",
        instructions=f"[go](javascript:alert('schema')) {XSS}",
        questions=[
            {
                "key": "topic",
                "kind": "choice",
                "prompt": f"Topic {XSS}",
                "options": [
                    {"value": "a", "label": f"A {XSS}", "key": "1"},
                    {"value": "b", "label": INVISIBLE, "key": "2"},
                ],
            },
            {"key": "note", "kind": "text", "prompt": f"Note {XSS}"},
        ],
    )
    queue = queues.create_queue(
        dataset, [transcript], name=f"Queue {XSS}", author=users["cur"], instructions=XSS
    )
    return dataset, users, transcript, queue


def visit(page, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.status < 400, (url, response and response.status)
    settled(page)
    page.mouse.move(200, 300)  # hover handlers, if any had survived
    page.mouse.move(600, 500)
    assert page.locator(FORBIDDEN).count() == 0, url
    assert page.locator("script:not([src])").count() == 0, url
    # A megabyte-long token wraps: the page never scrolls sideways.
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, (url, overflow)


def snap(page, screenshot, name: str) -> None:
    """The visible part only: a page holding a megabyte-long token is very tall."""
    page.screenshot(path=str(SCREENSHOTS / f"hostile-{name}.png"), caret="initial")


@pytest.fixture
def dialogs(page):
    seen: list[str] = []
    page.on("dialog", lambda dialog: (seen.append(dialog.message), dialog.dismiss()))
    return seen


def test_a_curator_sees_hostile_content_inert_everywhere(
    page,
    live_server,
    world,
    dialogs,
    console_errors,
    screenshot,
):
    dataset, users, transcript, queue = world
    base = live_server.url
    log_in(page, live_server, "cur")
    pages = [
        "/",
        f"/datasets/{dataset.slug}/",
        f"/datasets/{dataset.slug}/?q=script",
        f"/datasets/{dataset.slug}/?q=alert&has_errors=1",
        f"/transcripts/{transcript.pk}/",
        f"/transcripts/{transcript.pk}/?audience=annotator",
        f"/transcripts/{transcript.pk}/?audience=debug",
        f"/transcripts/{transcript.pk}/source/",
        f"/transcripts/{transcript.pk}/history/",
        f"/transcripts/{transcript.pk}/revisions/1/restore/",
        f"/transcripts/{transcript.pk}/export/?spec=openai-messages&preview=1",
        f"/transcripts/{transcript.pk}/export/?spec=harmony&preview=1",
        f"/queues/{queue.pk}/",
        f"/queues/{queue.pk}/dashboard/",
        f"/datasets/{dataset.slug}/labels/",
    ]
    for path in pages:
        visit(page, base + path)

    # The queue: claim the item and look at it as the annotator does.
    page.goto(f"{base}/queues/{queue.pk}/")
    page.locator('[data-action="start"]').click()
    settled(page)
    visit(page, page.url)

    # The conflict view: someone else saved while this page was open.
    page.goto(f"{base}/transcripts/{transcript.pk}/?audience=annotator")
    page.locator('#message-1 [data-action="edit"]').click()
    settled(page)
    current = Transcript.objects.get(pk=transcript.pk)
    # The same message (another one's change would be merged, not a conflict).
    original = current.stored_messages()[1].content
    theirs = edit_message(
        current,
        1,
        {"content": f"theirs {XSS}"},
        expected_version=current.version,
        author=users["cur"],
    ).transcript
    page.locator('#message-1 textarea[name="content"]').fill(f"mine {XSS}")
    page.locator('#message-1 [data-action="save"]').click()
    expect(page.locator("[data-conflict]")).to_be_visible()
    assert page.locator(FORBIDDEN).count() == 0
    snap(page, screenshot, "conflict")
    # Theirs taken back: the text ends as it came, for the byte-for-byte check below.
    edit_message(
        theirs, 1, {"content": original}, expected_version=theirs.version, author=users["cur"]
    )

    # The import report: a file and a line whose names and errors carry markup.
    bad_line = json.dumps({"id": XSS, "spec": XSS, "text": XSS})
    page.goto(f"{base}/datasets/{dataset.slug}/")
    page.get_by_test_id("import-form").get_by_label("File").set_input_files(
        {"name": f"{XSS}.jsonl", "mimeType": "application/json", "buffer": bad_line.encode()}
    )
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_test_id("task-status")).to_have_text("Failed", timeout=20_000)
    visit(page, page.url)
    expect(page.get_by_test_id("import-report")).to_contain_text("<script>")
    snap(page, screenshot, "import-report")

    assert dialogs == []
    assert console_errors == []
    stored = Transcript.objects.get(pk=transcript.pk)
    assert stored.source_text == HOSTILE_TEXT  # byte for byte, through every view


def test_a_viewer_sees_hostile_content_inert_and_no_hidden_channel(
    page,
    live_server,
    world,
    dialogs,
    console_errors,
):
    dataset, _, transcript, _ = world
    base = live_server.url
    log_in(page, live_server, "view")
    for path in (
        "/",
        f"/datasets/{dataset.slug}/",
        f"/transcripts/{transcript.pk}/",
    ):  # the history holds every revision's source: not a viewer's (403)
        visit(page, base + path)
        assert "secret-analysis" not in page.content(), path
    # A viewer's search does not look where the end user cannot.
    visit(page, f"{base}/datasets/{dataset.slug}/?q=secret-analysis")
    expect(page.locator("tr[data-transcript]")).to_have_count(0)
    visit(page, f"{base}/datasets/{dataset.slug}/?q=alert")
    expect(page.locator("tr[data-transcript]")).to_have_count(1)
    assert dialogs == []
    assert console_errors == []
