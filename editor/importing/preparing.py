"""Parsing and checking an import's items, and making the rows they will be written as: here,
or in a process of its own while this one writes (a large import on two cores).

An import's time is a third parsing and checking, two thirds writing (docs/performance.md); in
one process the two take turns. ``prepared_in_order`` sends the items in chunks to a helper
process (``concurrent.futures.ProcessPoolExecutor`` of one, started once per process and kept:
``warm_up``), which reads (a JSONL line comes undecoded: ``Candidate.read``), parses, checks
and turns each into the plain rows ``create_transcripts`` writes (``StoredRows``: cheap to
send, where the parse's objects are not), and gets them back in order while the import goes
on reading and writing. At most ``IN_FLIGHT_CHUNKS`` chunks (and ``IN_FLIGHT_BYTES`` of
source text) are out at once, so memory stays bounded whatever the size of the source. A
helper that dies (killed, out of memory) is not the import's end: what it had not answered is
prepared here, and the next import starts a new one.

The helper is used for sources of ``OCM_IMPORT_HELPER_MIN_BYTES`` or more (starting it costs
about a second, unless ``warm_up`` did it before: the task worker does at its start), unless
``OCM_IMPORT_HELPER`` is off, or the dataset counts tokens (counted where the rows are
written, from the parse: it would be parsed twice). Being spawned, the helper imports the
main module of the process as ``multiprocessing`` does: a script of one's own that imports
large sources must keep its work under ``if __name__ == "__main__":`` (``manage.py``,
gunicorn and pytest do).
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from django.conf import settings

from editor import helper_process
from editor.errors import DomainError
from editor.importing.candidates import Candidate
from editor.importing.preference import paired
from editor.models import Status
from editor.storage.content import TITLE_LENGTH, TranscriptContent, check_storable
from editor.storage.create import NewTranscript

logger = logging.getLogger(__name__)

# Items sent to the helper at a time, and at most how much of their text.
CHUNK_ITEMS = 100
CHUNK_BYTES = 4 * 1024 * 1024
# Chunks out at once: enough to keep the helper busy while a batch (500 items) is written.
IN_FLIGHT_CHUNKS = 8
IN_FLIGHT_BYTES = 32 * 1024 * 1024
# The settings the preparation reads, sent with each chunk: the helper was set up from the
# settings module, and a deployment (or a test) may have changed them since.
SENT_SETTINGS = ("OCM_MAX_TRANSCRIPT_BYTES", "OCM_MAX_TRANSCRIPT_MESSAGES")


@dataclass
class Prepared:
    """What became of one item: the transcript to write, or why it failed."""

    external_id: str = ""  # the item's id, as read
    readable: bool = True  # False: not even read (its id is then not taken: ``Importer``)
    new: NewTranscript | None = None
    spec: str = ""
    error_count: int = 0
    warning_count: int = 0
    failure: tuple[str, str] | None = None  # (message, code)


def prepare(candidate: Candidate, keeps_status: bool) -> Prepared:
    """Read (``Candidate.read``), parse and check one item: the transcript to create from
    it, or why not."""
    candidate = candidate.read()
    if candidate.error:
        failure = (candidate.error, candidate.error_code)
        return Prepared(candidate.external_id, readable=False, failure=failure)
    try:
        content = TranscriptContent.from_text(candidate.text, candidate.spec)
    except DomainError as error:
        return Prepared(candidate.external_id, failure=(error.message, error.code))
    counts = {
        "external_id": candidate.external_id,
        "spec": content.spec,
        "error_count": content.error_count,
        "warning_count": content.warning_count,
    }
    if content.is_unreadable() and not candidate.empty:
        failure = (f"no message could be read: {content.first_error()}", "no-messages")
        return Prepared(failure=failure, **counts)
    new = paired(
        NewTranscript(
            content,
            title=candidate.title or default_title(content, candidate.fallback_title),
            metadata=candidate.metadata,
            external_id=candidate.external_id,
            status=(keeps_status and candidate.status) or Status.DRAFT,
        ),
        candidate.preference,
    )
    try:
        check_storable(content, title=new.title, metadata=new.metadata, external_id=new.external_id)
    except DomainError as error:
        return Prepared(failure=(error.message, error.code), **counts)
    return Prepared(new=new, **counts)


def default_title(content: TranscriptContent, fallback: str) -> str:
    """The header's title, else the file name, else the first line of the first user message."""
    header_title = content.canonical.header.get("title")
    if isinstance(header_title, str) and header_title.strip():
        return header_title.strip()[:TITLE_LENGTH]
    if fallback:
        return fallback[:TITLE_LENGTH]
    for message in content.canonical.messages:
        if message.role == "user" and message.content.strip():
            first_line = message.content.strip().splitlines()[0]
            return first_line if len(first_line) <= 80 else first_line[:79] + "…"
    return ""


def prepared_in_order(
    candidates: Iterable[Candidate], keeps_status: bool, *, helper: bool, spans: bool
) -> Iterator[tuple[Candidate, Prepared]]:
    """Each item with what became of it, in the order they came. ``helper``: in the helper
    process (``spans``: the rows it makes point into the source text, as ``StoredRows.of``
    says), else here, one by one."""
    if not helper:
        for candidate in candidates:
            yield candidate, prepare(candidate, keeps_status)
        return
    in_flight: deque[_Chunk] = deque()
    chunk = _Chunk()
    try:
        for candidate in candidates:
            chunk.add(candidate)
            if len(chunk.candidates) >= CHUNK_ITEMS or chunk.size >= CHUNK_BYTES:
                in_flight.append(chunk.sent(keeps_status, spans))
                chunk = _Chunk()
                while len(in_flight) > IN_FLIGHT_CHUNKS or (
                    len(in_flight) > 1 and sum(c.size for c in in_flight) > IN_FLIGHT_BYTES
                ):
                    yield from in_flight.popleft().results(keeps_status)
        in_flight.append(chunk.sent(keeps_status, spans))
        while in_flight:
            yield from in_flight.popleft().results(keeps_status)
    finally:
        for waiting in in_flight:  # the import stopped early: what is not started is dropped
            if waiting.future is not None:
                waiting.future.cancel()


class _Chunk:
    """Items sent to the helper together (those already known unreadable ride along, so
    that the results come back in order)."""

    def __init__(self):
        self.candidates: list[Candidate] = []
        self.size = 0
        self.pool: ProcessPoolExecutor | None = None
        self.future: Future | None = None

    def add(self, candidate: Candidate) -> None:
        self.candidates.append(candidate)
        self.size += candidate.size

    @property
    def readable(self) -> list[Candidate]:
        return [candidate for candidate in self.candidates if not candidate.error]

    def sent(self, keeps_status: bool, spans: bool) -> _Chunk:
        readable = self.readable
        if readable:
            limits = {name: getattr(settings, name) for name in SENT_SETTINGS}
            self.pool = _helper()
            try:
                self.future = self.pool.submit(
                    _prepare_chunk, readable, keeps_status, spans, limits
                )
            except (BrokenProcessPool, RuntimeError):  # dead, or let go meanwhile
                _forget_helper(self.pool)  # prepared here instead (``_answers``)
        return self

    def results(self, keeps_status: bool) -> Iterator[tuple[Candidate, Prepared]]:
        answers = iter(self._answers(keeps_status))
        for candidate in self.candidates:
            if candidate.error:
                yield candidate, prepare(candidate, keeps_status)
            else:
                yield candidate, next(answers)

    def _answers(self, keeps_status: bool) -> list[Prepared]:
        if self.future is not None:
            try:
                return self.future.result()
            except BrokenProcessPool:
                _forget_helper(self.pool)
            except CancelledError:  # the helper was let go (``stop``) before it started this
                pass
        return [prepare(candidate, keeps_status) for candidate in self.readable]


def _prepare_chunk(
    candidates: list[Candidate], keeps_status: bool, spans: bool, limits: dict
) -> list[Prepared]:
    """In the helper: each candidate prepared, its transcript sent as rows, not as its parse."""
    for name, value in limits.items():
        setattr(settings, name, value)
    answers = []
    for candidate in candidates:
        prepared = prepare(candidate, keeps_status)
        if prepared.new is not None:
            prepared.new.rows(spans)
            prepared.new.content = None
        answers.append(prepared)
    return answers


_helper_lock = threading.Lock()
_helper_pool: ProcessPoolExecutor | None = None


def _helper() -> ProcessPoolExecutor:
    global _helper_pool
    with _helper_lock:
        if _helper_pool is None:
            # Spawned, not forked: the task worker runs threads (its heartbeats), which a fork
            # copies mid-step.
            _helper_pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=helper_process.start,
            )
        return _helper_pool


def _forget_helper(pool: ProcessPoolExecutor) -> None:
    """The helper of ``pool`` died: what it had not answered is prepared here, and the next
    chunk starts a new one (unless another chunk's failure did already: the new one stays)."""
    global _helper_pool
    with _helper_lock:
        if _helper_pool is not pool:
            return
        _helper_pool = None
    logger.warning("The import helper process died; its items are prepared here")
    pool.shutdown(wait=True, cancel_futures=True)


def stop() -> None:
    """Let the helper go (the task worker does when it stops); the next import that wants one
    starts it again."""
    global _helper_pool
    with _helper_lock:
        pool, _helper_pool = _helper_pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def warm_up() -> None:
    """Start the helper now (it takes about a second), so that the first large import does
    not wait for it: the task worker calls this at its start."""
    if settings.OCM_IMPORT_HELPER:
        _helper().submit(int)


def helps(bytes_total: int | None, counts_tokens: bool) -> bool:
    """Whether an import of ``bytes_total`` bytes (None: unknown) prepares its items in the
    helper."""
    return (
        settings.OCM_IMPORT_HELPER
        and not counts_tokens
        and bytes_total is not None
        and bytes_total >= settings.OCM_IMPORT_HELPER_MIN_BYTES
    )
