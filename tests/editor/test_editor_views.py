"""The in-browser editor's views (full pages and htmx fragments), per role."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from editor import formats
from editor.models import Membership, Role, Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import demo_texts

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
CALL_WITHOUT_ID = (
    "version: 2.2\n"
    "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{}<|call|>\n"
    "<|start|>tool name=functions.f<|channel|>commentary<|message|>{}<|end|>"
)


@pytest.fixture
def weather(dataset, annotator):
    return create_transcript(
        dataset,
        text=demo_texts()["openchatml-2.2"],
        spec="openchatml-2.2",
        author=annotator,
        title="Weather",
    )


@pytest.fixture
def as_annotator(client, annotator):
    client.force_login(annotator)
    return client


def stored(transcript) -> Transcript:
    return Transcript.objects.get(pk=transcript.pk)


def url(transcript, tail: str = "") -> str:
    return f"/transcripts/{transcript.pk}/{tail}"


# --- the page ---------------------------------------------------------------------------------


def test_editors_get_edit_controls_viewers_do_not(client, weather, annotator, viewer):
    client.force_login(annotator)
    html = client.get(url(weather)).content.decode()
    assert 'data-action="edit"' in html and 'data-action="delete"' in html
    client.force_login(viewer)
    html = client.get(url(weather)).content.decode()
    for action in ("edit", "save", "insert", "delete", "move-up", "move-down", "fix"):
        assert f'data-action="{action}"' not in html


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("messages/1/edit/", "get"),
        ("messages/new/", "get"),
        ("messages/1/save/", "post"),
        ("messages/1/validate/", "post"),
        ("messages/1/delete/", "post"),
        ("messages/1/move/", "post"),
        ("messages/1/duplicate/", "post"),
        ("messages/insert/", "post"),
        ("fixes/", "post"),
        ("undo/", "post"),
        ("source/", "get"),
        ("source/", "post"),
        ("source/validate/", "post"),
    ],
)
def test_viewers_are_refused_by_the_views_and_outsiders_get_404(
    client, weather, viewer, outsider, path, method
):
    client.force_login(viewer)
    send = getattr(client, method)
    data = {"version": 1, "content": "x", "role": "user", "text": "x"}
    assert send(url(weather, path), data).status_code == 403
    client.force_login(outsider)
    assert send(url(weather, path), data).status_code == 404
    assert stored(weather).version == 1


def test_writes_need_the_csrf_token(weather, annotator):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(annotator)
    response = strict.post(url(weather, "messages/2/save/"), {"version": 1, "content": "x"})
    assert response.status_code == 403
    assert stored(weather).version == 1


def test_long_transcripts_come_in_pages_with_constant_queries(
    dataset, annotator, as_annotator, django_assert_max_num_queries
):
    messages = [formats.Message(role="user", content=f"Line {n}") for n in range(230)]
    text = formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=messages))
    long = create_transcript(dataset, text=text, spec="openchatml-2.2", author=annotator)
    with django_assert_max_num_queries(14):
        html = as_annotator.get(url(long), {"audience": "annotator"}).content.decode()
    assert html.count('class="message role-user') == 50
    assert 'hx-trigger="revealed"' in html
    with django_assert_max_num_queries(12):
        page = as_annotator.get(url(long), {"audience": "annotator", "page": 4}, headers=HX)
    fragment = page.content.decode()
    assert 'data-index="200"' in fragment and 'data-index="229"' in fragment
    assert 'data-index="199"' not in fragment
    assert 'hx-trigger="revealed"' not in fragment  # the last page
    # A diagnostic link to message 180 loads the page through it.
    html = as_annotator.get(url(long), {"audience": "annotator", "upto": 180}).content.decode()
    assert 'id="message-180"' in html and 'id="message-200"' not in html


def test_goto_loads_the_pages_through_a_message_and_lands_on_it(dataset, annotator, as_annotator):
    messages = [formats.Message(role="user", content=f"Line {n}") for n in range(230)]
    text = formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=messages))
    long = create_transcript(dataset, text=text, spec="openchatml-2.2", author=annotator)
    html = as_annotator.get(url(long), {"audience": "annotator", "goto": 180}).content.decode()
    assert 'id="message-180"' in html and 'id="message-200"' not in html
    assert 'data-focus="180"' in html
    assert 'name="goto"' in html and 'max="229"' in html
    # Past the end: the last message; not a number: the page as usual.
    html = as_annotator.get(url(long), {"audience": "annotator", "goto": 9999}).content.decode()
    assert 'data-focus="229"' in html and 'id="message-229"' in html
    html = as_annotator.get(url(long), {"audience": "annotator", "goto": "x"}).content.decode()
    assert "data-focus" not in html and 'id="message-50"' not in html


# --- editing one message ----------------------------------------------------------------------


def test_edit_form_has_the_content_and_the_other_fields(as_annotator, weather):
    html = as_annotator.get(url(weather, "messages/5/edit/"), headers=HX).content.decode()
    assert html.lstrip().startswith('<form id="message-5"')
    assert '<textarea id="f-5-content" name="content"' in html
    assert "{&quot;location&quot;:&quot;Tokyo&quot;" in html
    for name in ("role", "channel", "recipient", "call_id", "constrain", "end"):
        assert f'name="{name}"' in html
    assert 'data-action="save"' in html and 'data-action="cancel"' in html
    assert "to= (recipient)" in html  # 2.2's own words


def test_save_answers_the_message_the_diagnostics_and_the_version(as_annotator, weather):
    response = as_annotator.post(
        url(weather, "messages/7/save/"),
        {
            "version": 1,
            "role": "assistant",
            "channel": "final",
            "end": "return",
            "content": "Sunny.",
        },
        headers=HX,
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<article id="message-7"')
    assert 'id="diagnostics"' in html and 'hx-swap-oob="true"' in html
    assert 'id="transcript-version" name="version" value="2"' in html
    history = html[html.index('<section class="card" id="revisions" hx-swap-oob="true">') :]
    assert 'data-revision="2"' in history  # the History panel lists the new revision at once
    saved = stored(weather)
    assert saved.version == 2
    assert saved.canonical().messages[7].content == "Sunny."
    assert saved.canonical().messages[7].end == "return"


def test_textarea_line_breaks_become_the_transcripts_own(as_annotator, weather):
    as_annotator.post(
        url(weather, "messages/2/save/"),
        {"version": 1, "role": "user", "content": "Line one\r\nLine two"},
        headers=HX,
    )
    assert stored(weather).canonical().messages[2].content == "Line one\nLine two"


def test_live_validation_swaps_only_the_diagnostics_and_the_badge(as_annotator, weather):
    response = as_annotator.post(
        url(weather, "messages/5/validate/"), {"content": "{oops"}, headers=HX
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-code="E-BODY-CONSTRAINT-VIOLATION"' in html
    assert 'id="message-5-badge" hx-swap-oob="true"' in html
    assert "<textarea" not in html and "<form" not in html.split('id="diagnostics"')[0]
    assert stored(weather).version == 1


def test_bad_attrs_json_answers_the_error_box_and_keeps_the_form(as_annotator, weather):
    response = as_annotator.post(
        url(weather, "messages/2/save/"),
        {"version": 1, "role": "user", "content": "x", "attrs": "{not json"},
        headers=HX,
    )
    assert response.status_code == 422
    assert response["HX-Reswap"] == "none"
    assert 'id="message-2-error"' in response.content.decode()
    assert stored(weather).version == 1


def test_stale_save_shows_the_conflict_view_with_both_versions(client, weather, annotator, curator):
    other = Client()
    other.force_login(curator)
    other.post(
        url(weather, "messages/2/save/"),
        {"version": 1, "role": "user", "content": "Their question"},
        headers=HX,
    )
    client.force_login(annotator)
    response = client.post(
        url(weather, "messages/2/save/"),
        {"version": 1, "role": "user", "content": "My question"},
        headers=HX,
    )
    html = response.content.decode()
    assert response.status_code == 409
    assert "data-conflict" in html
    assert "Their question" in html and "My question" in html
    assert 'data-action="apply-mine"' in html and 'data-action="discard-mine"' in html
    assert stored(weather).canonical().messages[2].content == "Their question"

    # "Apply my change on top of theirs" saves mine onto their version.
    mine = json.dumps({"role": "user", "content": "My question"})
    resolved = client.post(
        url(weather, "messages/2/resolve/"),
        {"choice": "mine", "version": 2, "their_index": 2, "mine": mine},
        headers=HX,
    )
    assert resolved.status_code == 200
    saved = stored(weather)
    assert saved.version == 3
    assert saved.canonical().messages[2].content == "My question"
    assert saved.revisions.get(number=2).full_snapshot["transcript"]["messages"][2]["content"] == (
        "Their question"
    )  # theirs is kept in the history


def test_discard_mine_keeps_theirs_and_changes_nothing(client, weather, annotator, curator):
    other = Client()
    other.force_login(curator)
    other.post(
        url(weather, "messages/2/save/"), {"version": 1, "role": "user", "content": "T"}, headers=HX
    )
    client.force_login(annotator)
    response = client.post(
        url(weather, "messages/2/resolve/"),
        {"choice": "theirs", "version": 2, "their_index": 2, "mine": "{}"},
        headers=HX,
    )
    assert response.status_code == 200
    assert 'id="transcript-version" name="version" value="2"' in response.content.decode()
    assert stored(weather).version == 2


def test_without_javascript_a_save_redirects_back_to_the_message(as_annotator, weather):
    response = as_annotator.post(
        url(weather, "messages/2/save/"), {"version": 1, "role": "user", "content": "Plain form"}
    )
    assert response.status_code == 302
    assert response["Location"].endswith("#message-2")


# --- structure ----------------------------------------------------------------------------------


def test_insert_move_duplicate_delete_and_undo(as_annotator, weather):
    form = as_annotator.get(url(weather, "messages/new/"), {"after": 2}, headers=HX)
    assert 'name="after" value="2"' in form.content.decode()

    response = as_annotator.post(
        url(weather, "messages/insert/"),
        {"version": 1, "after": 2, "role": "user", "content": "And Osaka?"},
        headers=HX,
    )
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    html = response.content.decode()
    assert 'id="transcript-messages"' in html and 'hx-swap-oob="true"' in html
    assert json.loads(response["HX-Trigger-After-Settle"]) == {"ocm:focus-message": {"index": 3}}
    assert stored(weather).canonical().messages[3].content == "And Osaka?"

    as_annotator.post(url(weather, "messages/3/move/"), {"version": 2, "to": 2}, headers=HX)
    assert stored(weather).canonical().messages[2].content == "And Osaka?"
    as_annotator.post(url(weather, "messages/2/duplicate/"), {"version": 3}, headers=HX)
    assert stored(weather).canonical().messages[3].content == "And Osaka?"

    deleted = as_annotator.post(url(weather, "messages/3/delete/"), {"version": 4}, headers=HX)
    html = deleted.content.decode()
    assert 'data-action="undo"' in html and 'name="revision" value="4"' in html
    assert len(stored(weather).canonical().messages) == 9

    as_annotator.post(url(weather, "undo/"), {"version": 5, "revision": 4}, headers=HX)
    assert len(stored(weather).canonical().messages) == 10
    assert stored(weather).version == 6
    undone = as_annotator.post(url(weather, "undo/"), {"version": 6, "revision": 1}, headers=HX)
    history = undone.content.decode().split('id="revisions" hx-swap-oob="true"')[1]
    assert 'data-revision="7"' in history and "undo: back to revision 1" in history


def test_a_structural_change_on_a_stale_page_changes_nothing_and_says_so(
    as_annotator, weather, curator
):
    Client().force_login(curator)
    as_annotator.post(url(weather, "messages/1/duplicate/"), {"version": 1}, headers=HX)
    response = as_annotator.post(url(weather, "messages/0/delete/"), {"version": 1}, headers=HX)
    assert "Not done" in response.content.decode()
    assert len(stored(weather).canonical().messages) == 9


def test_quick_fix_button(as_annotator, dataset, annotator):
    transcript = create_transcript(
        dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=annotator
    )
    html = as_annotator.get(url(transcript), {"audience": "annotator"}).content.decode()
    assert 'data-action="fix"' in html
    diagnostic = next(d for d in transcript.diagnostics if d.get("fix"))
    response = as_annotator.post(
        url(transcript, "fixes/"),
        {
            "version": 1,
            "code": diagnostic["code"],
            "message_index": diagnostic["message_index"],
            "fix_id": diagnostic["fix"]["id"],
        },
        headers=HX,
    )
    assert response.status_code == 200
    assert "call_id=call_1" in stored(transcript).source_text


# --- raw source ---------------------------------------------------------------------------------

BROKEN = "<|start|>user<|message|>hi<|end|>\n<|start|><|message|>no role<|end|>"


def test_raw_mode_shows_the_source_with_line_numbers(as_annotator, weather):
    html = as_annotator.get(url(weather, "source/")).content.decode()
    assert '<textarea name="text" id="source-text"' in html
    assert '<li id="L1">1</li>' in html
    assert '<mark class="tok tok-token">&lt;|start|&gt;</mark>' in html


def test_raw_mode_refuses_errors_then_saves_a_draft(as_annotator, weather):
    response = as_annotator.post(url(weather, "source/"), {"version": 1, "text": BROKEN})
    html = response.content.decode()
    assert response.status_code == 422
    assert 'data-code="E-PARSE-ROLE-MISSING"' in html
    assert 'data-action="save-draft"' in html
    assert "no role" in html  # the text as typed is kept
    assert stored(weather).version == 1

    response = as_annotator.post(
        url(weather, "source/"), {"version": 1, "text": BROKEN, "draft": "1"}
    )
    assert response.status_code == 302
    saved = stored(weather)
    assert saved.source_text == BROKEN and saved.status == "draft"


def test_live_validation_answers_the_text_highlighted_by_the_server(as_annotator, weather):
    """The overlay under the textarea shows the server's highlighting of what is typed (the
    browser has no highlighter of its own); the textarea itself is never sent back."""
    text = "\n" + BROKEN  # a first line break too: HTML drops one right after <pre>
    response = as_annotator.post(
        url(weather, "source/validate/"), {"text": text, "spec": "openchatml-2.2"}, headers=HX
    )
    html = response.content.decode()
    opening = '<pre class="code-highlight" id="source-highlight" aria-hidden="true" '
    assert (
        opening + 'hx-swap-oob="innerHTML">\n\n<mark class="tok tok-token">&lt;|start|&gt;' in html
    )
    assert (
        '<mark class="tok tok-token">&lt;|message|&gt;</mark>no role'
        '<mark class="tok tok-token">&lt;|end|&gt;</mark>\n</pre>'
    ) in html
    assert 'id="diagnostics"' in html and "<textarea" not in html


def test_raw_mode_and_debug_rendering_mark_the_same_tokens(as_annotator, weather):
    raw = as_annotator.get(url(weather, "source/")).content.decode()
    debug = as_annotator.get(url(weather, ""), {"audience": "debug"}).content.decode()
    marks = re.compile(r'<mark class="tok tok-[a-z-]+">[^<]*</mark>')
    assert marks.findall(raw) == marks.findall(debug) != []


def test_raw_mode_live_validation_and_conversion_preview(as_annotator, weather):
    response = as_annotator.post(url(weather, "source/validate/"), {"text": BROKEN}, headers=HX)
    assert 'data-code="E-PARSE-ROLE-MISSING"' in response.content.decode()
    assert 'data-error-lines="2"' in response.content.decode()

    response = as_annotator.post(
        url(weather, "source/convert/"),
        {"text": weather.source_text, "convert_to": "chatml"},
        headers=HX,
    )
    html = response.content.decode()
    assert "cannot be carried over" in html and 'data-action="convert"' in html
    assert stored(weather).spec == "openchatml-2.2"  # a preview changes nothing


def test_raw_mode_conflict_keeps_my_text(client, weather, annotator, curator):
    other = Client()
    other.force_login(curator)
    other.post(
        url(weather, "messages/2/save/"), {"version": 1, "role": "user", "content": "T"}, headers=HX
    )
    client.force_login(annotator)
    mine = weather.source_text.replace("What's the weather in Tokyo?", "Mine")
    response = client.post(url(weather, "source/"), {"version": 1, "text": mine})
    html = response.content.decode()
    assert response.status_code == 409
    assert "data-conflict" in html and "Mine" in html
    assert 'name="version" value="2"' in html  # saving again puts mine on top of theirs


# --- export -------------------------------------------------------------------------------------


def test_export_menu_shows_the_losses_then_downloads(as_annotator, weather):
    preview = as_annotator.get(url(weather, "export/"), {"spec": "chatml"}, headers=HX)
    html = preview.content.decode()
    assert 'data-testid="export-losses"' in html and "chatml cannot carry" in html
    download = as_annotator.get(url(weather, "export/"), {"spec": "chatml"})
    assert download["Content-Disposition"].endswith('.chatml.txt"')
    assert download.content.decode().startswith("<|start|>system")


def test_a_viewers_export_is_the_end_users(client, weather, viewer):
    client.force_login(viewer)
    assert client.get(url(weather, "export/"), {"spec": "chatml"}).status_code == 403
    response = client.get(url(weather, "export/"), {"spec": "chatml", "audience": "end_user"})
    assert response.status_code == 200
    assert "Call functions" not in response.content.decode()


def test_reviewers_edit_too(client, weather, viewer):
    Membership.objects.filter(user=viewer).update(role=Role.REVIEWER)
    client.force_login(viewer)
    assert client.get(url(weather, "messages/1/edit/"), headers=HX).status_code == 200


def test_without_javascript_edit_opens_the_page_with_the_form_in_place(as_annotator, weather):
    response = as_annotator.get(url(weather, "messages/2/edit/"), {"audience": "annotator"})
    assert response.status_code == 302
    assert response["Location"].endswith("edit=2#message-2")
    html = as_annotator.get(response["Location"]).content.decode()
    assert '<form id="message-2" class="message editing"' in html
    assert 'id="message-3"' in html and '<article id="message-2"' not in html


def test_a_garbled_draft_in_a_conflict_answer_is_a_clear_422(as_annotator, weather):
    response = as_annotator.post(
        url(weather, "messages/2/resolve/"),
        {"choice": "mine", "version": 1, "their_index": 2, "mine": "{not json"},
        headers=HX,
    )
    assert response.status_code == 422
    assert "did not come through" in response.content.decode()
    assert stored(weather).version == 1


@pytest.mark.parametrize(
    ("path", "method", "data", "status"),
    [
        ("export/", "get", {"spec": "nonsense"}, 422),
        ("export/", "get", {"spec": "chatml", "audience": "annotator"}, 422),
        ("answers/", "post", {"schema": "abc", "question": "x", "value": "y"}, 404),
        ("spans/", "post", {"schema": "1x", "question": "x", "message_index": "a"}, 404),
        ("source/", "post", {"version": 1, "text": "x", "spec": "nonsense"}, 422),
        ("source/", "post", {"version": 1, "text": "x", "convert_to": "nonsense"}, 422),
        ("messages/1/move/", "post", {"version": 1, "to": "x"}, 302),
    ],
)
def test_bad_input_is_a_clear_answer_never_a_500(as_annotator, weather, path, method, data, status):
    response = getattr(as_annotator, method)(url(weather, path), data)
    assert response.status_code == status, response.content[:300]
