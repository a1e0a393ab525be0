"""Judge runs against the local OpenAI-compatible server: 200 transcripts with 429s and a
server that stops answering midway, resumed to completion with every suggestion exactly once;
concurrency and pace kept; the constrained answer refused and asked again; answers read from
text; cancel; a dead worker's run taken up again; suggestions never counted as answers."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.db import connection as db_connection

from editor.assist import judges, runs, tasks
from editor.errors import InvalidJudge, JudgeRunNotResumable, NotAllowed, UnreadableAnswer
from editor.labels import definition_of
from editor.models import Annotation, JudgeRun, ModelRequest, Suggestion, TaskStatus
from tests.support.judging import (
    InFlight,
    make_connection,
    make_judge,
    make_schema,
    make_transcripts,
    transcript_number,
)
from tests.support.openai_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def quick_backoff(settings):
    settings.OCM_JUDGE_BACKOFF_SECONDS = 0.01


def answer_by_number(body):
    """Even chats are helpful, odd ones not: each suggestion can be checked."""
    value = "yes" if transcript_number(body) % 2 == 0 else "no"
    return {"value": value, "rationale": f"chat {transcript_number(body)}"}


def test_a_run_over_200_with_429s_and_a_dead_server_resumed_to_every_suggestion_once(
    dataset, curator, annotator, openai_server
):
    judge = make_judge(dataset, openai_server, curator)
    chats = make_transcripts(dataset, annotator, 200)
    flight = InFlight(answer_by_number, hold=0.005)
    count = {"n": 0}
    lock = threading.Lock()

    def flaky_then_dead(body):
        with lock:
            count["n"] += 1
            n = count["n"]
        if n > 120:
            return Reply(dead=True)  # the server stops answering: connections closed
        if n % 7 == 0:
            return Reply(status=429, retry_after=0.01, error_message="slow down")
        return flight(body)

    openai_server.respond_with(flaky_then_dead)
    run = tasks.start_run(judge, user=curator)  # tasks run at once in tests
    run.refresh_from_db()
    assert run.status == TaskStatus.FAILED
    assert "stopped answering" in run.error and "Resume" in run.error
    first = Suggestion.objects.filter(run=run).count()
    assert 80 < first < 200
    assert run.progress["done"] == first
    assert run.progress["not_asked"] + len(run.failures) == 200 - first
    assert len(run.failures) >= runs.DEAD_AFTER
    assert all(f["attempts"] == runs.MAX_ATTEMPTS for f in run.failures)
    # No 429 became a failure: each was tried again.
    assert not any("slow down" in f["error"] for f in run.failures)

    openai_server.respond_with(flight)
    run = tasks.resume_run(run, user=curator)
    run.refresh_from_db()
    assert run.status == TaskStatus.SUCCEEDED, run.error
    assert run.failures == [] and run.progress["done"] == 200
    suggestions = Suggestion.objects.filter(run=run)
    assert suggestions.count() == 200
    assert suggestions.values("transcript").distinct().count() == 200
    by_chat = dict(suggestions.values_list("transcript_id", "value"))
    assert all(by_chat[c.pk] == ("yes" if n % 2 == 0 else "no") for n, c in enumerate(chats))
    assert set(suggestions.values_list("model", flat=True)) == {"judge-model"}
    # The second attempt asked only what had no suggestion.
    asked_after = len(openai_server.bodies()) - count["n"]
    assert asked_after == 200 - first
    assert 2 <= flight.most <= judge.connection.max_concurrency
    # Every request was recorded, with its tokens.
    figures = runs.run_tokens(run)
    assert figures["requests"] == len(openai_server.bodies())
    assert figures["tokens_in"] > 0 and figures["tokens_out"] > 0
    assert figures["failed"] == ModelRequest.objects.filter(run=run, ok=False).count() > 0
    assert runs.dataset_tokens(dataset)["requests"] == figures["requests"]
    # Not a person's answer.
    assert not Annotation.objects.exists()
    with pytest.raises(JudgeRunNotResumable):
        tasks.resume_run(run, user=curator)


def test_concurrency_is_never_exceeded(dataset, curator, annotator, openai_server):
    judge = make_judge(dataset, openai_server, curator, max_concurrency=2)
    make_transcripts(dataset, annotator, 8)
    flight = InFlight(hold=0.3)
    openai_server.respond_with(flight)
    run = tasks.start_run(judge, user=curator)
    run.refresh_from_db()
    assert run.status == TaskStatus.SUCCEEDED
    assert flight.most == 2


def test_requests_per_minute_spaces_the_requests(dataset, curator, annotator, openai_server):
    judge = make_judge(dataset, openai_server, curator, requests_per_minute=600)
    make_transcripts(dataset, annotator, 5)
    openai_server.respond_with(lambda body: {"value": "no", "rationale": ""})
    started = time.monotonic()
    run = tasks.start_run(judge, user=curator)
    assert time.monotonic() - started >= 0.4  # 5 starts, 0.1 s apart
    assert Suggestion.objects.filter(run=run).count() == 5


def test_a_server_refusing_response_format_is_asked_again_without_it(
    dataset, curator, annotator, openai_server
):
    judge = make_judge(dataset, openai_server, curator)
    make_transcripts(dataset, annotator, 1)

    def no_schemas(body):
        if "response_format" in body:
            return Reply(status=400, error_message="response_format is not supported")
        return "I would call it Helpful, overall."

    openai_server.respond_with(no_schemas)
    run = tasks.start_run(judge, user=curator)
    suggestion = Suggestion.objects.get(run=run)
    assert suggestion.value == "yes"
    bodies = openai_server.bodies()
    assert len(bodies) == 2
    schema = bodies[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["value"] == {"type": "string", "enum": ["yes", "no"]}
    assert "response_format" not in bodies[1]


def test_an_unreadable_answer_is_a_reported_failure(dataset, curator, annotator, openai_server):
    judge = make_judge(dataset, openai_server, curator)
    chats = make_transcripts(dataset, annotator, 2)
    openai_server.respond_with(
        lambda body: (
            "I cannot tell" if transcript_number(body) == 0 else {"value": "no", "rationale": "x"}
        )
    )
    run = tasks.start_run(judge, user=curator)
    run.refresh_from_db()
    assert run.status == TaskStatus.SUCCEEDED
    assert [f["transcript"] for f in run.failures] == [chats[0].pk]
    assert "none of the options" in run.failures[0]["error"]
    assert run.progress == {"done": 1, "total": 2, "failed": 1, "not_asked": 0, "cancelled": False}
    # Resumable: the failed item is asked again.
    openai_server.respond_with(lambda body: {"value": "yes", "rationale": ""})
    tasks.resume_run(run, user=curator)
    assert Suggestion.objects.filter(run=run).count() == 2


def test_cancel_between_items(dataset, curator, annotator, openai_server):
    judge = make_judge(dataset, openai_server, curator, max_concurrency=1)
    make_transcripts(dataset, annotator, 30)
    count = {"n": 0}

    def cancel_at_five(body):
        count["n"] += 1
        if count["n"] == 5:
            with runs.serialized_on_sqlite():
                JudgeRun.objects.update(cancel_requested_at="2026-01-01T00:00:00Z")
            db_connection.close()  # this server thread's own connection
        time.sleep(0.02)
        return {"value": "yes", "rationale": ""}

    openai_server.respond_with(cancel_at_five)
    run = tasks.start_run(judge, user=curator)
    run.refresh_from_db()
    assert run.status == TaskStatus.FAILED and run.error.startswith(runs.CANCELLED)
    done = Suggestion.objects.filter(run=run).count()
    assert 5 <= done < 30
    assert run.progress["cancelled"] is True and run.progress["not_asked"] == 30 - done


def test_cancelling_a_queued_run_ends_it(dataset, curator, annotator, openai_server, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    judge = make_judge(dataset, openai_server, curator)
    make_transcripts(dataset, annotator, 2)
    run = tasks.start_run(judge, user=curator)
    assert run.status == TaskStatus.QUEUED
    run = tasks.cancel_run(run, user=curator)
    assert run.status == TaskStatus.FAILED and run.cancel_requested_at is not None
    assert runs.run_judge_run(run.pk) is None  # no longer queued: a worker leaves it
    assert openai_server.bodies() == []


def test_a_dead_workers_run_is_taken_up_again(dataset, curator, annotator, openai_server, settings):
    from editor import background

    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    judge = make_judge(dataset, openai_server, curator)
    chats = make_transcripts(dataset, annotator, 3)
    openai_server.respond_with(lambda body: {"value": "yes", "rationale": ""})
    run = tasks.start_run(judge, user=curator)
    # A worker claimed it, wrote one suggestion and died.
    JudgeRun.objects.filter(pk=run.pk).update(
        status=TaskStatus.RUNNING, worker="elsewhere:1", attempts=1, heartbeat_at=None
    )
    Suggestion.objects.create(
        transcript=chats[0],
        schema_version=run.schema_version,
        question="helpful",
        value="no",
        run=run,
        model="judge-model",
    )
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    assert background.recover_dead_tasks() >= 1
    run.refresh_from_db()
    assert run.status == TaskStatus.SUCCEEDED
    assert Suggestion.objects.filter(run=run).count() == 3
    assert len(openai_server.bodies()) == 2  # the first one was not asked again


def test_who_may_start_and_what_a_judge_may_answer(dataset, curator, annotator, openai_server):
    judge = make_judge(dataset, openai_server, curator)
    make_transcripts(dataset, annotator, 1)
    with pytest.raises(NotAllowed):
        tasks.start_run(judge, user=annotator)
    schema = judge.schema
    for question, why in (("harm", "span"), ("nope", "no question")):
        with pytest.raises(InvalidJudge) as refused:
            judges.attach_judge(
                schema, question=question, connection=judge.connection, user=curator
            )
        assert why in refused.value.message
    with pytest.raises(InvalidJudge):
        judges.attach_judge(
            schema,
            question="quality",
            connection=judge.connection,
            prompt_template="no placeholders",
            user=curator,
        )
    with pytest.raises(NotAllowed):
        judges.attach_judge(schema, question="quality", connection=judge.connection, user=annotator)


def test_a_run_over_the_lists_filters(dataset, curator, annotator, openai_server):
    judge = make_judge(dataset, openai_server, curator)
    chats = make_transcripts(dataset, annotator, 4)
    openai_server.respond_with(lambda body: {"value": "yes", "rationale": ""})
    run = tasks.start_run(judge, user=curator, filters="q=number+2")
    assert run.transcript_ids == [chats[2].pk]
    with pytest.raises(Exception) as refused:
        tasks.start_run(judge, user=curator, filters={"has_errors": "perhaps"})
    assert refused.value.code == "invalid-filter"


# --- the prompt and reading answers (no server) -------------------------------------------------


@pytest.fixture
def questions(dataset, curator):
    return definition_of(make_schema(dataset, curator).current_version)


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [
        ("helpful", '{"value": "yes", "rationale": "r"}', "yes"),
        ("helpful", 'Sure: {"value": "Not helpful"} as asked', "no"),
        ("helpful", "It was not helpful at all? I'd say: no", "no"),
        ("quality", '{"value": "4"}', 4),
        ("quality", "I rate it 3 out of five", 3),
        ("topics", '{"value": ["weather", "Travel"]}', ["weather", "travel"]),
        ("topics", "weather and food", ["weather", "food"]),
    ],
)
def test_answers_read(questions, key, text, value):
    assert judges.parse_answer(questions.question(key), text)[0] == value


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("helpful", "Helpful, or Not helpful, hard to say"),
        ("helpful", '{"value": "maybe"}'),
        ("quality", "between 2 and 4"),
        ("quality", '{"value": 9}'),
        ("topics", "nothing"),
    ],
)
def test_unreadable_answers(questions, key, text):
    with pytest.raises(UnreadableAnswer):
        judges.parse_answer(questions.question(key), text)


def test_the_prompt_fills_its_placeholders_and_keeps_braces(
    dataset, curator, annotator, openai_server
):
    schema = make_schema(dataset, curator)
    connection = make_connection(dataset, openai_server, curator)
    judge = judges.attach_judge(
        schema,
        question="quality",
        connection=connection,
        prompt_template='Q: {question}\n{options}\nJSON like {"value": 1}\n{transcript}',
        user=curator,
    )
    chat = make_transcripts(dataset, annotator, 1)[0]
    text = judges.prompt(judge, definition_of(schema.current_version).question("quality"), chat)
    assert text.startswith("Q: How good is the answer?\nAnswer with a whole number from 1 to 5.")
    assert '{"value": 1}' in text
    assert "user: Question number 0?" in text and "Answer number 0." in text
    schema_of = judges.response_format(definition_of(schema.current_version).question("topics"))
    assert json.dumps(schema_of["json_schema"]["schema"]["properties"]["value"]) == json.dumps(
        {
            "type": "array",
            "items": {"type": "string", "enum": ["weather", "travel", "food"]},
            "uniqueItems": True,
        }
    )
