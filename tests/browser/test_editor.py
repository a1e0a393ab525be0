"""The editor in a real browser: edit, live validation, quick fixes, structure, raw mode,
conflicts between two people, the keyboard, and a 2,000-message transcript."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor import formats
from editor.models import Dataset, Membership, Role, Transcript
from editor.storage.create import create_transcript
from tests.browser.conftest import SCREENSHOTS, settled
from tests.editor.samples import demo_texts

PASSWORD = "a-long-test-password"
CALL_WITHOUT_ID = (
    "version: 2.2\n"
    "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{}<|call|>\n"
    "<|start|>tool name=functions.f<|channel|>commentary<|message|>{}<|end|>"
)


@pytest.fixture
def team(transactional_db):
    dataset = Dataset.objects.create(name="Support", slug="support")
    users = {}
    for name in ("ann", "bob"):
        users[name] = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=users[name], dataset=dataset, role=Role.ANNOTATOR)
    return dataset, users


@pytest.fixture
def weather(team):
    dataset, users = team
    return create_transcript(
        dataset,
        text=demo_texts()["openchatml-2.2"],
        spec="openchatml-2.2",
        author=users["ann"],
        title="Weather",
    )


def log_in(page, live_server, username="ann"):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def stored(transcript) -> Transcript:
    return Transcript.objects.get(pk=transcript.pk)


def open_annotator(page, live_server, transcript):
    page.goto(f"{live_server.url}/transcripts/{transcript.pk}/?audience=annotator")
    expect(page.locator("#transcript-messages")).to_have_attribute("data-audience", "annotator")


def test_edit_and_save_a_message(page, live_server, weather, screenshot, console_errors):
    log_in(page, live_server)
    open_annotator(page, live_server, weather)
    page.locator('#message-7 [data-action="edit"]').click()
    settled(page)  # the edit form is htmx's before anything is typed
    content = page.locator('#message-7 textarea[name="content"]')
    expect(content).to_be_focused()
    content.fill("It is 20 °C and sunny in Tokyo.")
    screenshot("editor")
    page.locator('#message-7 [data-action="save"]').click()
    expect(page.locator("article#message-7 .body")).to_contain_text(
        "It is 20 °C and sunny in Tokyo."
    )
    expect(page.locator("#version-label")).to_have_text("version 2")
    assert stored(weather).canonical().messages[7].content == "It is 20 °C and sunny in Tokyo."
    assert console_errors == []


def test_live_validation_keeps_the_typed_text_and_the_caret(
    page, live_server, weather, screenshot, console_errors
):
    log_in(page, live_server)
    open_annotator(page, live_server, weather)
    page.locator('#message-5 [data-action="edit"]').click()
    settled(page)  # the edit form is htmx's before anything is typed
    content = page.locator('#message-5 textarea[name="content"]')
    content.fill("")
    content.type('{"location": "Tok')
    diagnostic = page.locator('#diagnostics [data-code="E-BODY-CONSTRAINT-VIOLATION"]')
    expect(diagnostic).to_have_count(1)
    expect(page.locator("#message-5-badge")).to_contain_text("error")
    screenshot("live-error")
    # The textarea was not replaced: the text, the focus and the caret are where they were.
    expect(content).to_have_value('{"location": "Tok')
    expect(content).to_be_focused()
    assert content.evaluate("el => el.selectionStart") == len('{"location": "Tok')
    content.type('yo"}')
    expect(diagnostic).to_have_count(0)
    expect(page.locator("#message-5-badge")).to_contain_text("no problems")
    page.locator('#message-5 [data-action="save"]').click()
    expect(page.locator("article#message-5")).to_be_visible()
    assert stored(weather).canonical().messages[5].content == '{"location": "Tokyo"}'
    assert console_errors == []


def test_apply_a_quick_fix(page, live_server, team, console_errors):
    dataset, users = team
    transcript = create_transcript(
        dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=users["ann"]
    )
    log_in(page, live_server)
    open_annotator(page, live_server, transcript)
    missing = page.locator('#diagnostics [data-code="E-CALL-ID-MISSING"]')
    expect(missing).to_have_count(2)
    page.locator('#diagnostics [data-action="fix"]').first.click()
    expect(page.locator("#version-label")).to_have_text("version 2")
    expect(missing).to_have_count(1)
    assert "call_id=call_1" in stored(transcript).source_text
    assert console_errors == []


def test_insert_move_and_delete(page, live_server, weather, screenshot, console_errors):
    log_in(page, live_server)
    open_annotator(page, live_server, weather)
    # One action in sight (Edit); the others in the message's More menu.
    controls = page.locator("#message-2 .controls")
    expect(controls.locator(":is(a, button, summary):visible")).to_have_count(2)  # Edit, More
    page.locator('#message-2 [data-action="menu"]').click()
    page.locator('#message-2 [data-action="insert"]').click()
    new = page.locator("form.new-message")
    new.locator('textarea[name="content"]').fill("And in Osaka?")
    new.locator('input[name="role"]').fill("user")
    new.locator('[data-action="save"]').click()
    expect(page.locator("article#message-3 .body")).to_have_text("And in Osaka?")

    page.locator('#message-3 [data-action="menu"]').click()
    page.locator('#message-3 [data-action="move-up"]').click()
    expect(page.locator("article#message-2 .body")).to_have_text("And in Osaka?")

    page.locator('#message-2 [data-action="menu"]').click()
    page.locator('#message-2 [data-action="delete"]').click()
    expect(page.locator("#toast")).to_contain_text("deleted")
    expect(page.locator("article#message-2 .body")).to_have_text("What's the weather in Tokyo?")
    screenshot("deleted")
    page.locator('#toast [data-action="undo"]').click()
    expect(page.locator("article#message-2 .body")).to_have_text("And in Osaka?")
    assert len(stored(weather).canonical().messages) == 9
    assert console_errors == []


def test_raw_mode_refuses_a_fatal_error_then_saves_a_draft(
    page, live_server, weather, screenshot, console_errors
):
    log_in(page, live_server)
    page.goto(f"{live_server.url}/transcripts/{weather.pk}/source/")
    source = page.locator("#source-text")
    source.press("Control+End")
    source.type("\n<|start|><|message|>who am I?<|end|>")
    expect(page.locator('#diagnostics [data-code="E-PARSE-ROLE-MISSING"]')).to_have_count(1)
    expect(page.locator(".gutter li.has-error")).to_have_count(1)
    screenshot("raw-live")
    page.locator('[data-action="save"]').click()
    expect(page.locator(".refusal")).to_contain_text("Not saved")
    expect(source).to_have_value(
        stored(weather).source_text + "\n<|start|><|message|>who am I?<|end|>"
    )
    page.locator('[data-action="save-draft"]').click()
    expect(page.locator(".flash")).to_contain_text("status: draft")
    saved = stored(weather)
    assert saved.status == "draft" and saved.error_count >= 1
    screenshot("raw-saved")
    assert console_errors == []


def test_raw_mode_shows_the_servers_highlighting_of_the_text_as_typed(
    page, live_server, weather, console_errors
):
    """The overlay under the textarea is highlighted by the server alone: the typing is copied
    into it at once (the marks around kept), the answer to the typing brings the marks of the
    new tokens, and an answer about an older text is not shown."""
    log_in(page, live_server)
    page.goto(f"{live_server.url}/transcripts/{weather.pk}/source/")
    source = page.locator("#source-text")
    marks = page.locator("#source-highlight mark.tok")
    before = marks.count()
    page.evaluate(  # what the page decided for each answer's highlighting: shown or not
        """() => { window.shown = [];
        document.addEventListener("htmx:oobBeforeSwap", (event) => {
          if (event.detail.target.id === "source-highlight") shown.push(event.detail.shouldSwap);
        }); }"""
    )

    def overlay_shows_the_text() -> bool:
        shown = page.evaluate("() => document.getElementById('source-highlight').textContent")
        return shown == source.input_value() + "\n"

    held = []
    page.route("**/source/validate/", lambda route: held.append(route))  # answers wait
    source.press("Control+End")
    with page.expect_request("**/source/validate/"):
        source.press_sequentially("\n<|start|>user<|message|>more<|end|>")
    assert overlay_shows_the_text()
    assert marks.count() == before

    source.press_sequentially(" and more")  # its request waits for the first answer
    with page.expect_request("**/source/validate/"):
        held[0].continue_()  # an answer about the text before " and more"
    page.wait_for_function("() => window.shown.length === 1")
    assert page.evaluate("() => window.shown") == [False]
    assert overlay_shows_the_text()
    assert marks.count() == before

    held[1].continue_()
    page.wait_for_function("() => window.shown.length === 2")
    assert page.evaluate("() => window.shown") == [False, True]
    expect(marks).to_have_count(before + 3)
    expect(marks.last).to_have_text("<|end|>")
    assert overlay_shows_the_text()
    assert console_errors == []


def test_two_people_edit_the_same_message_and_nothing_is_lost(browser, live_server, weather):
    pages = {}
    for name in ("ann", "bob"):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        pages[name] = context.new_page()
        log_in(pages[name], live_server, name)
        open_annotator(pages[name], live_server, weather)
        pages[name].locator('#message-2 [data-action="edit"]').click()
        settled(pages[name])  # the edit form is htmx's before anything is typed
    pages["ann"].locator('#message-2 textarea[name="content"]').fill("Ann's question")
    pages["bob"].locator('#message-2 textarea[name="content"]').fill("Bob's question")
    pages["ann"].locator('#message-2 [data-action="save"]').click()
    expect(pages["ann"].locator("#version-label")).to_have_text("version 2")

    bob = pages["bob"]
    bob.locator('#message-2 [data-action="save"]').click()
    conflict = bob.locator("[data-conflict]")
    expect(conflict).to_be_visible()
    expect(conflict.locator('[data-side="theirs"]')).to_contain_text("Ann's question")
    expect(conflict.locator('[data-side="mine"]')).to_contain_text("Bob's question")
    conflict.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(exist_ok=True)
    bob.screenshot(path=str(SCREENSHOTS / "test_editor-conflict-view.png"), full_page=True)
    bob.locator('[data-action="apply-mine"]').click()
    expect(bob.locator("article#message-2 .body")).to_have_text("Bob's question")
    saved = stored(weather)
    assert saved.version == 3
    assert saved.canonical().messages[2].content == "Bob's question"
    ann_revision = saved.revisions.get(number=2).full_snapshot["transcript"]["messages"][2]
    assert ann_revision["content"] == "Ann's question"


def test_a_keyboard_only_edit(page, live_server, weather, console_errors):
    log_in(page, live_server)
    open_annotator(page, live_server, weather)
    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()
    for _ in range(3):
        page.keyboard.press("j")
    expect(page.locator("article#message-2")).to_have_class(re.compile("current"))
    page.keyboard.press("e")
    content = page.locator('#message-2 textarea[name="content"]')
    expect(content).to_be_focused()
    settled(page)
    page.keyboard.press("Control+a")
    page.keyboard.type("Typed with j (not a shortcut while typing)")
    page.keyboard.press("Control+Enter")
    expect(page.locator("article#message-2 .body")).to_have_text(
        "Typed with j (not a shortcut while typing)"
    )
    # Esc cancels an edit without saving.
    settled(page)
    page.locator("article#message-2").focus()
    page.keyboard.press("e")
    again = page.locator('#message-2 textarea[name="content"]')
    expect(again).to_be_focused()
    settled(page)
    again.type(" more")
    page.keyboard.press("Escape")
    expect(page.locator("article#message-2 .body")).to_have_text(
        "Typed with j (not a shortcut while typing)"
    )
    assert stored(weather).version == 2
    assert console_errors == []


def test_the_keyboard_keeps_its_place_and_goes_to_any_message(page, live_server, team):
    """After a save or a cancel, j/k go on from the message just edited (not from #0); the
    go-to box and g g / G reach any message, loading the pages through it. No mouse."""
    dataset, users = team
    messages = [
        formats.Message(role="user" if n % 2 == 0 else "assistant", content=f"Message number {n}")
        for n in range(120)
    ]
    text = formats.serialize(formats.Transcript(spec="chatml", messages=messages))
    long = create_transcript(dataset, text=text, spec="chatml", author=users["ann"])
    log_in(page, live_server)
    open_annotator(page, live_server, long)
    assert page.locator("#message-list article").count() == 50
    page.keyboard.press("Tab")  # into the page: the keys below need no pointer at all
    page.locator("body").evaluate("element => document.activeElement.blur()")
    for _ in range(3):
        page.keyboard.press("j")
    current = page.locator('.message[aria-current="true"]')
    expect(current).to_have_attribute("id", "message-2")
    page.keyboard.press("e")
    expect(page.locator('#message-2 textarea[name="content"]')).to_be_focused()
    settled(page)
    page.keyboard.press("Control+a")
    page.keyboard.type("Saved by keyboard")
    page.keyboard.press("Control+Enter")
    expect(page.locator("article#message-2 .body")).to_have_text("Saved by keyboard")
    settled(page)
    expect(current).to_have_attribute("id", "message-2")
    page.keyboard.press("j")
    expect(current).to_have_attribute("id", "message-3")
    page.keyboard.press("e")
    expect(page.locator('#message-3 textarea[name="content"]')).to_be_focused()
    settled(page)
    page.keyboard.press("Escape")
    expect(page.locator("article#message-3")).to_be_visible()
    settled(page)
    page.keyboard.press("k")
    expect(current).to_have_attribute("id", "message-2")

    goto = page.locator('input[name="goto"]')
    goto.focus()
    goto.fill("110")
    page.keyboard.press("Enter")  # not loaded yet: the page through it
    expect(current).to_have_attribute("id", "message-110")
    expect(page.locator("article#message-110")).to_be_in_viewport()
    page.keyboard.press("g")
    page.keyboard.press("g")
    expect(current).to_have_attribute("id", "message-0")
    page.keyboard.press("Shift+G")
    expect(current).to_have_attribute("id", "message-119")
    expect(page.locator("article#message-119")).to_be_in_viewport()
    assert Transcript.objects.get(pk=long.pk).version == 2


def test_a_2000_message_transcript_scrolls_to_its_last_message(
    page, live_server, team, console_errors
):
    dataset, users = team
    messages = [
        formats.Message(role="user" if n % 2 == 0 else "assistant", content=f"Message number {n}")
        for n in range(2000)
    ]
    text = formats.serialize(formats.Transcript(spec="chatml", messages=messages))
    long = create_transcript(dataset, text=text, spec="chatml", author=users["ann"])
    log_in(page, live_server)
    page.goto(f"{live_server.url}/transcripts/{long.pk}/?audience=annotator")
    expect(page.locator("article#message-0")).to_be_visible(timeout=1000)
    assert page.locator("#message-list article").count() == 50
    last = page.locator("article#message-1999")
    for _ in range(200):
        if last.count():
            break
        page.mouse.wheel(0, 20000)
        page.wait_for_timeout(50)
    expect(last).to_contain_text("Message number 1999")
    last.locator('[data-action="edit"]').click()
    settled(page)  # the edit form is htmx's before anything is typed
    page.locator('#message-1999 textarea[name="content"]').fill("The very last one")
    page.keyboard.press("Control+Enter")
    # The server answers in ~0.3 s; Playwright's own checks walk the 63,000 elements of 2,000
    # loaded messages (profiled: its aria and style queries, not the page's scripts), which
    # took over 5 s on a loaded CI machine.
    expect(page.locator("article#message-1999 .body")).to_have_text(
        "The very last one", timeout=30_000
    )
    assert console_errors == []


def test_phone_width_keeps_the_page_inside_the_screen(page, live_server, weather, screenshot):
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, live_server)
    open_annotator(page, live_server, weather)
    expect(page.get_by_role("button", name="Log out")).to_be_in_viewport()
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    screenshot("phone")


HOSTILE = (
    "<|start|>user name=\"><script>alert('name')</script><|message|>"
    "<script>alert('body')</script><img src=x onerror=\"alert('img')\"><|end|>\n"
    "<|start|>assistant to=functions.x call_id=\"'><svg/onload=alert('id')>\""
    '<|channel|>commentary<|constrain|>json<|message|>{"a": "</pre><script>alert(\'json\')</script>"}<|call|>\n'
    "<|start|>assistant<|channel|>final<|message|>**Bold** [click](javascript:alert('md')) "
    "![img](https://example.invalid/x.png) <b onmouseover=alert('html')>raw</b><|return|>"
)


def test_hostile_markup_is_inert_in_every_editor_view(page, live_server, team, console_errors):
    dataset, users = team
    transcript = create_transcript(
        dataset, text=HOSTILE, spec="openchatml-2.2", author=users["ann"], title="<i>x</i>"
    )
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    log_in(page, live_server)
    base = f"{live_server.url}/transcripts/{transcript.pk}/"
    for path in ("", "?audience=annotator", "?audience=debug", "source/", "history/"):
        page.goto(base + path)
        page.mouse.move(300, 300)
        page.mouse.move(400, 500)
    page.goto(base + "?audience=annotator")
    page.locator('#message-2 [data-action="edit"]').click()
    settled(page)  # the edit form is htmx's before anything is typed
    page.locator('#message-2 textarea[name="content"]').type(" <script>alert('typed')</script>")
    expect(page.locator("#message-2-badge")).not_to_be_empty()
    page.locator('#message-2 [data-action="save"]').click()
    expect(page.locator("article#message-2")).to_be_visible()
    expect(page.locator("article#message-2 .body")).to_contain_text("click")
    expect(page.locator("article#message-2 .body strong")).to_have_text("Bold")
    assert page.locator("a[href^='javascript' i], [onerror], [onmouseover], [onload]").count() == 0
    page.goto(base + "export/?spec=openai-messages&preview=1")
    assert dialogs == []
    assert console_errors == []
    assert "<script>alert('typed')</script>" in stored(transcript).canonical().messages[2].content


def test_the_more_menu_moves_a_message_anywhere_by_keyboard_in_one_revision(
    page, live_server, weather, console_errors
):
    log_in(page, live_server)
    open_annotator(page, live_server, weather)
    before = stored(weather)
    moved_text = before.canonical().messages[1].content
    page.keyboard.press("Tab")
    page.locator("body").evaluate("element => document.activeElement.blur()")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(page.locator('.message[aria-current="true"]')).to_have_attribute("id", "message-1")
    page.keyboard.press("m")
    menu = page.locator('#message-1 [data-action="menu"]')
    expect(menu).to_have_attribute("open", "")
    expect(page.locator('#message-1 [data-action="insert"]')).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).not_to_have_attribute("open", "")
    expect(menu.locator("summary")).to_be_focused()
    page.keyboard.press("Enter")  # the summary opens it again
    expect(menu).to_have_attribute("open", "")
    page.locator("#move-1").focus()
    page.keyboard.type("5")
    page.keyboard.press("Enter")
    expect(page.locator("article#message-5 .body")).to_contain_text(moved_text[:20])
    after = stored(weather)
    assert after.version == before.version + 1  # one revision for a move of four places
    assert after.canonical().messages[5].content == moved_text
    assert console_errors == []


def test_a_message_dragged_onto_another_moves_there_in_one_revision(
    page, live_server, weather, console_errors
):
    page.set_viewport_size({"width": 1280, "height": 2400})  # both in view: no scroll mid-drag
    log_in(page, live_server)
    open_annotator(page, live_server, weather)
    before = stored(weather)
    moved_text = before.canonical().messages[0].content
    handle = page.locator('#message-0 [data-drag="0"]')
    target = page.locator("article#message-3")
    box = target.bounding_box()
    handle.drag_to(target, target_position={"x": 20, "y": box["height"] - 4})  # its lower half
    expect(page.locator("article#message-3 .body")).to_contain_text(moved_text[:20])
    after = stored(weather)
    assert after.version == before.version + 1
    assert after.canonical().messages[3].content == moved_text
    assert console_errors == []


def test_role_channel_and_recipient_offer_the_specs_own_words(page, live_server, weather):
    log_in(page, live_server)
    open_annotator(page, live_server, weather)
    page.locator('#message-1 [data-action="edit"]').click()
    role = page.locator('#message-1 input[name="role"]')
    options = page.locator(f"datalist#{role.get_attribute('list')} option")
    values = options.evaluate_all("options => options.map(o => o.value)")
    assert {"system", "user", "assistant", "tool"} <= set(values)
    channel = page.locator('#message-1 input[name="channel"]')
    channels = page.locator(f"datalist#{channel.get_attribute('list')} option")
    assert "analysis" in channels.evaluate_all("options => options.map(o => o.value)")
