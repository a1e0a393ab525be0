"""``Client``: the OCM workbench's HTTP API (docs/api.md) for pipelines, in one call per job.

Built on httpx; needs no Django (only ``editor.formats``, to read pulled transcripts into
canonical objects). docs/client.md shows a pipeline end to end.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, Any, TypeVar
from urllib.parse import quote

import httpx

from editor import formats
from editor.formats import jsonl

from .errors import ApiError, ImportFailed, TaskFailed, VersionsUnavailable
from .polling import PollSchedule
from .progress import ProgressBar
from .results import (
    Annotation,
    Assignment,
    BulkResult,
    BulkTask,
    Dataset,
    DatasetVersion,
    ImportTask,
    LabelSchema,
    PulledTranscript,
    PullSummary,
    Queue,
    Result,
    Transcript,
    TranscriptSummary,
)

API_PATH = "/api/v1"
PAGE_SIZE = 200  # the API's largest page (api/pagination.py)
RETRIED_STATUSES = (429, 503)  # too many requests; the database unavailable (nothing changed)
CHUNK_BYTES = 1 << 16
# The route a server with dataset versions has (docs/api.md); its absence from the OpenAPI
# schema tells "no versions here" apart from "no such version".
VERSION_EXPORT_ROUTE = re.compile(r"/datasets/\{[^}/]+\}/versions/\{[^}/]+\}/export$")

R = TypeVar("R", bound=Result)
Transcripts = Iterable[formats.Transcript | str | Mapping[str, Any]]


def _segment(value: str | int) -> str:
    return quote(str(value), safe="")


def _query(params: Mapping[str, Any]) -> dict[str, Any]:
    """Query parameters as the API reads them: booleans as true/false, absent ones dropped."""
    query = {}
    for key, value in params.items():
        if value is None or (isinstance(value, list | tuple) and not value):
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        query[key] = list(value) if isinstance(value, list | tuple) else value
    return query


def _api_error(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return ApiError(
            response.status_code, body["code"], str(body.get("message", "")), body.get("details")
        )
    reason = response.reason_phrase or "error"
    return ApiError(response.status_code, f"http-{response.status_code}", reason)


def _envelope(item: formats.Transcript | str | Mapping[str, Any]) -> dict[str, Any]:
    """One line of an import: a canonical transcript in its own spec, a text (its spec
    detected), or an envelope as docs/storage.md describes it."""
    if isinstance(item, formats.Transcript):
        return {"spec": item.spec, "text": formats.serialize(item)}
    if isinstance(item, str):
        return {"text": item}
    return dict(item)


class Client:
    """The API of the server at ``url`` (``OCM_URL`` when omitted), as the user whose
    ``token`` it is (``OCM_TOKEN`` when omitted; ``manage.py api_token USERNAME`` makes one).

    Requests answered 429 or 503 are sent again up to ``retries`` times, after the
    ``Retry-After`` the server asked for, else after a back-off doubling from
    ``backoff`` seconds up to ``max_backoff``. A refusal raises ``ApiError`` with the API's
    ``code``.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        timeout: float = 300.0,
        transport: httpx.BaseTransport | None = None,
    ):
        url = url or os.environ.get("OCM_URL")
        token = token or os.environ.get("OCM_TOKEN")
        if not url:
            raise ValueError("No server URL: pass one or set OCM_URL.")
        if not token:
            raise ValueError("No API token: pass one or set OCM_TOKEN.")
        base = url.rstrip("/")
        self.url = base if base.endswith(API_PATH) else base + API_PATH
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=transport,
        )
        self._has_versions: bool | None = None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # The transport: retries, errors, pages.

    def _retry_delay(self, response: httpx.Response, attempt: int) -> float:
        after = response.headers.get("Retry-After", "").strip()
        if after.isdigit():
            return float(after)
        if after:
            try:
                when = parsedate_to_datetime(after)
            except (TypeError, ValueError):
                pass
            else:
                when = when if when.tzinfo else when.replace(tzinfo=UTC)  # "-0000": UTC
                return max(0.0, (when - datetime.now(UTC)).total_seconds())
        return min(self.backoff * 2**attempt, self.max_backoff)

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        data: Mapping[str, Any] | None = None,
        files: Mapping[str, tuple[str, IO[bytes]]] | None = None,
        stream: bool = False,
    ) -> httpx.Response:
        """The answer to one request, sent again while the server answers 429 or 503;
        ``ApiError`` for any other error status. A streamed answer must be closed."""
        starts = {key: upload.tell() for key, (_, upload) in (files or {}).items()}
        attempt = 0
        while True:
            for key, (_, upload) in (files or {}).items():
                upload.seek(starts[key])  # a retried upload is sent from its start again
            request = self._http.build_request(
                method,
                path,
                params=_query(params or {}),
                json=json_body,
                data=data,
                files=files,
            )
            response = self._http.send(request, stream=stream)
            if response.status_code in RETRIED_STATUSES and attempt < self.retries:
                delay = self._retry_delay(response, attempt)
                response.close()
                time.sleep(delay)
                attempt += 1
                continue
            if response.is_error:
                response.read()
                response.close()
                raise _api_error(response)
            return response

    def _json(self, method: str, path: str, **kwargs) -> Any:
        response = self._send(method, path, **kwargs)
        return response.json() if response.content else None

    def _one(self, result: type[R], method: str, path: str, **kwargs) -> R:
        return result.from_json(self._json(method, path, **kwargs))

    def _pages(
        self, result: type[R], path: str, params: Mapping[str, Any] | None = None
    ) -> Iterator[R]:
        """Every item of a list route, a page of ``PAGE_SIZE`` at a time."""
        offset = 0
        while True:
            page = self._json(
                "GET", path, params={**(params or {}), "limit": PAGE_SIZE, "offset": offset}
            )
            items = page["items"]
            yield from (result.from_json(item) for item in items)
            offset += len(items)
            if not items or offset >= page["count"]:
                return

    @staticmethod
    def _wait(poll, done, timeout: float | None, progress: ProgressBar | None = None):
        """Poll until ``done(state)``: every 0.2 s at first, then less often (up to 2 s), and
        around when the task should end once its progress tells (``PollSchedule``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        schedule = PollSchedule()
        while True:
            state = poll()
            if progress is not None:
                progress.update(*_progress_line(state))
            if done(state):
                return state
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"Still {state.status} after {timeout} s.")
            seconds_left = (getattr(state, "progress", None) or {}).get("seconds_left")
            time.sleep(schedule.after(_progress_line(state)[0], seconds_left))

    # Datasets and transcripts.

    def datasets(self) -> Iterator[Dataset]:
        return self._pages(Dataset, "/datasets")

    def dataset(self, slug: str) -> Dataset:
        return self._one(Dataset, "GET", f"/datasets/{_segment(slug)}")

    def create_dataset(
        self, slug: str, name: str, *, description: str = "", default_spec: str | None = None
    ) -> Dataset:
        body = {"slug": slug, "name": name, "description": description}
        if default_spec is not None:
            body["default_spec"] = default_spec
        return self._one(Dataset, "POST", "/datasets", json_body=body)

    def transcripts(self, dataset: str, **filters: Any) -> Iterator[TranscriptSummary]:
        """The dataset's transcripts, every page; ``filters`` are the list's (docs/api.md):
        ``status=["draft"]``, ``has_errors=True``, ``q="refund"``, ``sort="-updated"``…"""
        return self._pages(TranscriptSummary, f"/datasets/{_segment(dataset)}/transcripts", filters)

    def transcript(self, transcript_id: int) -> Transcript:
        return self._one(Transcript, "GET", f"/transcripts/{transcript_id}")

    def create_transcript(
        self,
        dataset: str,
        transcript: formats.Transcript | str,
        *,
        spec: str | None = None,
        title: str | None = None,
        external_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        note: str | None = None,
    ) -> Transcript:
        """Store one transcript: a text (in ``spec``, detected when omitted) or a canonical
        transcript (stored in its own spec)."""
        if isinstance(transcript, formats.Transcript):
            body: dict[str, Any] = {"text": formats.serialize(transcript), "spec": transcript.spec}
        else:
            body = {"text": transcript, "spec": spec}
        extra = {"title": title, "external_id": external_id, "metadata": metadata, "note": note}
        body.update({key: value for key, value in extra.items() if value is not None})
        path = f"/datasets/{_segment(dataset)}/transcripts"
        return self._one(Transcript, "POST", path, json_body=body)

    # Imports.

    def push(
        self,
        dataset: str,
        source: str | os.PathLike | IO[bytes] | Transcripts,
        *,
        spec: str | None = None,
        on_conflict: str = "update",
        partial: bool = False,
        shape: str | None = None,
        name: str | None = None,
        wait: bool = True,
        timeout: float | None = None,
        progress: bool | None = None,
    ) -> ImportTask:
        """Import ``source`` into ``dataset`` and wait for the import's report.

        ``source`` is a file's path, a binary file, or transcripts (canonical ones, texts, or
        import envelopes as dicts), sent as one JSONL file. Answers the finished import;
        raises ``ImportFailed`` (with the first failed item's ``code``) when it failed. With
        ``wait=False``, answers the import as queued. ``progress``: a progress bar on
        standard error (by default when it is a terminal). ``shape``: how rows are read
        (``preference``, ``hh``, ``transcripts``; None: rows with chosen and rejected are pairs).
        """
        with _upload(source, name) as (file_name, upload):
            task = self._one(
                ImportTask,
                "POST",
                f"/datasets/{_segment(dataset)}/imports",
                data=_query(
                    {"spec": spec, "on_conflict": on_conflict, "partial": partial, "shape": shape}
                ),
                files={"file": (file_name, upload)},
            )
        if not wait:
            return task
        return self.wait_for_import(task.id, timeout=timeout, progress=progress)

    def import_task(self, import_id: int) -> ImportTask:
        return self._one(ImportTask, "GET", f"/imports/{import_id}")

    def wait_for_import(
        self, import_id: int, *, timeout: float | None = None, progress: bool | None = None
    ) -> ImportTask:
        """The import once finished; ``ImportFailed`` when it failed."""
        bar = ProgressBar(f"import {import_id}", enabled=progress)
        try:
            task = self._wait(
                lambda: self.import_task(import_id), lambda t: t.finished, timeout, bar
            )
        finally:
            bar.close()
        if task.status == "failed":
            raise ImportFailed(task)
        return task

    # Exports: a dataset, or one of its versions, in any spec.

    def pull(
        self,
        dataset: str,
        to: str | os.PathLike | IO[bytes],
        *,
        spec: str | None = None,
        version: str | None = None,
        status: Iterable[str] = (),
        format: str = "jsonl",
        audience: str | None = None,
        summary: bool = False,
        with_suggestions: bool = False,
    ) -> PullSummary:
        """Stream the dataset's export (NDJSON, one transcript a line, each in ``spec``, else
        its own) to the file ``to`` (a path, or a binary file) as it arrives: constant memory
        whatever the size. ``version`` pulls that version of the dataset. ``with_suggestions``
        adds each line's judge suggestions (``suggestions``, marked ``"source": "model"``);
        without it, none."""
        response = self._export(
            dataset, spec, version, status, format, audience, summary, with_suggestions
        )
        lines = size = 0
        with closing(response), _binary_output(to) as (path, out):
            for chunk in response.iter_bytes(CHUNK_BYTES):
                out.write(chunk)
                lines += chunk.count(b"\n")
                size += len(chunk)
        return PullSummary(path=path, lines=lines, bytes=size)

    def pull_transcripts(
        self,
        dataset: str,
        *,
        spec: str | None = None,
        version: str | None = None,
        status: Iterable[str] = (),
        audience: str | None = None,
    ) -> Iterator[PulledTranscript]:
        """The dataset's transcripts (in ``spec``, else each in its own) as canonical objects,
        read one line at a time from the streamed export: constant memory."""
        response = self._export(dataset, spec, version, status, "jsonl", audience, False)
        with closing(response):
            for number, line in enumerate(response.iter_lines(), start=1):
                if line:
                    yield _pulled(number, line)

    def _export(
        self, dataset, spec, version, status, format, audience, summary, with_suggestions=False
    ) -> httpx.Response:
        params = {
            "spec": spec,
            "format": format,
            "status": list(status),
            "audience": audience,
            "summary": summary or None,
            "with_suggestions": True if with_suggestions else None,
        }
        if version is None:
            path = f"/datasets/{_segment(dataset)}/export"
        else:
            if list(status) or audience is not None or summary or with_suggestions:
                # A version is exported whole, everything in it: the same bytes every time.
                raise ValueError(
                    "A version is pulled whole: no status, audience, summary or suggestions."
                )
            params = {"spec": spec, "format": format}
            path = f"/datasets/{_segment(dataset)}/versions/{_segment(version)}/export"
        try:
            return self._send("GET", path, params=params, stream=True)
        except ApiError as error:
            if version is not None and error.status == 404 and not self.has_versions():
                raise VersionsUnavailable() from None
            raise

    def has_versions(self) -> bool:
        """Whether the server keeps dataset versions (its API schema has their export)."""
        if self._has_versions is None:
            paths = self._json("GET", "/openapi.json").get("paths", {})
            self._has_versions = any(VERSION_EXPORT_ROUTE.search(path) for path in paths)
        return self._has_versions

    # Dataset versions.

    def versions(self, dataset: str) -> Iterator[DatasetVersion]:
        """The dataset's versions, newest first (without their members)."""
        return self._pages(DatasetVersion, f"/datasets/{_segment(dataset)}/versions")

    def version(self, dataset: str, name: str) -> DatasetVersion:
        """One version, with its members."""
        path = f"/datasets/{_segment(dataset)}/versions/{_segment(name)}"
        return self._one(DatasetVersion, "GET", path)

    def create_version(
        self,
        dataset: str,
        name: str,
        *,
        filters: Mapping[str, Any] | None = None,
        description: str = "",
    ) -> DatasetVersion:
        """Freeze the dataset (or the transcripts ``filters`` select: the transcript list's
        parameters, ``{"status": ["approved"]}``) as version ``name`` (curators)."""
        body = {"name": name, "description": description, "filters": dict(filters or {})}
        path = f"/datasets/{_segment(dataset)}/versions"
        return self._one(DatasetVersion, "POST", path, json_body=body)

    def diff_versions(self, dataset: str, name: str, other: str) -> dict[str, Any]:
        """``{from_name, to_name, added, removed, changed: [{id, from_version, to_version,
        history_url…}], unchanged}`` from version ``name`` to ``other``."""
        path = f"/datasets/{_segment(dataset)}/versions/{_segment(name)}/diff/{_segment(other)}"
        return self._json("GET", path)

    # Labels.

    def label_schemas(self, dataset: str, *, archived: bool = False) -> Iterator[LabelSchema]:
        path = f"/datasets/{_segment(dataset)}/label-schemas"
        return self._pages(LabelSchema, path, {"archived": archived})

    def label_schema(self, schema_id: int) -> LabelSchema:
        return self._one(LabelSchema, "GET", f"/label-schemas/{schema_id}")

    def create_label_schema(
        self, dataset: str, name: str, questions: list[dict[str, Any]], *, instructions: str = ""
    ) -> LabelSchema:
        body = {"name": name, "instructions": instructions, "questions": questions}
        path = f"/datasets/{_segment(dataset)}/label-schemas"
        return self._one(LabelSchema, "POST", path, json_body=body)

    def annotations(self, transcript_id: int, **filters: Any) -> Iterator[Annotation]:
        """A transcript's answers; ``filters``: ``label_schema``, ``question``, ``annotator``,
        ``state``, ``anchor_state``, ``message_index``."""
        return self._pages(Annotation, f"/transcripts/{transcript_id}/annotations", filters)

    def annotate(
        self,
        transcript_id: int,
        label_schema: int,
        question: str,
        value: Any,
        *,
        message_index: int | None = None,
        start: int | None = None,
        end: int | None = None,
        submit: bool = False,
    ) -> Annotation:
        """Answer ``question`` about the transcript, one of its messages, or a span of one (a
        draft; ``submit=True`` submits it too)."""
        body = {"label_schema": label_schema, "question": question, "value": value}
        places = {"message_index": message_index, "start": start, "end": end}
        body.update({key: place for key, place in places.items() if place is not None})
        path = f"/transcripts/{transcript_id}/annotations"
        annotation = self._one(Annotation, "POST", path, json_body=body)
        return self.submit_annotation(annotation.id) if submit else annotation

    def annotation(self, annotation_id: int) -> Annotation:
        return self._one(Annotation, "GET", f"/annotations/{annotation_id}")

    def update_annotation(
        self, annotation_id: int, value: Any, *, start: int | None = None, end: int | None = None
    ) -> Annotation:
        body = {"value": value}
        if start is not None:
            body.update(start=start, end=end)
        return self._one(Annotation, "PUT", f"/annotations/{annotation_id}", json_body=body)

    def submit_annotation(self, annotation_id: int) -> Annotation:
        return self._one(Annotation, "POST", f"/annotations/{annotation_id}/submit")

    def delete_annotation(self, annotation_id: int) -> None:
        self._send("DELETE", f"/annotations/{annotation_id}")

    # Review queues.

    def queues(self, dataset: str) -> Iterator[Queue]:
        return self._pages(Queue, f"/datasets/{_segment(dataset)}/queues")

    def queue(self, queue_id: int) -> Queue:
        return self._one(Queue, "GET", f"/queues/{queue_id}")

    def create_queue(self, dataset: str, name: str, **options: Any) -> Queue:
        """A queue over the dataset's transcripts; ``options``: ``instructions``,
        ``overlap``, ``reservation_minutes``, ``assignees``, ``filters``, ``schemas``."""
        path = f"/datasets/{_segment(dataset)}/queues"
        return self._one(Queue, "POST", path, json_body={"name": name, **options})

    def claim(self, queue_id: int) -> Assignment | None:
        """The item you hold in the queue, else the next free one; None when none is left."""
        response = self._send("POST", f"/queues/{queue_id}/claim")
        return Assignment.from_json(response.json()) if response.status_code == 200 else None

    def assignments(self, queue_id: int, *, state: str | None = None) -> Iterator[Assignment]:
        return self._pages(Assignment, f"/queues/{queue_id}/assignments", {"state": state})

    def submit_assignment(self, assignment_id: int) -> Assignment:
        return self._one(Assignment, "POST", f"/assignments/{assignment_id}/submit")

    def skip_assignment(self, assignment_id: int) -> Assignment:
        return self._one(Assignment, "POST", f"/assignments/{assignment_id}/skip")

    def review_assignment(self, assignment_id: int, decision: str, comment: str = "") -> Assignment:
        body = {"decision": decision, "comment": comment}
        return self._one(Assignment, "POST", f"/assignments/{assignment_id}/review", json_body=body)

    # Bulk actions.

    def bulk(
        self,
        dataset: str,
        action: str,
        *,
        ids: Iterable[int] | None = None,
        filter: Mapping[str, str | list[str]] | None = None,
        wait: bool = True,
        timeout: float | None = None,
        **params: Any,
    ) -> BulkResult:
        """Act on the transcripts ``ids`` or on every one ``filter`` matches (docs/api.md,
        "Bulk actions"); ``params``: ``transition``, ``status``, ``queue``, ``note``, export
        options. A selection acted on in the background is waited for (``TaskFailed`` if it
        fails) unless ``wait=False``; an ``export`` answers its export task's id in ``task``."""
        body = {"action": action, **params}
        if ids is not None:
            body["ids"] = list(ids)
        if filter is not None:
            body["filter"] = dict(filter)
        result = self._one(
            BulkResult, "POST", f"/datasets/{_segment(dataset)}/bulk", json_body=body
        )
        if not (wait and result.task and result.task.get("kind") == "bulk"):
            return result
        task = self._wait(lambda: self.bulk_task(result.task["id"]), lambda t: t.finished, timeout)
        if task.status == "failed":
            raise TaskFailed(task)
        return BulkResult.from_json({**task.result, "task": result.task})

    def bulk_task(self, task_id: int) -> BulkTask:
        return self._one(BulkTask, "GET", f"/bulk/{task_id}")


def _progress_line(task: Any) -> tuple[float | None, str]:
    progress = getattr(task, "progress", None) or {}
    detail = task.status
    if "items" in progress:
        detail = f"{task.status}, {progress['items']:,} items"
    elif "done" in progress:
        detail = f"{task.status}, {progress['done']:,}/{progress.get('total', '?')}"
    percent = progress.get("percent")
    return (100.0 if task.status == "succeeded" else percent), detail


def _pulled(number: int, line: str) -> PulledTranscript:
    record = jsonl.read_record(number, jsonl.record_line(line.encode()), None)
    if record.problem is not None:
        raise ApiError(None, record.reason or "invalid-line", record.problem.message)
    envelope = json.loads(line)
    parsed = formats.parse(record.text, spec=record.spec)
    return PulledTranscript(
        id=envelope.get("id"),
        title=record.title,
        spec=parsed.transcript.spec,
        status=record.status,
        metadata=record.metadata,
        transcript=parsed.transcript,
        diagnostics=list(parsed.diagnostics),
    )


class _upload:
    """The file to upload as ``(name, binary file)``: a path opened, a file as given, or
    transcripts written as JSONL to a temporary file (spilled to disk past 8 MiB)."""

    def __init__(self, source, name: str | None):
        self.source = source
        self.name = name
        self.opened: IO[bytes] | None = None

    def __enter__(self) -> tuple[str, IO[bytes]]:
        source = self.source
        if isinstance(source, str | os.PathLike):
            self.opened = open(source, "rb")
            return self.name or Path(source).name, self.opened
        if hasattr(source, "read"):
            return self.name or Path(getattr(source, "name", "upload")).name, source
        self.opened = tempfile.SpooledTemporaryFile(max_size=8 << 20)
        for item in source:
            self.opened.write(json.dumps(_envelope(item), ensure_ascii=False).encode() + b"\n")
        self.opened.seek(0)
        return self.name or "transcripts.jsonl", self.opened

    def __exit__(self, *exc_info) -> None:
        if self.opened is not None:
            self.opened.close()


class _binary_output:
    """Where a pull writes: a path (opened, and closed after) or a binary file as given."""

    def __init__(self, to):
        self.to = to
        self.opened: IO[bytes] | None = None

    def __enter__(self) -> tuple[str, IO[bytes]]:
        if isinstance(self.to, str | os.PathLike):
            self.opened = open(self.to, "wb")
            return str(self.to), self.opened
        return getattr(self.to, "name", "<stream>"), self.to

    def __exit__(self, *exc_info) -> None:
        if self.opened is not None:
            self.opened.close()
