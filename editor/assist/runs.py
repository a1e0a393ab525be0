"""Judge runs: a judge asked about every transcript of a selection, on a task worker.

A run's targets are fixed when it starts (``transcript_ids``, from the dataset list's filters
as ``TranscriptList`` reads them). ``run_judge_run`` asks about each target that has no
suggestion from the run yet — so a resumed run (or one a dead worker's recovery runs again)
asks only what is left, and every target gets exactly one suggestion (the unique constraints
of ``Suggestion``). A suggestion is one INSERT: written whole or not at all.

Requests: at most ``connection.max_concurrency`` at once (that many worker threads), started
no faster than ``connection.requests_per_minute``; a 429, a 5xx, a timeout or a refused
connection is tried again after an exponential back-off (or the server's Retry-After), at
most ``MAX_ATTEMPTS`` times; then the item is a failure of the run (``failures``). When
``DEAD_AFTER`` items in a row found the server unreachable, the run stops: the items not yet
asked are left for a resume, and the run fails saying so. A cancel (``cancel_requested_at``)
is seen between items: the requests in flight finish, nothing more is asked.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import random
import threading
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection
from django.db.models import Count, Q, Sum

from editor import background
from editor.assist.judges import about_messages, ask, messages_in_scope
from editor.errors import (
    ModelCallFailed,
    UnreadableAnswer,
)
from editor.labels import definition_of
from editor.models import (
    Dataset,
    JudgeRun,
    Message,
    ModelRequest,
    Suggestion,
    TaskStatus,
    Transcript,
)

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 4
MAX_WAIT_SECONDS = 60  # the longest Retry-After honoured; a longer one fails the item
DEAD_AFTER = 3
MAX_TARGETS = 100_000
MAX_FAILURES_KEPT = 500
CANCELLED = "Cancelled"


def backoff_seconds() -> float:
    """The first back-off; each next attempt waits twice as long (tests make it small)."""
    return float(getattr(settings, "OCM_JUDGE_BACKOFF_SECONDS", 1.0))


def remaining(run: JudgeRun) -> list[int]:
    """The run's transcripts not fully answered by it, in order: without its suggestion, or,
    for a question about each message, with fewer suggestions from it than messages in the
    question's scope."""
    question = definition_of(run.schema_version).question(run.judge.question)
    if question is not None and about_messages(question):
        return _messages_remaining(run, question)
    done = set(Suggestion.objects.filter(run=run).values_list("transcript_id", flat=True))
    return [pk for pk in run.transcript_ids if pk not in done]


def _messages_remaining(run: JudgeRun, question) -> list[int]:
    """Two grouped queries: the messages in scope per transcript (the stored message rows'
    roles and channels, as ``Question.applies_to_message`` reads them), and the run's
    suggestions per transcript."""
    in_scope = Message.objects.filter(transcript__dataset_id=run.dataset_id)
    if question.roles:
        in_scope = in_scope.filter(role__in=question.roles)
    if question.channels:
        in_scope = in_scope.filter(channel__in=question.channels)
    expected = dict(
        in_scope.values("transcript_id").annotate(n=Count("pk")).values_list("transcript_id", "n")
    )
    answered = dict(
        Suggestion.objects.filter(run=run)
        .values("transcript_id")
        .annotate(n=Count("pk"))
        .values_list("transcript_id", "n")
    )
    return [pk for pk in run.transcript_ids if answered.get(pk, 0) < expected.get(pk, 0)]


# --- running --------------------------------------------------------------------------------


# SQLite takes one writer at a time anyway; its shared-cache in-memory database (the tests')
# fails a statement that meets another thread's lock at once instead of waiting. The run's
# threads therefore pass their statements one at a time there (each is its own transaction:
# autocommit). PostgreSQL runs them side by side.
STATEMENTS = threading.RLock()


def _one_at_a_time(execute, sql, params, many, context):
    for wait in (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, None):
        with STATEMENTS:
            try:
                return execute(sql, params, many, context)
            except OperationalError as error:
                # Another connection of the process (a request, a read still open) holds the
                # table: waited out as a file database's busy timeout would, outside a
                # transaction only (inside one, the statement's transaction must fail whole).
                if wait is None or "locked" not in str(error) or connection.in_atomic_block:
                    raise
        time.sleep(wait)


def serialized_on_sqlite():
    """This thread's statements one at a time with the run's other threads, on SQLite."""
    if connection.vendor == "sqlite":
        return connection.execute_wrapper(_one_at_a_time)
    return contextlib.nullcontext()


class _Heartbeat(background.Heartbeat):
    def beat(self) -> None:
        with serialized_on_sqlite():  # its own thread: one statement at a time there too
            super().beat()


class Pace:
    """Request starts spaced so that at most ``per_minute`` start in any minute."""

    def __init__(self, per_minute: int | None):
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.lock = threading.Lock()
        self.next_at = 0.0

    def wait(self, stop: threading.Event) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            at = max(now, self.next_at)
            self.next_at = at + self.interval
        if at > now:
            stop.wait(at - now)


@dataclass
class Tally:
    """What the workers have done, shared under ``lock``."""

    done: int
    total: int
    failures: list = field(default_factory=list)
    unreachable_in_a_row: int = 0
    dead: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def progress(self) -> dict:
        with self.lock:
            return {"done": self.done, "total": self.total, "failed": len(self.failures)}


def run_judge_run(run_pk: int) -> JudgeRun | None:
    """Run a queued judge run on this worker; None if it was not queued (any more)."""
    if not background.claim(JudgeRun, run_pk):
        return None
    run = JudgeRun.objects.select_related(
        "judge__connection__dataset", "judge__schema__dataset", "schema_version", "dataset"
    ).get(pk=run_pk)
    judge = run.judge
    question = definition_of(run.schema_version).question(judge.question)
    todo = remaining(run)
    total = len(run.transcript_ids)
    tally = Tally(done=total - len(todo), total=total)
    if question is None:  # a judge outlives a question only if the schema changed under it
        background.finish(
            JudgeRun,
            run_pk,
            TaskStatus.FAILED,
            error=f"The schema version has no question {judge.question!r} any more.",
        )
        return JudgeRun.objects.get(pk=run_pk)
    stop = threading.Event()
    work: queue.Queue = queue.Queue()
    for pk in todo:
        work.put(pk)
    pace = Pace(judge.connection.requests_per_minute)
    threads = [
        threading.Thread(
            target=_worker,
            args=(run, question, work, stop, pace, tally),
            name=f"judge-run-{run_pk}-{n}",
            daemon=True,
        )
        for n in range(max(1, min(judge.connection.max_concurrency, len(todo) or 1)))
    ]
    cancelled = False
    with serialized_on_sqlite(), _Heartbeat(JudgeRun, run_pk) as heartbeat:
        for thread in threads:
            thread.start()
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.2)
            heartbeat.progress = tally.progress()
            if not cancelled and _cancel_requested(run_pk):
                cancelled = True
                stop.set()
        heartbeat.progress = tally.progress()
    not_asked = len(remaining(run)) - len(tally.failures)
    return _finish(run_pk, tally, cancelled or _cancel_requested(run_pk), not_asked)


def _cancel_requested(run_pk: int) -> bool:
    return JudgeRun.objects.filter(pk=run_pk, cancel_requested_at__isnull=False).exists()


def _finish(run_pk: int, tally: Tally, cancelled: bool, not_asked: int) -> JudgeRun:
    failures = tally.failures[:MAX_FAILURES_KEPT]
    if cancelled:
        status = TaskStatus.FAILED
        error = f"{CANCELLED}: {not_asked} transcript(s) not asked; resume to ask them."
    elif tally.dead:
        status = TaskStatus.FAILED
        error = (
            f"The model server stopped answering ({tally.dead}): {not_asked} transcript(s) "
            "not asked. Resume the run once it answers again."
        )
    else:
        status, error = TaskStatus.SUCCEEDED, ""
    background.finish(
        JudgeRun,
        run_pk,
        status,
        error=error,
        failures=failures,
        progress={**tally.progress(), "not_asked": not_asked, "cancelled": cancelled},
    )
    return JudgeRun.objects.get(pk=run_pk)


def _worker(run, question, work: queue.Queue, stop: threading.Event, pace: Pace, tally: Tally):
    """Take targets until none is left or the run stops; its own database connection,
    closed at the end."""
    try:
        with serialized_on_sqlite():
            while not stop.is_set():
                try:
                    pk = work.get_nowait()
                except queue.Empty:
                    return
                try:
                    _one(run, question, pk, stop, pace, tally)
                except Exception as error:  # a database failure, say: this item fails, reported
                    logger.exception("Judge run %s: transcript %s failed", run.pk, pk)
                    _failed(tally, stop, pk, f"{type(error).__name__}: {error}", 0)
    finally:
        connection.close()


@dataclass
class _Failure:
    error: str
    attempts: int
    unreachable: bool = False


def _one(run, question, pk: int, stop: threading.Event, pace: Pace, tally: Tally) -> None:
    """Ask about one transcript: once, or once per message in the question's scope that has
    no suggestion from the run yet. A transcript is done when every ask succeeded; the first
    failure of its messages is its failure (the others are still asked)."""
    transcript = Transcript.objects.filter(pk=pk, dataset_id=run.dataset_id).first()
    if transcript is None:
        _failed(tally, stop, pk, "The transcript is gone (deleted since the run started).", 0)
        return
    canonical = transcript.canonical()
    targets: list[int | None] = [None]
    if about_messages(question):
        answered = set(
            Suggestion.objects.filter(run=run, transcript=transcript).values_list(
                "message_index", flat=True
            )
        )
        targets = [i for i in messages_in_scope(question, canonical) if i not in answered]
    failure = None
    constrained = True  # until the server refuses a constrained answer: then not again
    for message_index in targets:
        outcome = _ask(run, question, transcript, canonical, message_index, stop, pace, constrained)
        if outcome is None:
            return  # the run stopped: left unasked, a resume asks it
        if isinstance(outcome, _Failure):
            if message_index is not None:
                outcome.error = f"Message #{message_index}: {outcome.error}"
            failure = failure or outcome
            if outcome.unreachable:
                break  # the server is not answering: its other messages wait for a resume
            continue
        constrained = not outcome.refused_response_format
        _record(run, question, transcript, outcome, message_index)
    if failure is not None:
        _failed(tally, stop, pk, failure.error, failure.attempts, failure.unreachable)
        return
    with tally.lock:
        tally.done += 1
        tally.unreachable_in_a_row = 0


def _ask(run, question, transcript, canonical, message_index, stop, pace, constrained):
    """One target asked, with retries: its ``Answer``, a ``_Failure``, or None when the run
    stopped first."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        pace.wait(stop)
        if stop.is_set():
            return None
        try:
            return ask(
                run.judge,
                question,
                transcript,
                run=run,
                constrained=constrained,
                message_index=message_index,
                canonical=canonical,
            )
        except UnreadableAnswer as unreadable:
            return _Failure(unreadable.message, attempt)
        except ModelCallFailed as failure:
            if failure.details.get("status_code") == 400 and not constrained:
                return _Failure(failure.message, attempt)
            wait = _wait_before_retry(failure, attempt)
            if wait is None:
                unreachable = failure.details.get("status_code") is None
                return _Failure(failure.message, attempt, unreachable)
            if stop.wait(wait):
                return None
    return None  # pragma: no cover - the last attempt returns


def _wait_before_retry(failure: ModelCallFailed, attempt: int) -> float | None:
    """Seconds to wait before the next attempt; None when there is none (not retryable,
    attempts used up, or a Retry-After longer than we wait)."""
    if not failure.details.get("retryable") or attempt >= MAX_ATTEMPTS:
        return None
    retry_after = failure.details.get("retry_after")
    if retry_after is not None:
        return float(retry_after) if retry_after <= MAX_WAIT_SECONDS else None
    base = backoff_seconds() * 2 ** (attempt - 1)
    return base * (1 + random.random() / 4)  # jitter: retries of many items do not align


def _record(run, question, transcript, answer, message_index: int | None) -> None:
    with contextlib.suppress(IntegrityError):  # a recovered attempt of this run wrote it
        Suggestion.objects.create(
            transcript=transcript,
            schema_version=run.schema_version,
            question=question.key,
            message_index=message_index,
            value=answer.value,
            rationale=answer.rationale,
            run=run,
            model=answer.model,
        )


def _failed(
    tally: Tally,
    stop: threading.Event,
    pk: int,
    error: str,
    attempts: int,
    unreachable: bool = False,
) -> None:
    """Record a failed item; enough unreachable ones in a row stop the run."""
    with tally.lock:
        tally.failures.append({"transcript": pk, "error": error[:500], "attempts": attempts})
        if unreachable:
            tally.unreachable_in_a_row += 1
            if tally.unreachable_in_a_row >= DEAD_AFTER and not tally.dead:
                tally.dead = error[:300]
        else:
            tally.unreachable_in_a_row = 0
    if tally.dead:
        stop.set()


# --- figures --------------------------------------------------------------------------------


def tokens_of(rows) -> dict:
    figures = rows.aggregate(
        requests=Count("pk"),
        failed=Count("pk", filter=Q(ok=False)),
        tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"),
    )
    return {k: v or 0 for k, v in figures.items()}


def run_tokens(run: JudgeRun) -> dict:
    """Requests and tokens in/out of ``run`` (every attempt, as the client recorded them)."""
    return tokens_of(ModelRequest.objects.filter(run=run))


def dataset_tokens(dataset: Dataset) -> dict:
    """Requests and tokens in/out of every judge run of ``dataset``."""
    return tokens_of(ModelRequest.objects.filter(dataset=dataset, purpose="judge"))


def progress_of(run: JudgeRun) -> dict:
    """{"done", "total", "failed", "percent"}."""
    data = {"done": 0, "total": len(run.transcript_ids), "failed": 0}
    data.update(run.progress or {})
    data["percent"] = int(100 * data["done"] / data["total"]) if data["total"] else 100
    return data
