"""Judges of questions about each message: asked once per message in the question's scope
(its roles and channels), the prompt naming the message; a suggestion per message, resumed
message by message, shown and accepted on the message in the transcript page, exported with
its message only when asked."""

from __future__ import annotations

import json
import re

import pytest

from editor import formats
from editor.assist import judges, runs, tasks
from editor.errors import InvalidJudge
from editor.exporting import export_dataset
from editor.models import Annotation, JudgeRun, Suggestion, TaskStatus
from editor.storage.create import create_transcript
from tests.support.judging import make_connection
from tests.support.label_questions import message_schema
from tests.support.openai_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

TONE = {"key": "tone", "kind": "rating", "prompt": "Tone?", "applies_to": "message", "scale": 5}


@pytest.fixture(autouse=True)
def quick_backoff(settings):
    settings.OCM_JUDGE_BACKOFF_SECONDS = 0.01


def chats(dataset, author, count=3):
    """Each: user, assistant, user, assistant; answer "A<n>.<turn>"."""
    M = formats.Message
    made = []
    for n in range(count):
        messages = []
        for turn in range(2):
            messages.append(M(role="user", content=f"Q{n}.{turn}?"))
            messages.append(M(role="assistant", channel="final", content=f"A{n}.{turn}."))
        text = formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=messages))
        made.append(
            create_transcript(dataset, author=author, title=f"chat {n}", text=text, spec=None)
        )
    return made


def asked_about(body) -> str:
    """The answer a request's prompt names ("A<n>.<turn>"), from its <message> part."""
    text = body["messages"][-1]["content"]
    return re.search(r"<message>\n(.*?)\n</message>", text, re.S).group(1)


def by_turn(body):
    """The first turn's answers are correct, the second's wrong."""
    shown = asked_about(body)
    return {"value": "yes" if shown.endswith(".0.") else "no", "rationale": shown}


@pytest.fixture
def world(dataset, curator, annotator, openai_server):
    schema = message_schema(dataset, curator, TONE)  # "correct", then "tone"
    connection = make_connection(dataset, openai_server, curator)
    judge = judges.attach_judge(schema, question="correct", connection=connection, user=curator)
    return schema, judge, chats(dataset, annotator)


def test_a_question_about_each_message_takes_a_judge_whose_prompt_names_the_message(world, curator):
    schema, judge, _ = world
    assert "{message}" in judge.prompt_template
    assert [q.key for q in judges.judgeable_questions(schema)] == ["correct", "tone"]
    with pytest.raises(InvalidJudge) as refused:
        judges.attach_judge(
            schema,
            question="tone",
            connection=judge.connection,
            prompt_template="Rate {question} in {transcript}.",
            user=curator,
        )
    assert refused.value.details["missing"] == ["{message}"]
    # The Judges page shows the whole-transcript default first: left as it was, it means the
    # question's own default (\r\n: as a browser posts a textarea).
    posted = judges.DEFAULT_PROMPT_TEMPLATE.replace("\n", "\r\n")
    tone = judges.attach_judge(
        schema, question="tone", connection=judge.connection, prompt_template=posted, user=curator
    )
    assert tone.prompt_template == judges.DEFAULT_MESSAGE_PROMPT_TEMPLATE


def test_a_run_asks_once_per_message_in_scope_and_suggests_per_message(
    world, curator, openai_server
):
    _, judge, transcripts = world
    openai_server.respond_with(by_turn)
    run = tasks.start_run(judge, user=curator)  # tasks run at once in tests
    done = JudgeRun.objects.get(pk=run.pk)
    assert done.status == TaskStatus.SUCCEEDED, done.error
    assert done.progress["done"] == 3 and done.failures == []

    bodies = openai_server.bodies()
    assert sorted(asked_about(b) for b in bodies) == sorted(
        f"Message #{i} (assistant/final):\nA{n}.{turn}."
        for n in range(3)
        for turn, i in ((0, 1), (1, 3))
    )  # the assistant's messages only, each once
    prompt = bodies[0]["messages"][-1]["content"]
    assert "Is this answer correct?" in prompt and "<conversation>" in prompt

    found = {
        (s.transcript_id, s.message_index): s.value for s in Suggestion.objects.filter(run=run)
    }
    assert found == {(t.pk, i): v for t in transcripts for i, v in ((1, "yes"), (3, "no"))}
    assert runs.remaining(done) == []


def test_a_failed_message_is_asked_again_alone_on_resume(world, curator, openai_server):
    _, judge, transcripts = world
    broken = "A1.1."

    def refuse_one(body):
        if asked_about(body).endswith(broken):
            return Reply(content="I cannot tell.")  # names no option: unreadable
        return by_turn(body)

    openai_server.respond_with(refuse_one)
    run = tasks.start_run(judge, user=curator)
    done = JudgeRun.objects.get(pk=run.pk)
    assert done.progress["done"] == 2
    [failure] = done.failures
    assert failure["transcript"] == transcripts[1].pk
    assert failure["error"].startswith("Message #3: ")
    assert Suggestion.objects.filter(run=run).count() == 5  # its other message was answered
    assert runs.remaining(done) == [transcripts[1].pk]

    asked = len(openai_server.bodies())
    broken = "never"
    tasks.resume_run(done, user=curator)
    resumed = JudgeRun.objects.get(pk=run.pk)
    assert resumed.status == TaskStatus.SUCCEEDED, resumed.error
    assert [asked_about(b) for b in openai_server.bodies()[asked:]] == [
        "Message #3 (assistant/final):\nA1.1."
    ]
    assert Suggestion.objects.filter(run=run).count() == 6


def test_the_transcript_page_shows_it_on_the_message_and_accepting_it(
    world, curator, annotator, client, openai_server
):
    _, judge, transcripts = world
    openai_server.respond_with(by_turn)
    tasks.start_run(judge, user=curator)
    chat = transcripts[0]
    client.force_login(annotator)
    page = client.get(f"/transcripts/{chat.pk}/").content.decode()

    def card(index):
        start = page.index(f'<article id="message-{index}"')
        return page[start : page.index("</article>", start)]

    first, second = card(1), card(3)
    assert "Suggested by judge-model" in first and "data-preselected" in first
    assert re.search(r'value="yes"[^>]*checked', first)
    assert re.search(r'value="no"[^>]*checked', second)
    assert "Suggested by" not in card(0)  # a user's message: not asked about

    listed = client.get(f"/api/v1/transcripts/{chat.pk}/suggestions").json()
    assert sorted((s["question"], s["message_index"], s["value"]) for s in listed) == [
        ("correct", 1, "yes"),
        ("correct", 3, "no"),
    ]

    suggestion = Suggestion.objects.get(transcript=chat, message_index=3)
    answered = client.post(f"/suggestions/{suggestion.pk}/accept/", headers={"HX-Request": "true"})
    assert answered.status_code == 200
    assert 'data-message-index="3"' in answered.content.decode()
    annotation = Annotation.objects.get(transcript=chat, annotator=annotator)
    assert (annotation.question, annotation.message_index, annotation.value) == ("correct", 3, "no")


def test_exported_with_their_message_only_when_asked(world, curator, openai_server, dataset):
    _, judge, _ = world
    openai_server.respond_with(by_turn)
    tasks.start_run(judge, user=curator)
    lines = [json.loads(line) for line in export_dataset(dataset)]
    assert not any("suggestions" in line for line in lines)
    lines = {
        line["title"]: line
        for line in map(json.loads, export_dataset(dataset, with_suggestions=True))
    }
    rows = lines["chat 0"]["suggestions"]
    assert [(r["question"], r["message"], r["value"], r["source"]) for r in rows] == [
        ("correct", 1, "yes", "model"),
        ("correct", 3, "no", "model"),
    ]
