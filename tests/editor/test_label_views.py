"""Answering label questions on the transcript page: questions about each message, span tags
on selected text, removing one's own tag; per role."""

from __future__ import annotations

import re

import pytest

from editor.labels import create_label_schema
from editor.models import Annotation
from editor.storage.create import create_transcript
from tests.editor.samples import conversation
from tests.support.label_questions import TOPIC, message_schema

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def transcript(dataset, curator):
    return create_transcript(dataset, author=curator, text=conversation(), spec="openchatml-2.2")


@pytest.fixture
def schema(dataset, curator):
    """``correct`` about each assistant message, and span tags on them."""
    issues = {
        "key": "issues",
        "kind": "span",
        "prompt": "Tag problems",
        "roles": ["assistant"],
        "tags": [{"value": "hallucination", "label": "Hallucination", "key": "h"}],
    }
    return message_schema(dataset, curator, issues, name="Finals")


def test_assistant_messages_carry_their_questions_and_tags(client, transcript, annotator, schema):
    client.force_login(annotator)
    html = client.get(f"/transcripts/{transcript.pk}/", {"audience": "annotator"}).content.decode()
    # Two assistant answers, each with the choice question and the span tags; users none.
    assert html.count('data-question="correct" data-kind="choice" data-message-index="1"') == 1
    assert html.count('data-question="correct"') == 2
    assert html.count('data-tag-key="h"') == 2
    assert 'data-spannable data-message-index="1"' in html
    assert 'data-spannable data-message-index="0"' not in html
    # Viewers see none of it (end-user rendering, no answers).
    client.force_login(transcript.dataset.memberships.get(role="viewer").user)
    assert (
        'data-question="correct"'
        not in client.get(f"/transcripts/{transcript.pk}/").content.decode()
    )


def test_questions_about_the_whole_transcript_are_under_their_schema_once_there_are_two(
    client, transcript, annotator, curator
):
    create_label_schema(transcript.dataset, author=curator, name="Triage", questions=[TOPIC])
    client.force_login(annotator)
    html = client.get(f"/transcripts/{transcript.pk}/", {"audience": "annotator"}).content.decode()
    assert html.count('data-question="topic"') == 1 and 'class="schema-name"' not in html
    # A second schema asking alike: each question under the name of the schema asking it.
    create_label_schema(transcript.dataset, author=curator, name="Audit", questions=[TOPIC])
    html = client.get(f"/transcripts/{transcript.pk}/", {"audience": "annotator"}).content.decode()
    names = re.findall(r'<h3 class="schema-name"[^>]*>([^<]*)</h3>', html)
    assert sorted(names) == ["Audit", "Triage"]
    under_each = re.split(r'<h3 class="schema-name"', html)[1:]
    assert [part.count('data-question="topic"') for part in under_each] == [1, 1]


def test_answer_a_message_question(client, transcript, annotator, schema):
    client.force_login(annotator)
    response = client.post(
        f"/transcripts/{transcript.pk}/answers/",
        {"schema": schema.pk, "question": "correct", "value": "no", "message_index": 3},
        headers=HX,
    )
    assert 'id="answer-' in response.content.decode() and ">saved<" in response.content.decode()
    answer = Annotation.objects.get()
    assert (answer.message_index, answer.value, answer.state) == (3, "no", "draft")
    wrong = client.post(
        f"/transcripts/{transcript.pk}/answers/",
        {"schema": schema.pk, "question": "correct", "value": "no", "message_index": 0},
        headers=HX,
    )
    assert "does not apply to message 0" in wrong.content.decode()


def test_tag_a_span_then_remove_it(client, transcript, annotator, schema):
    client.force_login(annotator)
    response = client.post(
        f"/transcripts/{transcript.pk}/spans/",
        {
            "schema": schema.pk,
            "question": "issues",
            "value": "hallucination",
            "message_index": 1,
            "start": 0,
            "end": 6,
        },
        headers=HX,
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<article id="message-1"')
    assert '<mark class="span-tag" data-tags="hallucination "' in html and ">Answer</mark>" in html
    span = Annotation.objects.get()
    assert (span.start, span.end, span.text) == (0, 6, "Answer")

    outside = client.post(
        f"/transcripts/{transcript.pk}/spans/",
        {
            "schema": schema.pk,
            "question": "issues",
            "value": "hallucination",
            "message_index": 1,
            "start": 5,
            "end": 999,
        },
        headers=HX,
    ).content.decode()
    assert "a span needs start &lt; end within the message" in outside

    removed = client.post(f"/annotations/{span.pk}/delete/", headers=HX).content.decode()
    assert '<mark class="span-tag"' not in removed
    assert not Annotation.objects.exists()


def test_someone_elses_tag_cannot_be_removed(client, transcript, annotator, curator, schema):
    from editor.labels.annotations import create_annotation

    span = create_annotation(
        transcript,
        annotator=annotator,
        schema=schema,
        question="issues",
        value="hallucination",
        message_index=1,
        start=0,
        end=6,
    )
    client.force_login(curator)
    assert client.post(f"/annotations/{span.pk}/delete/", headers=HX).status_code == 403
    assert Annotation.objects.filter(pk=span.pk).exists()


def test_curators_write_schemas_in_the_browser(client, dataset, curator, annotator):
    import json as json_module

    from editor.models import LabelSchema

    client.force_login(annotator)
    assert client.get("/datasets/support-chats/labels/").status_code == 403
    client.force_login(curator)
    page = client.get("/datasets/support-chats/labels/").content.decode()
    assert 'data-testid="new-schema-form"' in page
    questions = [
        {
            "key": "ok",
            "kind": "choice",
            "prompt": "OK?",
            "options": [{"value": "y", "label": "Y"}, {"value": "n", "label": "N"}],
        }
    ]
    response = client.post(
        "/datasets/support-chats/labels/save/",
        {"name": "Basics", "questions": json_module.dumps(questions)},
    )
    assert response.status_code == 302
    schema = LabelSchema.objects.get(name="Basics")
    assert schema.current_version.number == 1

    bad = client.post(
        "/datasets/support-chats/labels/save/",
        {
            "schema": schema.pk,
            "expected_version": 1,
            "questions": '[{"key": "x", "kind": "rating", "prompt": "?"}]',
        },
    )
    assert bad.status_code == 422
    assert "rating question needs a scale" in bad.content.decode()
    assert "&quot;kind&quot;: &quot;rating&quot;" in bad.content.decode()  # what was typed is kept
    broken = client.post(
        "/datasets/support-chats/labels/save/", {"schema": schema.pk, "questions": "[{"}
    )
    assert broken.status_code == 422 and "not JSON" in broken.content.decode()

    questions[0]["prompt"] = "Is it OK?"
    client.post(
        "/datasets/support-chats/labels/save/",
        {"schema": schema.pk, "expected_version": 1, "questions": json_module.dumps(questions)},
    )
    schema.refresh_from_db()
    assert schema.current_version.number == 2
    client.post("/datasets/support-chats/labels/save/", {"schema": schema.pk, "archive": "1"})
    schema.refresh_from_db()
    assert schema.archived_at is not None
