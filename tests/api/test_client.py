"""``editor.client.Client`` against the running test server (pytest-django's ``live_server``):
real sockets, the real httpx client, the real API. Imports run within the request that
starts them (the immediate task backend of tests/conftest.py)."""

from __future__ import annotations

import gc
import http.client
import http.server
import io
import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from editor import formats
from editor.client import (
    ApiError,
    Client,
    ImportFailed,
    TranscriptSummary,
    VersionsUnavailable,
)
from editor.models import ApiToken, Membership, Role, Transcript
from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcripts
from tests.editor.samples import conversation
from tests.editor.test_labels import QUESTIONS

# The live server reads what the test writes: real transactions.
pytestmark = pytest.mark.django_db(transaction=True)


CHATML = "<|start|>user<|message|>Hi<|end_message|>\n"

LINES = (
    json.dumps({"id": "a", "spec": "openchatml-2.2", "text": conversation(turns=1)})
    + "\n"
    + json.dumps({"id": "b", "document": {"messages": [{"role": "user", "content": "Hi"}]}})
    + "\n"
)


def client_for(live_server, user, **options) -> Client:
    return Client(live_server.url, ApiToken.issue(user)[1], **options)


@pytest.fixture
def as_annotator(live_server, annotator, dataset):
    with client_for(live_server, annotator) as client:
        yield client


@pytest.fixture
def as_curator(live_server, curator, dataset):
    with client_for(live_server, curator) as client:
        yield client


def add_transcripts(dataset, author, count: int, text: str | None = None) -> None:
    """``count`` transcripts through the importer's bulk path (one content, parsed once)."""
    content = TranscriptContent.from_text(text or conversation(turns=1), "openchatml-2.2")
    new = [NewTranscript(content, title=f"T{n}", external_id=f"t{n}") for n in range(count)]
    for start in range(0, count, 2000):
        create_transcripts(dataset, new[start : start + 2000], author=author, checked=True)


def test_the_url_and_token_come_from_the_environment(live_server, annotator, monkeypatch):
    monkeypatch.setenv("OCM_URL", live_server.url + "/")
    monkeypatch.setenv("OCM_TOKEN", ApiToken.issue(annotator)[1])
    with Client() as client:
        assert client.url == live_server.url + "/api/v1"
        assert list(client.datasets()) == []
    monkeypatch.delenv("OCM_TOKEN")
    with pytest.raises(ValueError, match="OCM_TOKEN"):
        Client()


def test_datasets_create_read_and_list(as_annotator, dataset):
    made = as_annotator.create_dataset("pipeline", "Pipeline", description="From a script")
    assert (made.slug, made.role, made.transcript_count) == ("pipeline", "curator", 0)
    assert as_annotator.dataset("pipeline").description == "From a script"
    assert [d.slug for d in as_annotator.datasets()] == ["pipeline", "support-chats"]
    assert as_annotator.dataset("support-chats").created_at.tzinfo is not None


def test_an_api_refusal_is_raised_with_its_code_and_status(as_annotator):
    with pytest.raises(ApiError) as refused:
        as_annotator.dataset("nowhere")
    assert (refused.value.status, refused.value.code) == (404, "not-found")
    with pytest.raises(ApiError) as invalid:
        as_annotator.create_dataset("bad slug!", "Bad")
    assert (invalid.value.status, invalid.value.code) == (422, "invalid-dataset")
    assert invalid.value.details


def test_the_transcript_list_follows_pages_past_1000(as_annotator, dataset, annotator):
    add_transcripts(dataset, annotator, 1001)
    listed = list(as_annotator.transcripts(dataset.slug))
    assert len(listed) == 1001
    assert all(isinstance(row, TranscriptSummary) for row in listed)
    ids = [row.id for row in listed]
    assert ids == sorted(ids) and len(set(ids)) == 1001
    assert [row.title for row in as_annotator.transcripts(dataset.slug, q="zzz")] == []
    newest = next(as_annotator.transcripts(dataset.slug, sort="-id"))
    assert newest.id == ids[-1]


def test_create_and_read_a_transcript_as_text_or_canonical(as_annotator, dataset):
    made = as_annotator.create_transcript(
        dataset.slug, conversation(), spec="openchatml-2.2", title="Two turns", external_id="x1"
    )
    assert (made.title, made.external_id, made.version, made.dataset) == (
        "Two turns",
        "x1",
        1,
        dataset.slug,
    )
    read = as_annotator.transcript(made.id)
    assert read.source_text == conversation()
    canonical = read.canonical
    assert isinstance(canonical, formats.Transcript) and canonical.messages

    again = as_annotator.create_transcript(dataset.slug, canonical, title="Copy")
    assert as_annotator.transcript(again.id).canonical.messages == canonical.messages


def test_push_a_file_waits_for_the_report(as_annotator, dataset, tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text(LINES)
    task = as_annotator.push(dataset.slug, path, on_conflict="skip")
    assert (task.status, task.source_name, task.on_conflict) == ("succeeded", "batch.jsonl", "skip")
    assert task.counts["created"] == 2 and task.finished and not task.failures
    assert sorted(Transcript.objects.values_list("external_id", flat=True)) == ["a", "b"]

    assert as_annotator.import_task(task.id).report == task.report
    assert as_annotator.wait_for_import(task.id).status == "succeeded"
    with path.open("rb") as upload:
        queued = as_annotator.push(dataset.slug, upload, wait=False)
    assert queued.source_name == "batch.jsonl"
    again = as_annotator.wait_for_import(queued.id)
    assert again.counts["created"] == 0 and again.counts["skipped"] + again.counts["updated"] == 2


def test_push_transcripts_as_canonical_objects_texts_and_envelopes(as_annotator, dataset):
    canonical = formats.parse(conversation(turns=2), spec="openchatml-2.2").transcript
    task = as_annotator.push(
        dataset.slug,
        [
            canonical,
            conversation("openai-messages", turns=1),
            {"id": "env", "title": "Envelope", "spec": "chatml", "text": CHATML},
        ],
    )
    assert task.counts["created"] == 3, task.report
    assert task.source_name == "transcripts.jsonl"
    specs = set(Transcript.objects.values_list("spec", flat=True))
    assert specs == {"openchatml-2.2", "openai-messages", "chatml"}
    assert Transcript.objects.get(external_id="env").title == "Envelope"


def test_a_failed_import_is_raised_with_its_code(as_annotator, dataset):
    with pytest.raises(ImportFailed) as failed:
        as_annotator.push(dataset.slug, _file(LINES + "{not json\n"))
    assert failed.value.code == "invalid-json"
    assert failed.value.task.status == "failed"
    assert "Nothing was imported" in failed.value.message
    assert failed.value.details["failures"][0]["location"] == "batch.jsonl:3"
    assert not Transcript.objects.exists()


def _file(text: str):
    upload = io.BytesIO(text.encode())
    upload.name = "batch.jsonl"
    return upload


def test_push_shows_a_progress_bar_when_asked(as_annotator, dataset, capsys):
    as_annotator.push(dataset.slug, _file(LINES), progress=True)
    shown = capsys.readouterr().err
    assert shown.startswith("\rimport ") and "100%" in shown and shown.endswith("\n")
    as_annotator.push(dataset.slug, _file(LINES))  # not a terminal: nothing
    assert capsys.readouterr().err == ""


def test_pull_to_a_file_in_another_spec(as_annotator, dataset, annotator, tmp_path):
    add_transcripts(dataset, annotator, 3)
    done = as_annotator.pull(dataset.slug, tmp_path / "out.jsonl", spec="chatml")
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert done.lines == 3 and done.bytes == (tmp_path / "out.jsonl").stat().st_size
    assert [json.loads(line)["spec"] for line in lines] == ["chatml"] * 3
    assert "<|end_message|>" in json.loads(lines[0])["text"]
    assert as_annotator.pull(dataset.slug, tmp_path / "none.jsonl", status=["approved"]).lines == 0


def test_pull_as_canonical_objects(as_annotator, dataset, annotator):
    add_transcripts(dataset, annotator, 2)
    pulled = list(as_annotator.pull_transcripts(dataset.slug, spec="openai-messages"))
    assert [(p.title, p.spec, p.status) for p in pulled] == [
        ("T0", "openai-messages", "draft"),
        ("T1", "openai-messages", "draft"),
    ]
    expected = formats.parse(conversation(turns=1), spec="openchatml-2.2").transcript
    assert [m.content for m in pulled[0].transcript.messages] == [
        m.content for m in expected.messages
    ]


def test_pulling_an_unknown_version(as_annotator, dataset):
    with pytest.raises(ApiError) as unknown:
        as_annotator.pull(dataset.slug, "/dev/null", version="v1")
    assert unknown.value.code == "not-found"
    as_annotator._has_versions = False  # as against a server without dataset versions
    with pytest.raises(VersionsUnavailable, match="dataset versions are not available"):
        as_annotator.pull(dataset.slug, "/dev/null", version="v1")
    with pytest.raises(ApiError) as missing:
        list(as_annotator.pull_transcripts("nowhere"))
    assert missing.value.code == "not-found"


def test_a_streamed_pull_of_10000_transcripts_runs_in_constant_memory(
    as_annotator, dataset, annotator, tmp_path
):
    add_transcripts(dataset, annotator, 10_000, text=conversation(turns=3))
    size = as_annotator.pull(dataset.slug, tmp_path / "all.jsonl").bytes
    gc.collect()
    tracemalloc.start()
    try:
        count = messages = 0
        for pulled in as_annotator.pull_transcripts(dataset.slug):
            count += 1
            messages += len(pulled.transcript.messages)
            if count == 1000:
                _, first_peak = tracemalloc.get_traced_memory()
                tracemalloc.reset_peak()
        _, rest_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 10_000 and messages == 60_000
    # The peaks cover the client and the server's thread (in this process) together. The
    # 9,000 transcripts after the first 1,000 (some 3.9 MB of lines here) add nothing: the
    # peak does not grow with what was pulled, and stays below the whole answer's size (a
    # client that read the answer whole before parsing it fails this).
    print(
        f"peak {first_peak / 1e6:.1f} MB over the first 1,000 transcripts, "
        f"{rest_peak / 1e6:.1f} MB over the next 9,000 (the export: {size / 1e6:.1f} MB)"
    )
    assert first_peak < size and rest_peak < size
    assert rest_peak < first_peak + 1_500_000
    assert rest_peak < size


def test_labels_read_and_written(as_curator, as_annotator, dataset, annotator):
    transcript = as_annotator.create_transcript(
        dataset.slug, conversation(), spec="openchatml-2.2", title="Labelled"
    )
    schema = as_curator.create_label_schema(
        dataset.slug, "Quality", QUESTIONS, instructions="Read first."
    )
    assert schema.current_version["number"] == 1
    assert [s.id for s in as_annotator.label_schemas(dataset.slug)] == [schema.id]
    assert as_annotator.label_schema(schema.id).name == "Quality"

    topic = as_annotator.annotate(transcript.id, schema.id, "topic", "billing")
    assert (topic.state, topic.target, topic.annotator) == ("draft", "transcript", "annotator")
    assert as_annotator.update_annotation(topic.id, "bug").value == "bug"
    assert as_annotator.submit_annotation(topic.id).state == "submitted"
    assert as_annotator.annotation(topic.id).submitted_at is not None
    rating = as_annotator.annotate(
        transcript.id, schema.id, "helpful", 4, message_index=3, submit=True
    )
    assert (rating.state, rating.message_index) == ("submitted", 3)
    comment = as_annotator.annotate(transcript.id, schema.id, "comment", "ok")
    as_annotator.delete_annotation(comment.id)

    answers = list(as_curator.annotations(transcript.id))
    assert sorted(a.question for a in answers) == ["helpful", "topic"]
    assert [a.id for a in as_curator.annotations(transcript.id, question="topic")] == [topic.id]
    with pytest.raises(ApiError) as locked:
        as_annotator.delete_annotation(topic.id)
    assert (locked.value.status, locked.value.code) == (409, "annotation-locked")


def test_queue_items_claimed_submitted_skipped_and_reviewed(as_curator, as_annotator, dataset):
    for n in range(3):
        as_curator.create_transcript(dataset.slug, conversation(), title=f"Q{n}")
    queue = as_curator.create_queue(dataset.slug, "Check", overlap=1, filters={"status": ["draft"]})
    assert queue.progress["items"] == 3
    assert [q.id for q in as_annotator.queues(dataset.slug)] == [queue.id]
    assert as_annotator.queue(queue.id).name == "Check"

    first = as_annotator.claim(queue.id)
    assert first.state == "claimed" and as_annotator.claim(queue.id).id == first.id
    assert as_annotator.submit_assignment(first.id).state == "submitted"
    assert as_curator.review_assignment(first.id, "approve").state == "approved"
    assert as_annotator.skip_assignment(as_annotator.claim(queue.id).id).state == "skipped"
    last = as_annotator.claim(queue.id)
    as_annotator.skip_assignment(last.id)
    assert as_annotator.claim(queue.id) is None

    states = [a.state for a in as_annotator.assignments(queue.id)]
    assert sorted(states) == ["approved", "skipped", "skipped"]
    assert [a.id for a in as_curator.assignments(queue.id, state="approved")] == [first.id]


def test_bulk_actions_inline_and_in_the_background(as_annotator, dataset, annotator, curator):
    Membership.objects.filter(user=annotator).update(role=Role.CURATOR)
    add_transcripts(dataset, annotator, 503)
    ids = list(Transcript.objects.order_by("pk").values_list("pk", flat=True))
    small = as_annotator.bulk(dataset.slug, "transition", ids=ids[:2], transition="submit")
    assert (small.matched, sorted(small.changed), small.task) == (2, ids[:2], None)

    big = as_annotator.bulk(
        dataset.slug, "transition", filter={"status": ["draft"]}, transition="submit"
    )
    assert big.task["kind"] == "bulk" and big.matched == 501 and len(big.changed) == 501
    assert as_annotator.bulk_task(big.task["id"]).status == "succeeded"
    with pytest.raises(ApiError) as refused:
        as_annotator.bulk(dataset.slug, "transition", ids=[ids[0]], transition="fly")
    assert refused.value.status in (409, 422)


class _FlakyProxy(http.server.ThreadingHTTPServer):
    """A proxy to the live server that first answers ``refusals`` requests itself with
    ``status`` (and ``Retry-After`` when given), then forwards every request."""

    def __init__(self, target: str, status: int, refusals: int, retry_after: str | None):
        self.target = urlsplit(target)
        self.status, self.refusals, self.retry_after = status, refusals, retry_after
        self.seen: list[float] = []
        super().__init__(("127.0.0.1", 0), _ProxyHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self):
        server = self.server
        server.seen.append(time.monotonic())
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if len(server.seen) <= server.refusals:
            payload = json.dumps({"code": "slow-down", "message": "Busy.", "details": None})
            self.send_response(server.status)
            if server.retry_after is not None:
                self.send_header("Retry-After", server.retry_after)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload.encode())
            return
        upstream = http.client.HTTPConnection(server.target.hostname, server.target.port)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        upstream.request(self.command, self.path, body=body or None, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        upstream.close()

    do_GET = do_POST = _answer


@pytest.fixture
def flaky(live_server):
    servers = []

    def start(status: int, refusals: int, retry_after: str | None = None) -> _FlakyProxy:
        proxy = _FlakyProxy(live_server.url, status, refusals, retry_after)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        servers.append(proxy)
        return proxy

    yield start
    for proxy in servers:
        proxy.shutdown()
        proxy.server_close()


def test_a_429_is_retried_after_its_retry_after(flaky, annotator, dataset):
    proxy = flaky(429, refusals=1, retry_after="1")
    with Client(proxy.url, ApiToken.issue(annotator)[1]) as client:
        assert client.dataset(dataset.slug).name == "Support chats"
    assert len(proxy.seen) == 2
    assert proxy.seen[1] - proxy.seen[0] >= 1.0


def test_a_retry_after_date_is_honoured(flaky, annotator, dataset):
    when = datetime.now(UTC) + timedelta(seconds=2)
    proxy = flaky(429, refusals=1, retry_after=format_datetime(when, usegmt=True))
    with Client(proxy.url, ApiToken.issue(annotator)[1]) as client:
        assert client.dataset(dataset.slug).slug == dataset.slug
    assert len(proxy.seen) == 2
    assert proxy.seen[1] - proxy.seen[0] >= 0.9  # the date is to the second


def test_an_upload_is_sent_whole_again_after_a_503(flaky, annotator, dataset):
    proxy = flaky(503, refusals=2)  # no Retry-After: the client's own back-off
    with Client(proxy.url, ApiToken.issue(annotator)[1], backoff=0.05) as client:
        task = client.push(dataset.slug, _file(LINES))
    assert task.counts["created"] == 2 and len(proxy.seen) >= 3


def test_retries_give_up_with_the_last_answers_code(flaky, annotator, dataset):
    proxy = flaky(429, refusals=10, retry_after="0")
    with (
        Client(proxy.url, ApiToken.issue(annotator)[1], retries=2) as client,
        pytest.raises(ApiError) as refused,
    ):
        client.dataset(dataset.slug)
    assert (refused.value.status, refused.value.code) == (429, "slow-down")
    assert len(proxy.seen) == 3


def test_the_client_imports_without_django():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    program = (
        "import sys; from editor.client import Client; "
        "leaked = [m for m in sys.modules if m == 'django' or m.startswith('django.')]; "
        "assert not leaked, leaked; print('ok')"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_pipeline_of_docs_client_md(live_server, curator, annotator, dataset, tmp_path):
    """The example of docs/client.md, step by step, with its file and schema made here."""
    batch = tmp_path / "generations.jsonl"
    batch.write_text(LINES)
    with Client(live_server.url, ApiToken.issue(curator)[1]) as ocm:
        ocm.create_label_schema(
            dataset.slug,
            "Topic",
            [
                {
                    "key": "topic",
                    "kind": "choice",
                    "prompt": "About?",
                    "options": QUESTIONS[0]["options"],
                }
            ],
        )
        done = ocm.push("support-chats", batch, on_conflict="skip")
        new_ids = [
            item["transcript_id"] for item in done.report["items"] if item["action"] == "created"
        ]
        greeting = formats.Transcript(
            spec="openchatml-2.2",
            messages=[
                formats.Message(role="user", content="Hi"),
                formats.Message(role="assistant", channel="final", content="Hello!"),
            ],
        )
        ocm.push("support-chats", [greeting], partial=True)
        ocm.bulk("support-chats", "transition", ids=new_ids, transition="submit")
        schema = next(ocm.label_schemas("support-chats"))
        queue = ocm.create_queue(
            "support-chats",
            f"Batch {done.id}",
            overlap=2,
            filters={"status": ["in_review"]},
            schemas=[schema.id],
        )
    with Client(live_server.url, ApiToken.issue(annotator)[1]) as bot:
        while (item := bot.claim(queue.id)) is not None:
            bot.annotate(item.transcript, schema.id, "topic", "billing", submit=True)
            bot.submit_assignment(item.id)
    with Client(live_server.url, ApiToken.issue(curator)[1]) as ocm:
        reviewed = 0
        for assignment in ocm.assignments(queue.id, state="submitted"):
            answers = list(ocm.annotations(assignment.transcript, annotator=assignment.annotator))
            assert answers and all(a.state == "submitted" for a in answers)
            ocm.review_assignment(assignment.id, "approve")
            reviewed += 1
        ocm.bulk("support-chats", "set_status", filter={"status": ["in_review"]}, status="approved")
        ocm.pull(
            "support-chats", tmp_path / "train.jsonl", spec="openai-messages", status=["approved"]
        )
        pulled = list(ocm.pull_transcripts("support-chats", status=["approved"]))
    assert reviewed == 2 and len(new_ids) == 2
    rows = (tmp_path / "train.jsonl").read_text().splitlines()
    assert len(rows) == 2 and all(json.loads(row)["spec"] == "openai-messages" for row in rows)
    assert len(pulled) == 2 and not any(formats.has_errors(p.diagnostics) for p in pulled)
