"""Datasets, their members, transcripts with their messages, and the revision history.

Single-object rules live on the models (``Dataset.role_of``, ``Transcript.canonical``),
collection rules on the QuerySets (``Transcript.objects.for_user``). Every change to a
transcript's content goes through ``editor.storage`` (compare-and-swap on ``version``, a
revision per change); nothing here writes a transcript on its own.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from itertools import islice
from typing import Any, NamedTuple

from django.conf import settings
from django.core.cache import cache
from django.db import connections, models, transaction
from django.db.models import (
    Exists,
    OuterRef,
    Prefetch,
    Q,
    Subquery,
)
from django.db.models.functions import Cast
from django.utils import timezone

from editor import formats
from editor.db import json_lookups  # noqa: F401 (registers the lookups the list filters use)
from editor.db.compact_json import CompactJSONEncoder, DiagnosticsField, OrderedJSONField
from editor.db.compressed import CompressedTextField
from editor.db.indexes import _where_set
from editor.db.rows import ModelColumns, model_columns
from editor.formats.validate.context import is_call
from editor.models.datasets import Dataset, Membership
from editor.models.fields import SPEC_CHOICES
from editor.models.messages import Message
from editor.models.states import AnnotationState, Status


class Contains(models.TextChoices):
    """Kinds of message a transcript list can be filtered on (``TranscriptFilter.contains``)."""

    TOOL_CALLS = "tool_calls", "tool calls"
    ANALYSIS = "analysis", "analysis"
    SYSTEM_PROMPT = "system_prompt", "a system prompt"


def _is_system_prompt(message: formats.Message) -> bool:
    # Instructions above the conversation in every spec: system, developer, MMS platform and
    # ChatML's `system:*` roles.
    return message.role in ("system", "developer", "platform") or message.role.startswith("system:")


# Each kind: the transcript column that says whether any of its messages is one, and the test
# of a message. editor.storage sets the columns with the messages it writes, so a filter reads
# one column instead of looking into every transcript's messages. Changing a test means a
# migration refilling its column for the stored transcripts, as 0019 filled them.
CONTAINS_COLUMNS = {
    Contains.TOOL_CALLS: ("has_tool_calls", is_call),
    Contains.ANALYSIS: ("has_analysis", lambda message: message.channel == "analysis"),
    Contains.SYSTEM_PROMPT: ("has_system_prompt", _is_system_prompt),
}


def contains_values(messages: Sequence[formats.Message]) -> dict[str, bool]:
    """The ``CONTAINS_COLUMNS`` values of a transcript of ``messages``."""
    return {
        column: any(test(message) for message in messages)
        for column, test in CONTAINS_COLUMNS.values()
    }


# ``?sort=`` keys of transcript lists (a leading "-" reverses) and the columns they order by;
# the pk breaks ties, so pages never overlap or skip rows.
TRANSCRIPT_SORTS = {
    "id": "pk",
    "updated": "updated_at",
    "title": "title",
    "messages": "message_count",
    "errors": "error_count",
    "tokens": "token_count",  # uncounted (null) transcripts last either way
}


@dataclass(frozen=True)
class TranscriptFilter:
    """What a transcript list is narrowed to: every field left empty matches everything."""

    statuses: Sequence[str] = ()
    spec: str | None = None
    has_errors: bool | None = None
    code: str | None = None  # a diagnostic code, e.g. E-STREAM-TRUNCATED
    contains: Sequence[str] = ()  # Contains values: all of them must be present
    updated_by: str | None = None  # the username of the last revision's author
    updated_since: datetime | date | None = None
    # (question key, value): someone submitted that answer about the transcript or a message
    # (a multi-choice answer: one that includes it; ``editor.labels.filters``)
    label: tuple[str, Any] | None = None
    text: str | None = None  # words searched in message content (``MessageQuerySet.containing``)
    # Whether ``text`` is also searched where the end user cannot see (the role may see
    # hidden content: ``Dataset.audiences_for``); otherwise only ``Message.end_user_text``.
    search_hidden: bool = False
    # More than this many tokens under the dataset's tokenizer (``token_count``; uncounted
    # transcripts never match): the list's "over N tokens".
    tokens_over: int | None = None
    # A person's submitted answer about the whole transcript differs from the judge's newest
    # suggestion for that question (editor.assist.versus): the list's "judge disagrees".
    judge_disagrees: bool = False


class TranscriptQuerySet(models.QuerySet):
    def for_user(self, user) -> TranscriptQuerySet:
        """Transcripts of the datasets ``user`` is a member of (all of them for a superuser)."""
        if not user.is_authenticated:
            return self.none()
        if user.is_superuser:
            return self
        return self.filter(dataset__memberships__user=user)

    def summaries(self) -> TranscriptQuerySet:
        """Only the columns a list shows: no source text, header, diagnostics or messages are
        read, so a page of a list costs the same however long its transcripts are."""
        return self.only(*Transcript.SUMMARY_FIELDS)

    def with_messages(self) -> TranscriptQuerySet:
        """Fetch the messages in one extra query, in order (what ``canonical()`` reads)."""
        return self.prefetch_related(
            Prefetch("messages", queryset=Message.objects.order_by("index"))
        )

    def iterator_with_canonical(
        self, chunk_size: int
    ) -> Iterator[tuple[Transcript, formats.Transcript]]:
        """``(row, canonical transcript)`` pairs in constant memory, for exports.

        Rows stream through ``iterator(chunk_size)`` (a server-side cursor on PostgreSQL); the
        messages of each chunk come in one query as plain tuples: no Message instances and
        no reference cycles left for the garbage collector, so memory stays flat. Their
        ``attrs`` are read as text, decoded only when not empty (as ``stored_messages``).
        """
        rows = self.iterator(chunk_size=chunk_size)
        try:
            while chunk := list(islice(rows, chunk_size)):
                sources = {row.pk: row for row in chunk}
                messages = defaultdict(list)
                for transcript_id, *values in (
                    Message.objects.filter(transcript__in=list(sources))
                    .order_by("transcript_id", "index")
                    .annotate(attrs_text=Cast("attrs", models.TextField()))
                    .values_list("transcript_id", *Message.STORED_COLUMNS, "attrs_text")
                ):
                    messages[transcript_id].append(
                        Message.canonical_of(values, sources[transcript_id], attrs_as_text=True)
                    )
                for row in chunk:
                    yield (
                        row,
                        formats.Transcript(
                            spec=row.spec,
                            header=row.header,
                            messages=messages.pop(row.pk, []),
                            attrs=row.attrs,
                        ),
                    )
        finally:
            rows.close()  # its server-side cursor, within this transaction

    def matching(self, wanted: TranscriptFilter) -> TranscriptQuerySet:
        """The transcripts that pass every condition of ``wanted`` (the dataset page and the
        API list both filter here)."""
        names = (wanted.code, wanted.updated_by, wanted.label and str(wanted.label[0]))
        if any(name and "\x00" in name for name in names):
            # No code, user or question has a NUL, and PostgreSQL refuses one in a query.
            return self.none()
        rows = self.with_status(*wanted.statuses)
        if wanted.spec:
            rows = rows.filter(spec=wanted.spec)
        if wanted.has_errors is not None:
            rows = rows.with_errors() if wanted.has_errors else rows.filter(error_count=0)
        if wanted.code:
            rows = rows.with_diagnostic(wanted.code)
        for kind in wanted.contains:
            rows = rows.filter(**{CONTAINS_COLUMNS[kind][0]: True})
        if wanted.updated_by:
            rows = rows.filter(updated_by__username=wanted.updated_by)
        if wanted.updated_since:
            rows = rows.filter(updated_at__gte=_aware(wanted.updated_since))
        if wanted.label is not None:
            question, value = wanted.label
            # The answers through their relation: Annotation's module imports this one.
            answers = self.model.annotations.rel.related_model.objects.filter(
                transcript=OuterRef("pk"),
                question=question,
                value__holds=value,
                state=AnnotationState.SUBMITTED,
            )
            rows = rows.filter(Exists(answers))
        if wanted.tokens_over is not None:
            rows = rows.filter(token_count__gt=wanted.tokens_over)
        if wanted.judge_disagrees:
            rows = rows.filter(Exists(self._answers_the_judge_differs_from()))
        if wanted.text:
            rows = rows.containing(wanted.text, wanted.search_hidden)
        return rows

    def _answers_the_judge_differs_from(self):
        """Submitted answers about the outer transcript unlike the newest suggestion for their
        question (through the relations: those models' modules import this one)."""
        annotations = self.model.annotations.rel.related_model.objects
        suggestions = self.model.suggestions.rel.related_model.objects
        newest = (
            suggestions.filter(
                transcript=OuterRef("transcript"),
                schema_version=OuterRef("schema_version"),
                question=OuterRef("question"),
                message_index__isnull=True,
            )
            .order_by("-created_at", "-pk")
            .values("pk")[:1]
        )
        unlike = suggestions.filter(pk=OuterRef("newest")).exclude(value=OuterRef("value"))
        return (
            annotations.filter(
                transcript=OuterRef("pk"),
                state=AnnotationState.SUBMITTED,
                message_index__isnull=True,
            )
            .annotate(newest=Subquery(newest))
            .filter(Exists(unlike))
        )

    def containing(self, text: str, search_hidden: bool) -> TranscriptQuerySet:
        """Transcripts with a message containing ``text`` (``MessageQuerySet.containing``),
        found from the whole set of matching messages: its cost grows with the matches, the
        same for a page and for everything (bulk actions, counts, exports)."""
        found = Message.objects.using(self.db).containing(text, search_hidden)
        return self.filter(pk__in=found.transcript_ids())

    def probed_for(self, text: str, search_hidden: bool) -> TranscriptQuerySet:
        """The same transcripts as ``containing``, found by looking into each transcript's
        own messages: cheap for the first page of a sorted list when most transcripts
        match (the walk stops at the page's end), ruinous when few do (every transcript is
        looked into). ``editor.listing.search.search_page`` chooses between the two."""
        messages = Message.objects.using(self.db).filter(transcript=OuterRef("pk"))
        return self.filter(Exists(messages.probed_for(text, search_hidden)))

    def with_diagnostic(self, code: str) -> TranscriptQuerySet:
        """Transcripts with a diagnostic of ``code`` in their stored ``diagnostics`` list."""
        return self.filter(diagnostics__has_item_with=("code", code))

    def sorted_by(self, sort: str) -> TranscriptQuerySet:
        """Order by a ``TRANSCRIPT_SORTS`` key, "-" first for descending, pk breaking ties."""
        descending = sort.startswith("-")
        column = TRANSCRIPT_SORTS[sort.removeprefix("-")]
        if column == "token_count":
            # Null (not counted) last both ways.
            counted = models.F(column)
            if descending:
                return self.order_by(counted.desc(nulls_last=True), "-pk")
            return self.order_by(counted.asc(nulls_last=True), "pk")
        if descending:
            return self.order_by(f"-{column}", "-pk")
        return self.order_by(column, "pk")

    def with_status(self, *statuses: str) -> TranscriptQuerySet:
        return self.filter(status__in=statuses) if statuses else self

    def with_errors(self) -> TranscriptQuerySet:
        return self.filter(error_count__gt=0)

    def deleted(self) -> TranscriptQuerySet:
        return self.filter(deleted_at__isnull=False)


def _aware(moment: datetime | date) -> datetime:
    """A date means from its start; naive times are in the site's time zone."""
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, time.min)
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment)
    return moment


def sort_choices() -> list[str]:
    """Every ``sorted_by`` value: each key, ascending and descending."""
    return [f"{sign}{key}" for key in TRANSCRIPT_SORTS for sign in ("", "-")]


class LiveTranscriptManager(models.Manager.from_queryset(TranscriptQuerySet)):
    """Soft-deleted transcripts are invisible unless asked for through ``all_objects``."""

    def get_queryset(self) -> TranscriptQuerySet:
        return super().get_queryset().filter(deleted_at__isnull=True)


class AllTranscriptsManager(models.Manager.from_queryset(TranscriptQuerySet)):
    """Every transcript, soft-deleted ones included."""

    # The dataset's columns read along with a transcript by ``visible_one``; its two dates
    # are left deferred (they would need the backend's converters, and no read of one
    # transcript shows them).
    DATASET_COLUMNS = ("name", "slug", "description", "default_spec")

    def visible_one(self, user, pk: int) -> Transcript | None:
        """Transcript ``pk`` if ``user`` may see it (``for_user``), with its dataset's columns
        and the caller's role (``caller_role``; None for a superuser) read in the same
        statement, deleted or not.

        Written once as SQL rather than compiled by the ORM on every call: this is the read
        behind every API route on one transcript, and compiling the same joined query, then
        mapping its columns, took longer than the database took to answer it
        (docs/performance.md). The statement's text never changes, so PostgreSQL keeps it
        prepared. The row goes through the fields' own converters, as the ORM's would.
        """
        if not user.is_authenticated or not 0 < pk < 2**63:
            return None
        member = not user.is_superuser
        statement, connection = _visible_one_statement(self.db, member), connections[self.db]
        with connection.cursor() as cursor:
            cursor.execute(statement.sql, [user.pk, pk] if member else [pk])
            row = cursor.fetchone()
        if row is None:
            return None
        columns = statement.transcript
        transcript = Transcript.from_db(self.db, columns.fields, columns.values(row, connection))
        dataset_values = [transcript.dataset_id, *row[statement.dataset_at : statement.role_at]]
        transcript.dataset = Dataset.from_db(self.db, statement.dataset_fields, dataset_values)
        transcript.caller_role = row[statement.role_at]
        return transcript


class _VisibleOne(NamedTuple):
    """The statement of ``AllTranscriptsManager.visible_one`` and where its parts are."""

    sql: str
    transcript: ModelColumns
    dataset_fields: tuple[str, ...]
    dataset_at: int
    role_at: int


@functools.cache
def _visible_one_statement(alias: str, member: bool) -> _VisibleOne:
    """The statement of ``AllTranscriptsManager.visible_one`` on database ``alias``."""
    quote = connections[alias].ops.quote_name
    transcript = model_columns(Transcript, alias, "t")
    dataset_columns = AllTranscriptsManager.DATASET_COLUMNS
    selected = [*transcript.select, *(f"d.{quote(column)}" for column in dataset_columns)]
    joins = f"JOIN {quote(Dataset._meta.db_table)} d ON d.id = t.{quote('dataset_id')}"
    if member:
        selected.append(f"m.{quote('role')}")
        joins += (
            f" JOIN {quote(Membership._meta.db_table)} m"
            f" ON m.{quote('dataset_id')} = t.{quote('dataset_id')} AND m.{quote('user_id')} = %s"
        )
    else:
        selected.append("NULL")
    table = quote(Transcript._meta.db_table)
    return _VisibleOne(
        sql=f"SELECT {', '.join(selected)} FROM {table} t {joins} WHERE t.id = %s",
        transcript=transcript,
        dataset_fields=("id", *dataset_columns),
        dataset_at=len(transcript.fields),
        role_at=len(transcript.fields) + len(dataset_columns),
    )


class Transcript(models.Model):
    # Not indexed alone: every index of the table below begins with the dataset.
    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="transcripts", db_index=False
    )
    title = models.CharField(max_length=300, blank=True)
    spec = models.CharField(max_length=32, choices=SPEC_CHOICES)
    header = OrderedJSONField(default=dict, blank=True)
    # Document-level data of the canonical transcript that is not a header key (OpenAI
    # `tools`, v0.1 [BOS]/[EOS], extra top-level JSON keys…).
    attrs = OrderedJSONField(default=dict, blank=True)
    # The exact text as last saved, in ``spec``. It keeps what the canonical fields cannot
    # (layout: whitespace, attribute order, header formatting) so that an export in the
    # source spec is byte for byte what was imported, and an edit changes only the bytes
    # of the edited messages. Compressed in the database (most of its size otherwise).
    source_text = CompressedTextField(blank=True)
    # True when ``source_text`` parses back to exactly the stored canonical transcript. It is
    # False after an edit that ``spec`` cannot represent (e.g. a call id in ChatML): then an
    # export goes through conversion, which reports the loss instead of hiding it.
    source_is_exact = models.BooleanField(default=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    # Bumped by every change; the newest revision has the same number (optimistic locking).
    version = models.PositiveIntegerField(default=1)
    external_id = models.CharField(max_length=255, blank=True)
    metadata = OrderedJSONField(default=dict, blank=True)
    diagnostics = DiagnosticsField(default=list, blank=True)
    error_count = models.PositiveIntegerField(default=0)
    warning_count = models.PositiveIntegerField(default=0)
    # Kept by editor.storage with the messages it writes: lists read it instead of counting
    # the Message rows of every transcript they show.
    message_count = models.PositiveIntegerField(default=0)
    # Whether a message is of each ``Contains`` kind (``CONTAINS_COLUMNS``), kept the same way.
    has_tool_calls = models.BooleanField(default=False)
    has_analysis = models.BooleanField(default=False)
    has_system_prompt = models.BooleanField(default=False)
    # Tokens under the dataset's tokenizer (``editor.tokens``): the total, for the list's
    # sort and "over N tokens" filter, and {"tokenizer": key, "version": n, "messages": [...],
    # "channels": {...}} for the transcript page. Null when the dataset names no tokenizer or
    # the count is not made yet.
    token_count = models.PositiveIntegerField(null=True, blank=True)
    token_counts = models.JSONField(encoder=CompactJSONEncoder, null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # indexed where set: Meta.indexes
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # indexed where set: Meta.indexes
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # indexed where set: Meta.indexes
    )

    objects = LiveTranscriptManager()
    all_objects = AllTranscriptsManager()

    # What a list of transcripts shows (``TranscriptQuerySet.summaries``).
    SUMMARY_FIELDS = (
        "dataset",
        "title",
        "spec",
        "status",
        "version",
        "external_id",
        "message_count",
        "error_count",
        "warning_count",
        "token_count",
        "created_at",
        "updated_at",
        "updated_by",
        "deleted_at",
    )

    class Meta:
        base_manager_name = "all_objects"
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"],
                condition=~Q(external_id=""),
                name="transcript_unique_external_id",
            )
        ]
        indexes = [
            models.Index(fields=["dataset", "status", "deleted_at"], name="transcript_status_idx"),
            models.Index(fields=["dataset", "external_id"], name="transcript_external_id_idx"),
            models.Index(fields=["dataset", "error_count"], name="transcript_errors_idx"),
            # The dataset page's default order (newest change first).
            models.Index(fields=["dataset", "updated_at"], name="transcript_updated_idx"),
            # Every sort of the list has an index to walk: a search's page is found by looking
            # into the transcripts in that order (editor.listing.search.search_page).
            models.Index(fields=["dataset", "title"], name="transcript_title_idx"),
            models.Index(fields=["dataset", "message_count"], name="transcript_messages_idx"),
            models.Index(fields=["dataset", "token_count"], name="transcript_tokens_idx"),
            *_where_set("transcript", "created_by", "updated_by", "deleted_by"),
        ]

    def __str__(self) -> str:
        return self.title or self.external_id or f"Transcript {self.pk}"

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    def canonical(self) -> formats.Transcript:
        """The canonical transcript (without layout), built from the stored rows.

        Uses prefetched messages when present (``Transcript.objects.with_messages()``), else
        reads them (``stored_messages``).
        """
        prefetched = getattr(self, "_prefetched_objects_cache", {}).get("messages")
        return formats.Transcript(
            spec=self.spec,
            header=self.header,
            messages=[m.to_canonical() for m in prefetched]
            if prefetched is not None
            else self.stored_messages(),
            attrs=self.attrs,
        )

    def message_dicts(self) -> list[dict[str, Any]]:
        """The canonical messages as JSON objects (``Message.to_dict``), from the shared cache
        when a worker has read them at this version already.

        A transcript's messages change only with its version (``editor.storage.save``), so the
        version names them: nothing is invalidated, and a read of a cached transcript costs
        no message query and no conversion. Very long transcripts are not cached (one entry
        would crowd out thousands of others). Stored once committed, never from inside a
        transaction that could still roll back.
        """
        if self.message_count > CACHED_MESSAGES_MAX:
            return [message.to_dict() for message in self.canonical().messages]
        written = getattr(self, "_written_message_dicts", None)
        if written is not None and written[0] == self.version:
            return written[1]
        key = self._messages_key(self.version)
        found = cache.get(key)
        if found is None:
            found = [message.to_dict() for message in self.canonical().messages]
            transaction.on_commit(lambda: cache.set(key, found, CACHED_MESSAGES_SECONDS))
        return found

    def messages_at(self, version: int) -> list[formats.Message]:
        """The canonical messages as they are at ``version``: from the shared cache when a
        worker has read or written them at that version, else as stored now.

        For a save from ``version``: the version names the messages (``message_dicts``), so
        a cached copy is exactly what the rows hold while the transcript is at ``version``,
        and a save's compare-and-swap (``editor.storage.save``) refuses it at any other."""
        if self.message_count <= CACHED_MESSAGES_MAX:
            found = cache.get(self._messages_key(version))
            if found is not None:
                return [formats.Message.from_dict(data) for data in found]
        return self.stored_messages()

    def wrote_messages(self, messages: Sequence[formats.Message]) -> None:
        """``messages`` were just stored at this version: the response and the next save
        read them from here and from the shared cache (once committed), not the rows."""
        if self.message_count > CACHED_MESSAGES_MAX:
            return
        # As the rows give them back: no content is stored as "" (``Message.from_canonical``).
        dicts = [
            (message if message.content is not None else replace(message, content="")).to_dict()
            for message in messages
        ]
        self._written_message_dicts = (self.version, dicts)
        key = self._messages_key(self.version)
        transaction.on_commit(lambda: cache.set(key, dicts, CACHED_MESSAGES_SECONDS))

    def _messages_key(self, version: int) -> str:
        return f"transcript-messages:{self.pk}:{version}:{self.created_at.timestamp()}"

    def stored_message(self, index: int) -> formats.Message | None:
        """Message ``index`` as stored now (one row read), or None past the end."""
        row = (
            Message.objects.filter(transcript=self, index=index)
            .annotate(attrs_text=Cast("attrs", models.TextField()))
            .values_list(*Message.STORED_COLUMNS, "attrs_text")
            .first()
        )
        return None if row is None else Message.canonical_of(row, self, attrs_as_text=True)

    def stored_messages(self) -> list[formats.Message]:
        """The canonical messages as stored now, read afresh as plain tuples.

        No Message instances, and ``attrs`` read as text and decoded only when it holds
        something: on long transcripts, building model objects and running the JSON field's
        converter on thousands of empty objects costs more than the query.
        """
        rows = (
            Message.objects.filter(transcript=self)
            .order_by("index")
            .annotate(attrs_text=Cast("attrs", models.TextField()))
            .values_list(*Message.STORED_COLUMNS, "attrs_text")
        )
        return [Message.canonical_of(values, self, attrs_as_text=True) for values in rows]


# Transcripts with at most this many messages keep them in the shared cache, for a day.
CACHED_MESSAGES_MAX = 2_000


CACHED_MESSAGES_SECONDS = 24 * 3600
