"""The label schema builder: every kind of question built from the form, problems marked on
their question and field, the JSON and the form saying the same, the starting templates."""

from __future__ import annotations

import json

import pytest

from editor import labels
from editor.labels import builder, create_label_schema
from editor.labels.starters import STARTERS
from editor.models import LabelSchema

pytestmark = pytest.mark.django_db
URL = "/datasets/support-chats/labels/save/"
PAGE = "/datasets/support-chats/labels/"
HX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _dataset(dataset):
    return dataset


def posted(*rows: dict, **extra) -> dict:
    """A builder form's fields for ``rows`` (each a partial row; the rest left empty)."""
    data = {"q": [str(n) for n in range(len(rows))], **extra}
    for n, row in enumerate(rows):
        for name in builder.ROW_FIELDS:
            value = row.get(name, "")
            if name == "required":
                if value:
                    data[f"q{n}-required"] = "on"
            else:
                data[f"q{n}-{name}"] = value
    return data


EVERY_KIND = [
    {"key": "stars", "kind": "rating", "prompt": "How good?", "scale": "5", "required": True},
    {
        "key": "verdict",
        "kind": "choice",
        "prompt": "Correct?",
        "choices": "yes | Yes | 1\nno | No | 2",
    },
    {
        "key": "issues",
        "kind": "multi_choice",
        "prompt": "Which issues?",
        "applies_to": "message",
        "roles": "assistant",
        "choices": "tone\nfacts | Wrong facts | 2",
    },
    {"key": "note", "kind": "text", "prompt": "Anything else?", "max_length": "300"},
    {
        "key": "spans",
        "kind": "span",
        "prompt": "Tag made-up facts",
        "roles": "assistant",
        "channels": "final, analysis",
        "choices": "made_up | Made up | m",
    },
]


def test_every_kind_of_question_is_built_from_the_form(client, curator):
    client.force_login(curator)
    response = client.post(URL, posted(*EVERY_KIND, name="Everything"))
    assert response.status_code == 302
    stored = LabelSchema.objects.get(name="Everything").current_version.questions
    by_key = {q["key"]: q for q in stored}
    assert [q["key"] for q in stored] == ["stars", "verdict", "issues", "note", "spans"]
    assert by_key["stars"]["scale"] == 5 and by_key["stars"]["required"] is True
    assert by_key["verdict"]["options"] == [
        {"value": "yes", "label": "Yes", "key": "1"},
        {"value": "no", "label": "No", "key": "2"},
    ]
    # a line with the value alone: the label is the value, no key
    assert by_key["issues"]["options"][0] == {"value": "tone", "label": "tone", "key": None}
    assert by_key["issues"]["applies_to"] == "message"
    assert by_key["issues"]["roles"] == ["assistant"]
    assert by_key["note"]["max_length"] == 300
    assert by_key["spans"]["channels"] == ["final", "analysis"]
    assert by_key["spans"]["tags"] == [{"value": "made_up", "label": "Made up", "key": "m"}]


def test_form_and_json_agree(client, curator):
    """What the builder shows as JSON is what saving the form stores, and the form made from
    that JSON gives the same questions again."""
    client.force_login(curator)
    preview = client.post(URL, posted(*EVERY_KIND, action="preview"), headers=HX)
    shown = json.loads(_json_textarea(preview.content.decode()))
    client.post(URL, posted(*EVERY_KIND, name="Both"))
    stored = LabelSchema.objects.get(name="Both").current_version.questions
    assert labels.parse_definition(shown).stored() == stored
    again = [builder.question_from_row(row) for row in builder.rows_from_json(stored)]
    assert labels.parse_definition(again).stored() == stored

    # and the JSON tab saves too (a new version of the same schema)
    schema = LabelSchema.objects.get(name="Both")
    shown[0]["prompt"] = "How good, really?"
    response = client.post(
        URL,
        {
            "schema": schema.pk,
            "expected_version": 1,
            "action": "save-json",
            "questions": json.dumps(shown),
            **posted(*EVERY_KIND),
        },
    )
    assert response.status_code == 302
    schema.refresh_from_db()
    assert schema.current_version.number == 2
    assert schema.current_version.questions[0]["prompt"] == "How good, really?"


def _json_textarea(page: str) -> str:
    import html

    start = page.index('id="schema-json"')
    start = page.index(">", start) + 1
    return html.unescape(page[start : page.index("</textarea>", start)])


def test_problems_are_marked_on_their_question_and_field(client, curator):
    client.force_login(curator)
    rows = [
        {"key": "fine", "kind": "text", "prompt": "Fine"},
        {"key": "stars", "kind": "rating", "prompt": "How good?", "scale": "eleven"},
        {"key": "verdict", "kind": "choice", "prompt": "Correct?", "choices": "y | Yes | x\nn"},
        {"key": "Bad Key", "kind": "text", "prompt": ""},
    ]
    response = client.post(URL, posted(*rows, name="Broken"))
    assert response.status_code == 422
    page = response.content.decode()
    assert not LabelSchema.objects.filter(name="Broken").exists()
    assert (
        'id="q1-scale" name="q1-scale" type="number" min="2" max="10" value="eleven" aria-invalid="true"'
        in page
    )
    assert 'class="mono" spellcheck="false" aria-invalid="true">y | Yes | x' in page
    assert "shortcut key &#x27;x&#x27; of options: use a digit 1-9" in page
    assert (
        'id="q3-key" name="q3-key" value="Bad Key" class="mono" spellcheck="false" aria-invalid="true"'
        in page
    )
    assert 'id="q3-prompt" name="q3-prompt" value="" maxlength="1000" aria-invalid="true"' in page
    assert 'id="q0-prompt" name="q0-prompt" value="Fine" maxlength="1000">' in page  # no mark
    # what was typed stays in the form
    assert 'name="name" value="Broken"' in page

    # a kind that is none (a forged post) is a problem of its question, not an error page
    forged = client.post(URL, posted({"key": "x", "kind": "essay", "prompt": "?"}, name="F"))
    assert forged.status_code == 422 and "kind" in forged.content.decode()
    preview = client.post(URL, posted({"key": "x", "kind": "essay"}, action="preview"), headers=HX)
    assert preview.status_code == 200

    # a problem of the whole schema (two questions with one key) shows above the questions
    twice = [rows[0], {**rows[0], "prompt": "Again"}]
    page = client.post(URL, posted(*twice, name="Twice")).content.decode()
    assert "two questions have the same key" in page


def test_the_live_preview_renders_the_queue_question_and_marks_problems(client, curator):
    client.force_login(curator)
    rows = [EVERY_KIND[0], {"key": "stars2", "kind": "rating", "prompt": "?", "scale": "1"}]
    response = client.post(URL, posted(*rows, action="preview"), headers=HX)
    assert response.status_code == 200
    page = response.content.decode()
    # the queue's own question partial, inside a part of the page htmx leaves alone
    assert 'class="preview-questions" hx-disable' in page
    assert 'fieldset class="question" data-question="stars" data-kind="rating"' in page
    assert page.count('name="value" value="') == 5  # 1..5
    assert "Question 2 shows here once its problems are fixed" in page
    assert 'id="q1-problems" role="status" hx-swap-oob="true"' in page
    assert "greater than or equal to 2" in page
    assert 'id="schema-json"' in page and 'hx-swap-oob="true"' in page


def test_add_move_and_remove_questions(client, curator):
    client.force_login(curator)
    rows = [dict(EVERY_KIND[0]), dict(EVERY_KIND[3])]
    added = client.post(URL, posted(*rows, action="add:span"), headers=HX).content.decode()
    assert 'data-question-row="2" data-kind="span"' in added
    assert 'value="span_1"' in added and "issue | Issue | i" in added

    moved = client.post(URL, posted(*rows, action="up:1"), headers=HX).content.decode()
    assert moved.index('value="note"') < moved.index('value="stars"')

    removed = client.post(URL, posted(*rows, action="remove:0"), headers=HX).content.decode()
    assert 'value="stars"' not in removed and 'value="note"' in removed

    assert builder.moved(rows, "down:1") == rows  # the last goes no further down
    assert builder.moved(rows, "remove:9") == rows
    assert builder.moved(rows, "add:nonsense") == rows


def test_json_tab_fills_the_form_and_says_when_it_is_not_json(client, curator):
    client.force_login(curator)
    questions = STARTERS["tool_use"]["questions"]
    page = client.post(
        URL, {"action": "json", "questions": json.dumps(questions)}, headers=HX
    ).content.decode()
    assert 'value="tool_choice"' in page and 'value="tool_errors"' in page
    assert 'data-kind="multi_choice"' in page
    broken = client.post(URL, {"action": "json", "questions": "[{"}, headers=HX).content.decode()
    assert "not JSON" in broken


@pytest.mark.parametrize("name", sorted(STARTERS))
def test_every_starting_template_is_a_valid_schema(name, client, curator):
    labels.parse_definition(STARTERS[name]["questions"])
    client.force_login(curator)
    page = client.post(URL, {"action": f"starter:{name}"}, headers=HX).content.decode()
    first = STARTERS[name]["questions"][0]
    assert f'value="{first["key"]}"' in page
    assert f'value="{STARTERS[name]["title"]}"' in page  # the name, when none was typed


def test_editing_a_schema_opens_its_questions_in_the_form(client, dataset, curator):
    schema = create_label_schema(
        dataset, author=curator, name="Tone", questions=STARTERS["helpfulness"]["questions"]
    )
    client.force_login(curator)
    page = client.get(f"{PAGE}?schema={schema.pk}").content.decode()
    assert 'data-testid="schema-form"' in page
    assert 'value="helpfulness"' in page and "Save as version 2" in page
    assert client.get(f"{PAGE}?schema=999999").status_code == 404


def test_without_htmx_a_builder_button_answers_the_whole_page(client, curator):
    client.force_login(curator)
    response = client.post(URL, posted(EVERY_KIND[0], action="add:text"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "<html" in page and 'data-question-row="1" data-kind="text"' in page


def test_an_id_past_any_database_integer_is_no_schema(client, curator):
    client.force_login(curator)
    assert client.get(f"{PAGE}?schema={2**70}").status_code == 404
    assert client.post(URL, {"schema": str(2**70), "action": "preview"}).status_code == 404
