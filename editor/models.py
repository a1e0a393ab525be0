"""Datasets, their members, transcripts with their messages, and the revision history.

Single-object rules live on the models (``Dataset.role_of``, ``Transcript.canonical``),
collection rules on the QuerySets (``Transcript.objects.for_user``). Every change to a
transcript's content goes through ``editor.storage`` (compare-and-swap on ``version``, a
revision per change); nothing here writes a transcript on its own.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
import secrets
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from itertools import islice
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.core.cache import cache
from django.core.validators import RegexValidator
from django.db import connections, models, transaction
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    F,
    Func,
    Max,
    OuterRef,
    Prefetch,
    Q,
    Subquery,
    Sum,
    Value,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone
from django.utils.functional import cached_property

from editor import formats, token_cache
from editor.db.compact_json import CompactJSONEncoder, DiagnosticsField
from editor.db.compressed import CompressedJSONField, CompressedTextField
from editor.db.message_text import content_at
from editor.formats.render.visibility import visibility as end_user_visibility
from editor.formats.validate.context import is_call

SPEC_CHOICES = [(spec, spec) for spec in formats.SPEC_IDS]
_EMPTY_TRANSCRIPTS = {spec: formats.Transcript(spec=spec) for spec in formats.SPEC_IDS}

# Canonical message fields stored in CharFields; longer values are refused with a clear
# error by editor.storage rather than truncated (or rejected by PostgreSQL with a 500).
SHORT_FIELD_LENGTH = 255


class Role(models.TextChoices):
    CURATOR = "curator", "Curator"
    REVIEWER = "reviewer", "Reviewer"
    ANNOTATOR = "annotator", "Annotator"
    VIEWER = "viewer", "Viewer"


EDITING_ROLES = frozenset({Role.CURATOR, Role.REVIEWER, Role.ANNOTATOR})
REVIEWING_ROLES = frozenset({Role.CURATOR, Role.REVIEWER})

# Renderings (editor.formats.render audiences) each role may ask for: a viewer sees what the
# end user sees; asking for more is E-PERM-VISIBILITY (HTTP 403).
END_USER_AUDIENCE = "end_user"
ALL_AUDIENCES = ("end_user", "annotator", "debug")


# A slug is a URL path segment (editor/urls.py's `dataset` converter): like Django's slugs,
# plus dots, since datasets are often named after spec versions ("openchatml-2.2").
DATASET_SLUG_PATTERN = r"[A-Za-z0-9][-A-Za-z0-9_.]*"
validate_dataset_slug = RegexValidator(
    rf"\A{DATASET_SLUG_PATTERN}\Z",
    "Use letters, digits, hyphens, underscores and dots, starting with a letter or digit.",
)


def audiences_of(role: str | None) -> tuple[str, ...]:
    if role is None:
        return ()
    return ALL_AUDIENCES if role in EDITING_ROLES else (END_USER_AUDIENCE,)


class DatasetQuerySet(models.QuerySet):
    def for_user(self, user) -> DatasetQuerySet:
        """The datasets ``user`` is a member of (every dataset for a superuser)."""
        if not user.is_authenticated:
            return self.none()
        if user.is_superuser:
            return self
        return self.filter(memberships__user=user)

    def with_roles(self, user) -> DatasetQuerySet:
        """Annotate ``user_role``: ``user``'s role in each dataset (as ``Dataset.role_of``)."""
        if user.is_authenticated and user.is_superuser:
            return self.annotate(user_role=Value(Role.CURATOR.value))
        role = Membership.objects.filter(dataset=OuterRef("pk"), user_id=user.pk).values("role")
        return self.annotate(user_role=Subquery(role[:1]))

    def with_transcript_counts(self) -> DatasetQuerySet:
        return self.annotate(
            transcript_count=Count("transcripts", filter=Q(transcripts__deleted_at__isnull=True))
        )

    def with_activity(self) -> DatasetQuerySet:
        """Annotate, over the live transcripts of each dataset, in the same one query:
        ``transcript_count``, a ``<status>_count`` per review status, ``error_total``,
        ``warning_total`` and ``last_activity`` (the newest change, deleted ones included).
        """
        live = Q(transcripts__deleted_at__isnull=True)
        per_status = {
            f"{status}_count": Count("transcripts", filter=live & Q(transcripts__status=status))
            for status in Status.values
        }
        return self.with_transcript_counts().annotate(
            **per_status,
            error_total=Coalesce(Sum("transcripts__error_count", filter=live), 0),
            warning_total=Coalesce(Sum("transcripts__warning_count", filter=live), 0),
            last_activity=Max("transcripts__updated_at"),
        )


class Dataset(models.Model):
    name = models.CharField(max_length=200)
    slug = models.CharField(max_length=100, unique=True, validators=[validate_dataset_slug])
    description = models.TextField(blank=True)
    default_spec = models.CharField(max_length=32, choices=SPEC_CHOICES, default="openchatml-2.2")
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="datasets"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DatasetQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def role_of(self, user) -> Role | None:
        """``user``'s role in this dataset; superusers act as curators everywhere."""
        if user is None or not user.is_authenticated:
            return None
        if user.is_superuser:
            return Role.CURATOR
        known = self.__dict__.get("_roles", {})
        if user.pk in known:
            return known[user.pk]
        role = self.memberships.filter(user=user).values_list("role", flat=True).first()
        return Role(role) if role else None

    def know_role(self, user, role: str | None) -> None:
        """Remember ``user``'s role, read along with this dataset: ``role_of`` asks no more."""
        self.__dict__.setdefault("_roles", {})[user.pk] = Role(role) if role else None

    def can_view(self, user) -> bool:
        return self.role_of(user) is not None

    def can_edit(self, user) -> bool:
        return self.role_of(user) in EDITING_ROLES

    def can_curate(self, user) -> bool:
        return self.role_of(user) == Role.CURATOR

    def can_review(self, user) -> bool:
        return self.role_of(user) in REVIEWING_ROLES

    def audiences_for(self, user) -> tuple[str, ...]:
        """The renderings ``user`` may see: all for editors, the end user's for viewers."""
        return audiences_of(self.role_of(user))

    @property
    def user_audiences(self) -> tuple[str, ...]:
        """For a queryset annotated by ``with_roles``: ``audiences_for`` that user, no query."""
        return audiences_of(getattr(self, "user_role", None))

    @property
    def user_sees_hidden(self) -> bool:
        """For a queryset annotated by ``with_roles``: may that user see what the end user
        does not (hidden channels, system prompts, tool traffic)?"""
        return any(audience != END_USER_AUDIENCE for audience in self.user_audiences)

    @property
    def status_counts(self) -> list[tuple[Status, int]]:
        """For a queryset annotated by ``with_activity``: (status, count) in workflow order."""
        return [(status, getattr(self, f"{status.value}_count")) for status in Status]

    @property
    def user_can_curate(self) -> bool:
        """For templates of a queryset annotated by ``with_roles``: may that user curate?"""
        return getattr(self, "user_role", None) == Role.CURATOR

    @property
    def user_can_edit(self) -> bool:
        """For templates of a queryset annotated by ``with_roles``: may that user edit?"""
        return getattr(self, "user_role", None) in EDITING_ROLES


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "dataset"], name="membership_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.dataset} as {self.role}"


class MembershipAction(models.TextChoices):
    ADDED = "added", "added"
    ROLE_CHANGED = "role_changed", "changed the role of"
    REMOVED = "removed", "removed"


class MembershipChange(models.Model):
    """Who changed whose membership of a dataset, when, and from which role to which.

    Written by ``editor.membership`` for every change (read-only in the admin). A model of its
    own rather than the admin's LogEntry: the history belongs to the dataset and stays queryable
    by dataset, user and role, where LogEntry keeps admin edits as free text on a content type.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="membership_log")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # Kept as written: the history still names a member whose account was deleted since.
    username = models.CharField(max_length=150)
    action = models.CharField(max_length=16, choices=MembershipAction.choices)
    old_role = models.CharField(max_length=16, choices=Role.choices, blank=True)
    new_role = models.CharField(max_length=16, choices=Role.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.actor} {self.get_action_display()} {self.username} in {self.dataset}"


class DatasetEdit(models.Model):
    """Who created a dataset or changed its name, description or default spec, and when:
    ``changes`` is ``{field: [old, new]}`` (empty for the creation). Written by
    ``editor.membership``; the slug never changes, so it is not among the fields."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="edits")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created = models.BooleanField(default=False)
    changes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        what = "created" if self.created else f"changed {', '.join(self.changes)} of"
        return f"{self.actor} {what} {self.dataset}"


class Status(models.TextChoices):
    # The transitions between these belong to the review workflow (editor/workflow.py).
    DRAFT = "draft", "Draft"
    IN_REVIEW = "in_review", "In review"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


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
        no reference cycles left for the garbage collector, so memory stays flat.
        """
        rows = self.iterator(chunk_size=chunk_size)
        try:
            while chunk := list(islice(rows, chunk_size)):
                sources = {row.pk: row for row in chunk}
                messages = defaultdict(list)
                for transcript_id, *values in (
                    Message.objects.filter(transcript__in=list(sources))
                    .order_by("transcript_id", "index")
                    .values_list("transcript_id", *Message.STORED_FIELDS)
                ):
                    messages[transcript_id].append(
                        Message.canonical_of(values, sources[transcript_id])
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
            answers = Annotation.objects.filter(
                transcript=OuterRef("pk"),
                question=question,
                value__holds=value,
                state=AnnotationState.SUBMITTED,
            )
            rows = rows.filter(Exists(answers))
        if wanted.text:
            rows = rows.containing(wanted.text, wanted.search_hidden)
        return rows

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
        looked into). ``editor.search.search_page`` chooses between the two."""
        messages = Message.objects.using(self.db).filter(transcript=OuterRef("pk"))
        return self.filter(Exists(messages.probed_for(text, search_hidden)))

    def with_diagnostic(self, code: str) -> TranscriptQuerySet:
        """Transcripts with a diagnostic of ``code`` in their stored ``diagnostics`` list."""
        if connections[self.db].vendor == "postgresql":
            # JSONB containment (@>): is {"code": code} an element of the list?
            return self.filter(diagnostics__contains=[{"code": code}])
        # SQLite has no JSON containment: a JSON1 query over the list's elements instead.
        table = connections[self.db].ops.quote_name(self.model._meta.db_table)
        return self.filter(
            RawSQL(
                f"EXISTS (SELECT 1 FROM json_each({table}.diagnostics) "
                "WHERE json_extract(json_each.value, '$.code') = %s)",
                (code,),
                output_field=BooleanField(),
            )
        )

    def sorted_by(self, sort: str) -> TranscriptQuerySet:
        """Order by a ``TRANSCRIPT_SORTS`` key, "-" first for descending, pk breaking ties."""
        descending = sort.startswith("-")
        column = TRANSCRIPT_SORTS[sort.removeprefix("-")]
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
        reader, connection = _visible_one_reader(self.db, member), connections[self.db]
        with connection.cursor() as cursor:
            cursor.execute(reader.sql, [user.pk, pk] if member else [pk])
            row = cursor.fetchone()
        if row is None:
            return None
        values = reader.convert(row, connection)
        transcript = Transcript.from_db(self.db, reader.fields, values)
        dataset_values = [transcript.dataset_id, *row[reader.dataset_at : reader.role_at]]
        transcript.dataset = Dataset.from_db(self.db, reader.dataset_fields, dataset_values)
        transcript.caller_role = row[reader.role_at]
        return transcript


@dataclass(frozen=True)
class _RowReader:
    """A hand-written statement for one model's row plus more columns, and how to turn the
    model's columns into field values as the ORM would (the backend's converters, then the
    field's own ``from_db_value``). Made once per database alias: every connection to it
    (one a thread) has the same backend, so the same converters."""

    sql: str
    fields: tuple[str, ...]  # attnames of the model's columns, first in the row
    converters: tuple[tuple[int, tuple, Any], ...]  # (column, converters, its expression)
    dataset_fields: tuple[str, ...]
    dataset_at: int
    role_at: int

    def convert(self, row: tuple, connection) -> list:
        values = list(row[: len(self.fields)])
        for at, converters, expression in self.converters:
            for converter in converters:
                values[at] = converter(values[at], expression, connection)
        return values


@functools.cache
def _visible_one_reader(alias: str, member: bool) -> _RowReader:
    """The statement of ``AllTranscriptsManager.visible_one`` on database ``alias``."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    table, fields = Transcript._meta.db_table, Transcript._meta.concrete_fields
    converters = []
    for at, field in enumerate(fields):
        column = field.get_col(table)
        found = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        if found:
            converters.append((at, tuple(found), column))
    selected = [f"t.{quote(field.column)}" for field in fields]
    dataset_columns = AllTranscriptsManager.DATASET_COLUMNS
    selected += [f"d.{quote(column)}" for column in dataset_columns]
    joins = f"JOIN {quote(Dataset._meta.db_table)} d ON d.id = t.{quote('dataset_id')}"
    if member:
        selected.append(f"m.{quote('role')}")
        joins += (
            f" JOIN {quote(Membership._meta.db_table)} m"
            f" ON m.{quote('dataset_id')} = t.{quote('dataset_id')} AND m.{quote('user_id')} = %s"
        )
    else:
        selected.append("NULL")
    return _RowReader(
        sql=f"SELECT {', '.join(selected)} FROM {quote(table)} t {joins} WHERE t.id = %s",
        fields=tuple(field.attname for field in fields),
        converters=tuple(converters),
        dataset_fields=("id", *dataset_columns),
        dataset_at=len(fields),
        role_at=len(fields) + len(dataset_columns),
    )


def _where_set(table: str, *foreign_keys: str) -> list[models.Index]:
    """Indexes of nullable foreign keys holding only the rows where the key is set: nothing
    looks a NULL up (deleting a user sets its keys to NULL by looking up its id), and most
    rows have none (no one deleted the transcript; an import run from the command line has
    no author)."""
    return [
        models.Index(
            fields=[key], condition=Q(**{f"{key}__isnull": False}), name=f"{table}_{key}_idx"
        )
        for key in foreign_keys
    ]


class Transcript(models.Model):
    # Not indexed alone: every index of the table below begins with the dataset.
    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="transcripts", db_index=False
    )
    title = models.CharField(max_length=300, blank=True)
    spec = models.CharField(max_length=32, choices=SPEC_CHOICES)
    header = models.JSONField(encoder=CompactJSONEncoder, default=dict, blank=True)
    # Document-level data of the canonical transcript that is not a header key (OpenAI
    # `tools`, v0.1 [BOS]/[EOS], extra top-level JSON keys…).
    attrs = models.JSONField(encoder=CompactJSONEncoder, default=dict, blank=True)
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
    metadata = models.JSONField(encoder=CompactJSONEncoder, default=dict, blank=True)
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
            # into the transcripts in that order (editor.search.search_page).
            models.Index(fields=["dataset", "title"], name="transcript_title_idx"),
            models.Index(fields=["dataset", "message_count"], name="transcript_messages_idx"),
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

        A transcript's messages change only with its version (``storage._claim``), so the
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
        and a save's compare-and-swap (``storage._claim``) refuses it at any other."""
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

    def stored_messages(self) -> list[formats.Message]:
        """The canonical messages as stored now, read afresh as plain tuples.

        No Message instances, and ``attrs`` read as text and decoded only when it holds
        something: on long transcripts, building model objects and running the JSON field's
        converter on thousands of empty objects cost more than the query (measured).
        """
        rows = (
            Message.objects.filter(transcript=self)
            .order_by("index")
            .annotate(attrs_text=Cast("attrs", models.TextField()))
            .values_list(*Message.STORED_FIELDS[:-1], "attrs_text")
        )
        return [Message.canonical_of(values, self, attrs_as_text=True) for values in rows]


# Transcripts with at most this many messages keep them in the shared cache, for a day.
CACHED_MESSAGES_MAX = 2_000
CACHED_MESSAGES_SECONDS = 24 * 3600

# A character of a search word: what both backends' tokenizers keep in a token (letters and
# digits). Not the underscore, which both split words at, nor 21 signs of the New Tai Lue and
# Vedic blocks that Python's Unicode data makes letters and SQLite's unicode61 tokenizer does
# not (tests/editor/test_search.py compares every character with the tokenizer in use).
# Taking only these from the user's query makes any input a valid FTS5 query: no quote,
# star, parenthesis or NEAR of the user's reaches its syntax, and no word is two tokens (a
# phrase, which the search table, keeping no positions, refuses: migration 0021).
SEARCH_WORD_CHARACTER = r"[^\W_\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3]"
SEARCH_WORD_RE = re.compile(SEARCH_WORD_CHARACTER + "+")
# The longest search accepted (in characters): longer is refused with a clear error (4xx).
MAX_SEARCH_LENGTH = 500
# PostgreSQL text search configuration: "simple" (no stemming, no stop words), as SQLite's
# unicode61 tokenizer, so that both backends find the same transcripts for the same words.
SEARCH_CONFIG = "simple"


def search_words(query: str) -> list[str]:
    return SEARCH_WORD_RE.findall(query)


def fts_query(query: str, search_hidden: bool) -> str:
    """The FTS5 query of SQLite's search table for the words of ``query``: all of them, in
    what the end user sees or, with ``search_hidden``, anywhere in the content (its two
    columns together are the whole content; migration 0010)."""
    columns = "{end_user_text hidden_text}" if search_hidden else "end_user_text"
    # Every word as an FTS5 string (a search word holds no double quote to escape).
    return " AND ".join(f'{columns} : "{word}"' for word in search_words(query))


class _FtsRowMatches(Func):
    """SQLite: does the message whose id is the first argument match the FTS5 query (the
    second)? One lookup in the search table by rowid. (Joined to the messages without the
    rowid, SQLite ran the whole full-text query again for every transcript looked into:
    27 s for a page of 100,000 transcripts.)"""

    output_field = BooleanField()

    def as_sql(self, compiler, connection, **extra_context):
        message, query = self.get_source_expressions()
        message_sql, message_params = compiler.compile(message)
        query_sql, query_params = compiler.compile(query)
        sql = (
            "EXISTS (SELECT 1 FROM editor_message_search"
            f" WHERE editor_message_search.rowid = {message_sql}"
            f" AND editor_message_search MATCH {query_sql})"
        )
        return sql, (*message_params, *query_params)


class MessageQuerySet(models.QuerySet):
    def containing(self, query: str, search_hidden: bool) -> MessageQuerySet:
        """Messages whose text has every word of ``query`` (case-insensitive; on PostgreSQL
        also the web search syntax: "a phrase", -word, or). Without ``search_hidden``, only
        what the end user sees of each message is searched (``end_user_text``).

        PostgreSQL uses the GIN indexes of migrations 0010 and 0013, SQLite its FTS5 table.
        """
        words = search_words(query)
        if not words:
            return self.none()
        if connections[self.db].vendor == "postgresql":
            # A PostgreSQL string cannot hold a NUL character (and no word has one).
            query = SearchQuery(
                query.replace("\x00", ""), config=SEARCH_CONFIG, search_type="websearch"
            )
            # On PostgreSQL every row holds its content (``Message.stored_content``).
            found = self.annotate(
                content_vector=SearchVector("stored_content", config=SEARCH_CONFIG)
            )
            if search_hidden:
                return found.filter(content_vector=query)
            # What the end user sees is the content itself where end_user_text is NULL (most
            # messages): each half of the OR has its own index, and the second one indexes
            # only the few messages whose visible text differs (migration 0013).
            found = found.annotate(
                end_user_vector=SearchVector("end_user_text", config=SEARCH_CONFIG)
            )
            # The NULL test first: where a row is read rather than found through an index, each
            # message's text is then tokenized once (a Q's keywords are sorted, so two Qs).
            return found.filter(
                (Q(end_user_text__isnull=True) & Q(content_vector=query))
                | (Q(end_user_text__isnull=False) & Q(end_user_vector=query))
            )
        return self.filter(
            pk__in=RawSQL(
                "SELECT rowid FROM editor_message_search WHERE editor_message_search MATCH %s",
                (fts_query(query, search_hidden),),
            )
        )

    def probed_for(self, query: str, search_hidden: bool) -> MessageQuerySet:
        """The same messages as ``containing``, each one looked up in the search index: for
        a few messages (a transcript's, a page's), where ``containing`` on SQLite would read
        every match of the whole table first. PostgreSQL's planner makes that choice itself."""
        if connections[self.db].vendor == "postgresql" or not search_words(query):
            return self.containing(query, search_hidden)
        return self.filter(_FtsRowMatches(F("pk"), Value(fts_query(query, search_hidden))))

    def transcript_ids(self) -> MessageQuerySet | RawSQL:
        """The transcripts of these messages, for ``pk__in``, found from the whole set of
        them first.

        On PostgreSQL the subquery is fenced (``OFFSET 0``) so that the planner cannot turn
        it into a walk of a sorted list's transcripts, searching each one's messages until
        the page is full: it estimates a search's matches from each word's frequency and can
        be wrong by orders of magnitude (a rare word beside a common one: 525 estimated, 1
        found; 25 s at 100,000 transcripts), and even right the walk is slow wherever few
        transcripts match (a word in 1 % of them: 2.7 s). Where a walk is the fast way (most
        transcripts match), ``editor.search`` asks for it (``probed_for``). SQLite computes
        an ``IN`` subquery first anyway.
        """
        transcripts = self.order_by().values("transcript_id")
        if connections[self.db].vendor != "postgresql" or transcripts.query.is_empty():
            return transcripts
        sql, params = transcripts.query.get_compiler(self.db).as_sql()
        return RawSQL(f"SELECT transcript_id FROM ({sql}) AS matches OFFSET 0", params)


class Message(models.Model):
    """One message of a transcript: every field of the canonical ``formats.Message``.

    Optional fields are NULL when absent: the canonical model tells ``None`` from ``""``
    (an empty channel is not a missing one) and storage must not merge them.
    """

    # No index of its own: message_unique_index (transcript, index) starts with it.
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="messages", db_index=False
    )
    index = models.PositiveIntegerField()
    role = models.CharField(max_length=SHORT_FIELD_LENGTH)
    # The content, or "" where the row says where it is in the transcript's source text
    # instead (``content_start`` … ``content_end``: ``editor.db.message_text``; on SQLite only,
    # PostgreSQL's search indexes read this column). Read ``content``: the text either way.
    stored_content = models.TextField(blank=True, db_column="content")
    content_start = models.PositiveIntegerField(null=True, blank=True)
    content_end = models.PositiveIntegerField(null=True, blank=True)
    content_escaped = models.BooleanField(null=True, blank=True)
    channel = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    recipient = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    name = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    call_id = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    intent = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    content_type = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    constrain = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    end = models.CharField(max_length=16, null=True, blank=True)  # noqa: DJ001
    attrs = models.JSONField(encoder=CompactJSONEncoder, default=dict, blank=True)
    # What the end user sees of ``content`` (editor.formats.render's end-user rendering),
    # kept by editor.storage for the text search of viewers: NULL when it is the whole
    # content (most messages: no second copy), "" when the message is hidden from end users.
    end_user_text = models.TextField(null=True, blank=True)  # noqa: DJ001

    CANONICAL_FIELDS = formats.model.SEMANTIC_FIELDS
    # The columns ``canonical_of`` reads a message from: the canonical fields, the content
    # as stored (the text or where it is), attrs last.
    STORED_FIELDS = (
        "role",
        "stored_content",
        "content_start",
        "content_end",
        "content_escaped",
        *CANONICAL_FIELDS[2:],
    )

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["transcript", "index"], name="message_unique_index")
        ]

    def __str__(self) -> str:
        return f"#{self.index} {self.role}"

    @property
    def content(self) -> str:
        if self.content_start is None:
            return self.stored_content
        return content_at(
            self.transcript.source_text, self.content_start, self.content_end, self.content_escaped
        )

    @content.setter
    def content(self, value: str) -> None:
        self.stored_content = value
        self.content_start = self.content_end = self.content_escaped = None

    @classmethod
    def from_canonical(cls, message: formats.Message, *, index: int, **kwargs) -> Message:
        values = {name: getattr(message, name) for name in cls.CANONICAL_FIELDS}
        values["content"] = values["content"] or ""
        values["attrs"] = dict(values["attrs"] or {})
        return cls(index=index, **values, **kwargs)

    @staticmethod
    def end_user_text_of(spec: str, message: formats.Message) -> str | None:
        """The ``end_user_text`` column of ``message`` in a transcript of ``spec``."""
        # visibility() reads only the transcript's spec: one empty transcript per spec, shared,
        # rather than one made per message (a tenth of an import's message rows).
        of_spec = _EMPTY_TRANSCRIPTS.get(spec) or formats.Transcript(spec=spec)
        seen = end_user_visibility(of_spec, message)
        if not seen.visible:
            return ""
        return None if seen.end_user_text == (message.content or "") else seen.end_user_text

    @staticmethod
    def canonical_of(
        values: Sequence, transcript: Transcript, *, attrs_as_text: bool = False
    ) -> formats.Message:
        """The canonical message of a row read as ``STORED_FIELDS`` (``attrs_as_text``: attrs
        as the column's JSON text, decoded only when it holds something, which is cheaper
        than the JSON field's converter on thousands of empty objects)."""
        role, stored, start, end, escaped, *others, attrs = values
        content = (
            stored if start is None else content_at(transcript.source_text, start, end, escaped)
        )
        if attrs_as_text:
            attrs = json.loads(attrs) if attrs and attrs != "{}" else {}
        return formats.Message(
            role, content, **dict(zip(_MESSAGE_SCALARS, others, strict=True)), attrs=attrs
        )

    def to_canonical(self) -> formats.Message:
        return formats.Message(**{name: getattr(self, name) for name in self.CANONICAL_FIELDS})


# The canonical fields between content and attrs (``Message.canonical_of``).
_MESSAGE_SCALARS = Message.CANONICAL_FIELDS[2:-1]


class RevisionKind(models.TextChoices):
    CREATE = "create", "Created"
    IMPORT = "import", "Imported"
    EDIT = "edit", "Edited"
    RESTORE = "restore", "Restored"
    DELETE = "delete", "Deleted"
    UNDELETE = "undelete", "Undeleted"


class RevisionQuerySet(models.QuerySet):
    def for_transcript(self, transcript: Transcript) -> RevisionQuerySet:
        """Newest first, with authors; snapshots (the whole state, large on long
        transcripts) are read only when asked for."""
        return (
            self.filter(transcript=transcript)
            .select_related("author")
            .defer("snapshot")
            .order_by("-number")
        )


class HistoryBroken(Exception):
    """A transcript moved on from its newest revision without that revision's copy of the
    state being stored first: a write that bypassed ``storage._write``. Never expected."""


class Revision(models.Model):
    """One saved state of a transcript: enough to show it, diff it and restore it.

    ``snapshot`` = {"transcript": canonical dict, "source_text", "title", "metadata"}, or
    the compact form (``storage.compact``), or ``CURRENT`` for the newest revision.
    """

    # What the newest revision of a transcript holds instead of a copy of its state: that
    # state is the transcript's own row and messages until the next write, which stores the
    # copy here first (``storage._write``). An imported dataset keeps its content once, not
    # once more in every first revision.
    CURRENT = {"current": True}

    # Not indexed alone: the unique (transcript, number) index begins with it.
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="revisions", db_index=False
    )
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=RevisionKind.choices, default=RevisionKind.EDIT)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # indexed where set: Meta.indexes
    )
    created_at = models.DateTimeField(auto_now_add=True)
    note = models.CharField(max_length=500, blank=True)
    # Compressed: a revision that is not the newest holds the whole source text it saved.
    snapshot = CompressedJSONField()

    objects = RevisionQuerySet.as_manager()

    class Meta:
        ordering = ["transcript", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["transcript", "number"], name="revision_unique_number")
        ]
        indexes = [*_where_set("revision", "author")]

    def __str__(self) -> str:
        return f"{self.transcript} r{self.number}"

    @cached_property
    def full_snapshot(self) -> dict:
        """``{title, metadata, source_text, transcript}``: the state this revision saved.

        A revision whose source text parsed to exactly its transcript stores the text and
        its spec only (``storage.compact``); the transcript is that text parsed again. The
        newest revision (``CURRENT``) is the transcript as it is now.
        """
        stored = self._current_state() if self.snapshot.get("current") else self.snapshot
        if "transcript" in stored:
            return stored
        stored = dict(stored)
        spec = stored.pop("spec")
        parsed = formats.parse(stored["source_text"], spec).transcript
        return {**stored, "transcript": parsed.to_dict()}

    def _current_state(self) -> dict:
        from editor.storage.snapshots import stored_snapshot

        transcript = Transcript.all_objects.get(pk=self.transcript_id)
        if transcript.version == self.number:
            return stored_snapshot(transcript)
        # A save moved the transcript on after this revision was read; it stored the copy.
        stored = Revision.objects.values_list("snapshot", flat=True).get(pk=self.pk)
        if stored.get("current"):
            raise HistoryBroken(
                f"Revision {self.number} of transcript {transcript.pk} lost its state"
            )
        return stored

    def canonical(self) -> formats.Transcript:
        return formats.Transcript.from_dict(self.full_snapshot["transcript"])


class TaskStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class TrackedTask(models.Model):
    """What the app knows of one background task, readable from every web worker.

    The task itself runs on django-tasks (``editor.tasks``); this row holds its progress,
    which a heartbeat thread of the worker running it writes every few seconds, and its
    outcome. ``editor.background`` recovers the rows whose worker died (queued again, then
    failed).
    """

    status = models.CharField(
        max_length=16, choices=TaskStatus.choices, default=TaskStatus.QUEUED, db_index=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # "host:pid" of the worker process running it, so that a dead one can be told.
    worker = models.CharField(max_length=128, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    progress = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED)


class ImportTask(TrackedTask):
    """One import started from the UI or the API, run by a task worker.

    The uploaded file waits in ``settings.OCM_UPLOAD_DIR`` (``upload_path``) until the task
    ends; the final report is stored here.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="import_tasks")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    source_name = models.CharField(max_length=255)
    spec = models.CharField(max_length=32, choices=SPEC_CHOICES, blank=True)
    on_conflict = models.CharField(max_length=16, default="update")
    partial = models.BooleanField(default=False)
    upload_path = models.CharField(max_length=1024, blank=True)
    report = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import of {self.source_name} into {self.dataset}"


class ExportTask(TrackedTask):
    """An export of a dataset prepared as a file by a task worker, to download when done.

    ``options`` are those of ``editor.exporting.export_dataset`` (spec, format, statuses,
    audience, with_annotations); the file waits in ``settings.OCM_EXPORT_DIR``.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="export_tasks")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    options = models.JSONField(default=dict, blank=True)
    file_name = models.CharField(max_length=255)
    file_path = models.CharField(max_length=1024, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    transcript_count = models.PositiveIntegerField(default=0)
    # {"loss_count": N, "summary": {field: {"transcripts": n, "example": detail}},
    #  "losses": [the first MAX_KEPT_LOSSES losses, each naming its transcript]}
    losses = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"export of {self.dataset} as {self.file_name}"


class BulkTask(TrackedTask):
    """A bulk action on a large selection of a dataset's transcripts, run by a task worker
    (``editor.bulk``): the same one transaction as a small selection's, outside the request.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="bulk_tasks")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    action = models.CharField(max_length=32)
    params = models.JSONField(default=dict, blank=True)
    transcript_ids = models.JSONField(default=list, blank=True)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.action} on {len(self.transcript_ids)} transcripts of {self.dataset}"


class TaskWorker(models.Model):
    """A task worker process, as last seen: what ``/healthz`` checks the queue by."""

    worker_id = models.CharField(max_length=128, primary_key=True)
    started_at = models.DateTimeField(auto_now_add=True)
    seen_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.worker_id


class ApiTokenQuerySet(models.QuerySet):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True, user__is_active=True)


class ApiToken(models.Model):
    """A bearer token for the HTTP API (``Authorization: Bearer <token>``).

    Only a SHA-256 hash of the token is stored: the token itself is shown once, when
    ``issue`` creates it (``manage.py api_token USERNAME``). SHA-256 rather than a slow
    password hash because the secret is 32 random bytes, not something a person chose:
    there is nothing to guess, and every API request checks it.
    """

    PREFIX = "ocm_"
    # Enough of the token to recognise it in a list and to find its row; the rest is secret.
    DISPLAY_LENGTH = len(PREFIX) + 8
    # last_used_at is refreshed at most this often, not written on every request.
    LAST_USED_RESOLUTION_SECONDS = 60

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=DISPLAY_LENGTH, db_index=True, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name or 'unnamed'}, {self.user})"

    @staticmethod
    def hash(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8")).hexdigest()

    @classmethod
    def issue(cls, user, name: str = "") -> tuple[ApiToken, str]:
        """A new token for ``user``: the row and the token text (not stored anywhere)."""
        token = cls.PREFIX + secrets.token_urlsafe(32)
        row = cls.objects.create(
            user=user, name=name, prefix=token[: cls.DISPLAY_LENGTH], key_hash=cls.hash(token)
        )
        return row, token

    @classmethod
    def user_for(cls, token: str):
        """The active user ``token`` belongs to, or None (unknown, revoked, inactive user)."""
        wanted = cls.hash(token)
        user = token_cache.cached_user(wanted)
        if user is not None:
            return user
        # Found by its public prefix, then compared in constant time: how long a check takes
        # says nothing about how much of a guessed hash was right.
        for row in (
            cls.objects.active().select_related("user").filter(prefix=token[: cls.DISPLAY_LENGTH])
        ):
            if hmac.compare_digest(row.key_hash, wanted):
                row.touch()
                token_cache.remember(wanted, row.user)
                return row.user
        return None

    def touch(self) -> None:
        now = timezone.now()
        if self.last_used_at is None or (
            (now - self.last_used_at).total_seconds() >= self.LAST_USED_RESOLUTION_SECONDS
        ):
            ApiToken.objects.filter(pk=self.pk).update(last_used_at=now)
            self.last_used_at = now

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


# --- review queues ----------------------------------------------------------------------------


class ReviewQueue(models.Model):
    """Work for annotators over a dataset filter: each item is done by ``overlap`` distinct
    annotators (each holds one of the item's places while working on it), then reviewed."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="queues")
    name = models.CharField(max_length=200)
    instructions = models.TextField(blank=True)
    # The filter the items were drawn with (status, spec, has_errors, text), kept to show it.
    filters = models.JSONField(default=dict, blank=True)
    overlap = models.PositiveSmallIntegerField(default=1)
    reservation_minutes = models.PositiveIntegerField(default=30)
    # Empty: every annotator of the dataset may work in the queue.
    assignees = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="assigned_queues"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="queue_overlap_positive"),
            models.CheckConstraint(
                condition=Q(reservation_minutes__gte=1), name="queue_reservation_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def may_work(self, user) -> bool:
        """May ``user`` take items from this queue? Editors of the dataset, and only the
        assignees when the queue names some."""
        if not self.dataset.can_edit(user):
            return False
        assignees = self.assignees.all()
        return not assignees.exists() or assignees.filter(pk=user.pk).exists()


class QueueItem(models.Model):
    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="items")
    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="queue_items")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["queue", "position"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "transcript"], name="queue_item_unique"),
        ]
        # A claim walks a queue's items in order until one has a free place
        # (``queues._first_open_item``).
        indexes = [models.Index(fields=["queue", "position"], name="queue_item_position_idx")]

    def __str__(self) -> str:
        return f"{self.queue} #{self.position}"


class AssignmentState(models.TextChoices):
    # The moves between these are in editor/workflow.py (ASSIGNMENT_TRANSITIONS).
    CLAIMED = "claimed", "Claimed"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Expired"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class QueueAssignment(models.Model):
    """One annotator's turn at one item.

    ``slot`` is the place the assignment holds among the item's ``overlap`` places, 0 to
    overlap - 1, while it counts (claimed, submitted, approved, rejected); NULL once skipped or
    expired. The unique (item, slot) constraint is what keeps an item from going to more
    annotators than its overlap, on every database, however many claim at once.
    """

    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="queue_assignments"
    )
    state = models.CharField(
        max_length=16, choices=AssignmentState.choices, default=AssignmentState.CLAIMED
    )
    slot = models.PositiveSmallIntegerField(null=True, blank=True)
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    review_comment = models.TextField(blank=True)

    class Meta:
        ordering = ["item", "claimed_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "slot"], name="assignment_unique_slot"),
            models.UniqueConstraint(
                fields=["item", "annotator"], name="assignment_unique_annotator"
            ),
        ]
        indexes = [models.Index(fields=["annotator", "state"], name="assignment_annotator_idx")]

    def __str__(self) -> str:
        return f"{self.item} for {self.annotator} ({self.state})"


# --- labels -----------------------------------------------------------------------------------
# The rules (what a schema may say, which values fit a question, how anchors follow edits) are
# in editor/labels.py and editor/labels/annotations.py; docs/labels.md explains the decisions.


class LabelSchemaQuerySet(models.QuerySet):
    def active(self) -> LabelSchemaQuerySet:
        return self.filter(archived_at__isnull=True)

    def archived(self) -> LabelSchemaQuerySet:
        return self.filter(archived_at__isnull=False)

    def with_current_version(self) -> LabelSchemaQuerySet:
        return self.select_related("current_version", "current_version__created_by")


class LabelSchema(models.Model):
    """A named set of questions of a dataset, written by its curators.

    Its content lives in versions (``LabelSchemaVersion``), never rewritten: a change makes a
    new one and becomes ``current_version``; answers keep the version they were given under.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="label_schemas")
    name = models.CharField(max_length=200)
    # Set in the transaction that creates the first version; null only inside it.
    current_version = models.OneToOneField(
        "LabelSchemaVersion", on_delete=models.RESTRICT, null=True, related_name="+"
    )
    archived_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = LabelSchemaQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="label_schema_unique_name")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None


class LabelSchemaVersion(models.Model):
    """One version of a schema: its questions (as ``editor.labels.SchemaDefinition`` checks
    and normalizes them) and its instructions (markdown, rendered by the UI)."""

    schema = models.ForeignKey(LabelSchema, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    instructions = models.TextField(blank=True)
    questions = models.JSONField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["schema", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["schema", "number"], name="label_schema_version_unique_number"
            )
        ]

    def __str__(self) -> str:
        return f"{self.schema_id} v{self.number}"


class AnnotationState(models.TextChoices):
    DRAFT = "draft", "Draft"
    SUBMITTED = "submitted", "Submitted"


class AnchorState(models.TextChoices):
    # Where a message or span annotation points after edits (editor.labels.annotations.follow_edit).
    OK = "ok", "Anchored"
    FLAGGED = "flagged", "Flagged for review"  # its text changed: offsets kept, to be checked
    ORPHANED = "orphaned", "Orphaned"  # its message was deleted


class AnnotationQuerySet(models.QuerySet):
    def readable_by(self, user, dataset: Dataset) -> AnnotationQuerySet:
        """Everyone's for reviewers and curators of ``dataset``, one's own for annotators,
        none for anyone else."""
        if dataset.can_review(user):
            return self
        if dataset.can_edit(user):
            return self.filter(annotator=user)
        return self.none()

    def anchored(self) -> AnnotationQuerySet:
        """Annotations that point at a message now (orphans point nowhere)."""
        return self.filter(message_index__isnull=False).exclude(anchor_state=AnchorState.ORPHANED)


class Annotation(models.Model):
    """One annotator's answer to one question of a schema version, about a transcript, one of
    its messages (``message_index``) or a span of that message's logical text
    (``start``/``end``, with the ``text`` they covered when it was given)."""

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="annotations")
    # RESTRICT: no schema change deletes a given answer; only deleting the whole dataset (which
    # takes its transcripts, and so their answers, along) removes a version that has some.
    schema_version = models.ForeignKey(
        LabelSchemaVersion, on_delete=models.RESTRICT, related_name="annotations"
    )
    question = models.CharField(max_length=64)
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotations"
    )
    message_index = models.PositiveIntegerField(null=True, blank=True)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    text = models.TextField(blank=True)
    value = models.JSONField()
    state = models.CharField(
        max_length=16, choices=AnnotationState.choices, default=AnnotationState.DRAFT
    )
    anchor_state = models.CharField(
        max_length=16, choices=AnchorState.choices, default=AnchorState.OK
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    objects = AnnotationQuerySet.as_manager()

    class Meta:
        ordering = ["transcript", "pk"]
        indexes = [
            models.Index(fields=["transcript", "message_index"], name="annotation_message_idx"),
            models.Index(fields=["schema_version", "question"], name="annotation_question_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.question} on {self.transcript_id} by {self.annotator_id}"

    @property
    def target(self) -> str:
        """``transcript``, ``message`` or ``span``: what the annotation is about."""
        if self.start is not None:
            return "span"
        return "message" if self.message_index is not None else "transcript"

    def readable_by(self, user) -> bool:
        """As ``AnnotationQuerySet.readable_by``, for one annotation."""
        dataset = self.transcript.dataset
        return dataset.can_review(user) or (dataset.can_edit(user) and self.annotator_id == user.pk)
