"""Writing transcripts: the one path every change takes (editor, API, import, restore).

* ``save_transcript`` changes a transcript: compare-and-swap on ``version`` (a stale
  version gets ``ConflictError``, never a silent overwrite), messages replaced, diagnostics
  refreshed, a revision written, all in one transaction.
* ``create_transcripts`` adds new ones in bulk (the importer), ``create_transcript`` one.
* ``delete_transcript`` / ``undelete_transcript`` hide and bring back (soft delete), with a
  revision each.

Errors are ``StorageError`` subclasses carrying a stable ``code``, a human ``message`` and the
HTTP ``status`` the API answers with.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import islice
from operator import attrgetter
from typing import Any

from django.db import IntegrityError, connections, models, router, transaction
from django.db.models import F
from django.utils import timezone

from editor import formats, search_index
from editor.annotations import follow_edit
from editor.errors import (
    ConflictError,
    DuplicateExternalId,
    InvalidContent,
    NotAllowed,
    StorageError,
    TranscriptDeleted,
    TranscriptNotFound,
)
from editor.formats.diagnostics import ERROR, WARNING
from editor.formats.model import SEMANTIC_FIELDS, TERMINATORS
from editor.formats.validate import validate
from editor.message_text import Span, locate
from editor.models import (
    SHORT_FIELD_LENGTH,
    Dataset,
    Message,
    Revision,
    RevisionKind,
    Status,
    Transcript,
    contains_values,
)
from editor.storable import check_storable_text
from editor.workflow import status_after_edit

BATCH_SIZE = 500
# Rows in one INSERT statement on SQLite (fewer when it takes fewer parameters).
ROWS_PER_INSERT = 500
TITLE_LENGTH = Transcript._meta.get_field("title").max_length
EXTERNAL_ID_LENGTH = Transcript._meta.get_field("external_id").max_length
NOTE_LENGTH = Revision._meta.get_field("note").max_length
SHORT_MESSAGE_FIELDS = (
    "channel",
    "recipient",
    "name",
    "call_id",
    "intent",
    "content_type",
    "constrain",
)


# --- content: the canonical transcript, its source text and its diagnostics ---------------


@dataclass
class TranscriptContent:
    """What a transcript holds, computed before anything is written.

    ``canonical`` is the truth stored in the Message rows; ``source_text`` is the text in
    ``canonical.spec`` with its layout; ``source_is_exact`` says whether that text parses
    back to exactly ``canonical``.
    """

    canonical: formats.Transcript
    source_text: str
    source_is_exact: bool
    diagnostics: list[dict] = field(default_factory=list)

    @property
    def spec(self) -> str:
        return self.canonical.spec

    @property
    def error_count(self) -> int:
        return sum(1 for d in self.diagnostics if d["severity"] == ERROR)

    @property
    def warning_count(self) -> int:
        return sum(1 for d in self.diagnostics if d["severity"] == WARNING)

    @classmethod
    def from_text(cls, text: str, spec: str | None = None) -> TranscriptContent:
        """Parse ``text`` (spec detected when not given); parse errors become diagnostics."""
        if spec is None:
            spec = formats.detect(text)
            if spec is None:
                raise InvalidContent(
                    "The spec of the text could not be detected; name it explicitly.",
                    code="undetectable-spec",
                )
        _check_spec(spec)
        result = formats.parse(text, spec)
        return cls(
            canonical=result.transcript,
            source_text=text,
            source_is_exact=True,
            diagnostics=_diagnostics(result, text, exact=True),
        )

    @classmethod
    def from_canonical(
        cls, canonical: formats.Transcript, *, previous_text: str = "", previous_spec: str = ""
    ) -> TranscriptContent:
        """Write ``canonical`` as text, keeping the bytes of every message it shares with
        ``previous_text`` (same spec): only edited messages get new bytes."""
        _check_spec(canonical.spec)
        canonical = _without_layout(canonical)
        draft = canonical
        if previous_text and previous_spec == canonical.spec:
            old = formats.parse(previous_text, previous_spec).transcript
            draft = formats.Transcript(
                spec=canonical.spec,
                header=canonical.header,
                messages=_reuse_unchanged(old.messages, canonical.messages),
                attrs=canonical.attrs,
                layout=old.layout,
            )
        text = formats.serialize(draft)
        result = formats.parse(text, canonical.spec)
        if result.transcript != canonical and draft is not canonical:
            # The old layout could not carry this edit (a header rewritten, say): write the
            # document afresh rather than store a text that says something else.
            text = formats.serialize(canonical)
            result = formats.parse(text, canonical.spec)
        exact = result.transcript == canonical
        return cls(
            canonical=canonical,
            source_text=text,
            source_is_exact=exact,
            diagnostics=_diagnostics(result, text, exact=exact, canonical=canonical),
        )

    @classmethod
    def of_stored(cls, transcript: Transcript) -> TranscriptContent:
        """A stored transcript's content checked afresh (the validator may know more than when
        it was saved): its exact source text, with positions, else its messages."""
        if transcript.source_is_exact:
            return cls.from_text(transcript.source_text, transcript.spec)
        return cls.from_canonical(transcript.canonical())

    def is_unreadable(self) -> bool:
        """No message could be read and the parser says why (not a transcript at all)."""
        return not self.canonical.messages and self.error_count > 0

    def first_error(self) -> str:
        error = next((d for d in self.diagnostics if d["severity"] == ERROR), None)
        if error is None:
            return ""
        return (
            f"{error['code']} at line {error['line']}, column {error['column']}: {error['message']}"
        )

    def same_as(
        self, transcript: Transcript, stored: Sequence[formats.Message] | None = None
    ) -> bool:
        """True when storing this would not change ``transcript``'s content (``stored``: its
        messages, when the caller has read them already).

        JSON specs are compared by value (re-serialized JSON may differ in whitespace);
        text specs also by their exact source text, since layout is part of what we keep.
        """
        if transcript.spec != self.spec:
            return False
        if self.spec in formats.TEXT_SPECS and transcript.source_text != self.source_text:
            return False
        messages = transcript.canonical().messages if stored is None else stored
        return (
            transcript.header == self.canonical.header
            and transcript.attrs == self.canonical.attrs
            and list(messages) == list(self.canonical.messages)
        )


def _check_spec(spec: str) -> None:
    if spec not in formats.SPEC_IDS:
        raise InvalidContent(
            f"Unknown spec id {spec!r}; expected one of: {', '.join(formats.SPEC_IDS)}.",
            code="unknown-spec",
        )


def _diagnostics(
    result: formats.ParseResult,
    text: str,
    *,
    exact: bool,
    canonical: formats.Transcript | None = None,
) -> list[dict]:
    """Parse diagnostics of ``text`` plus the semantic validator's.

    The validator sees the parsed transcript (positions then point into ``text``) unless the
    text cannot say everything the canonical transcript does; then it checks the canonical
    one, without positions.
    """
    semantic = (
        validate(result.transcript, text=text)
        if exact
        else validate(canonical or result.transcript)
    )
    return [_with_fix_id(d.to_dict()) for d in (*result.diagnostics, *semantic)]


def _with_fix_id(diagnostic: dict) -> dict:
    """Name a diagnostic's quick fix by what it does (its code and edits), so that a client
    can ask for it by id and never gets another fix after the text changed."""
    fix = diagnostic.get("fix")
    if fix is not None:
        what = json.dumps([diagnostic["code"], fix["edits"]], ensure_ascii=False)
        fix["id"] = hashlib.sha256(what.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return diagnostic


def apply_edits(text: str, edits: Sequence[dict]) -> str:
    """``text`` with a quick fix's edits (``{start, end, replacement}``, offsets into
    ``text``) applied; edits never overlap, so applying them from the end keeps offsets."""
    for edit in sorted(edits, key=lambda e: (e["start"], e["end"]), reverse=True):
        start, end = edit["start"], edit["end"]
        if not 0 <= start <= end <= len(text):
            raise InvalidContent("A fix's edit lies outside the text.", code="invalid-fix")
        text = text[:start] + edit["replacement"] + text[end:]
    return text


def _without_layout(canonical: formats.Transcript) -> formats.Transcript:
    """A copy that carries no source bytes: callers' messages are new content."""
    return formats.Transcript.from_dict(canonical.to_dict())


def _reuse_unchanged(
    old: Sequence[formats.Message], new: Sequence[formats.Message]
) -> list[formats.Message]:
    """``new`` with each message equal to an old one replaced by that old one (which still
    carries its source bytes), matched in order so insertions and deletions shift nothing.

    An edited message takes over the layout after the old message in its place (``gap``,
    the text up to the next message); an inserted one copies the gap of the message before
    it, so the document keeps its spacing. Serializers write a message whose fields differ
    from its source's fingerprint afresh, so only those bytes change.
    """
    merged = list(new)
    matcher = difflib.SequenceMatcher(
        None, [m.fingerprint() for m in old], [m.fingerprint() for m in new], autojunk=False
    )
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            merged[b0:b1] = old[a0:a1]
            continue
        for offset in range(b1 - b0):
            if a0 + offset < a1:
                neighbour = old[a0 + offset]
            elif old:
                neighbour = old[max(a1 - 1, 0)]
            else:
                break
            # The neighbour's source tells the serializer the gap is this document's layout;
            # its bytes are not reused, since the fingerprints differ.
            merged[b0 + offset].source = neighbour.source
            merged[b0 + offset].gap = neighbour.gap
    return merged


def canonical_from_input(
    data: formats.Transcript | dict, *, spec: str | None = None
) -> formats.Transcript:
    """A canonical transcript from an object or its JSON dict, with every field checked."""
    if isinstance(data, formats.Transcript):
        data = data.to_dict()
    if not isinstance(data, dict):
        raise InvalidContent("A transcript must be a JSON object.", code="invalid-shape")
    spec = data.get("spec") or spec
    if not isinstance(spec, str):
        raise InvalidContent("The transcript names no spec.", code="unknown-spec")
    _check_spec(spec)
    header = data.get("header") or {}
    attrs = data.get("attrs") or {}
    if not isinstance(header, dict) or not isinstance(attrs, dict):
        raise InvalidContent("header and attrs must be JSON objects.", code="invalid-shape")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise InvalidContent("messages must be a list.", code="invalid-shape")
    return formats.Transcript(
        spec=spec,
        header=header,
        messages=messages_from_input(messages),
        attrs=attrs,
    )


def messages_from_input(items: Iterable[formats.Message | dict]) -> list[formats.Message]:
    """Canonical messages from objects or JSON dicts, refusing wrong types with the index."""
    messages = []
    for index, item in enumerate(items):
        data = item.to_dict() if isinstance(item, formats.Message) else item
        if not isinstance(data, dict):
            raise InvalidContent(f"Message {index} is not an object.", code="invalid-message")
        if not isinstance(data.get("role"), str) or not data["role"]:
            raise InvalidContent(f"Message {index} has no role.", code="invalid-message")
        if not isinstance(data.get("content", ""), str):
            raise InvalidContent(f"Message {index}: content must be text.", code="invalid-message")
        for name in SHORT_MESSAGE_FIELDS:
            if data.get(name) is not None and not isinstance(data[name], str):
                raise InvalidContent(
                    f"Message {index}: {name} must be text or null.", code="invalid-message"
                )
        if data.get("end") not in (*TERMINATORS, None):
            raise InvalidContent(
                f"Message {index}: end must be one of {', '.join(TERMINATORS)} or null.",
                code="invalid-message",
            )
        if not isinstance(data.get("attrs") or {}, dict):
            raise InvalidContent(
                f"Message {index}: attrs must be an object.", code="invalid-message"
            )
        messages.append(formats.Message.from_dict(data))
    return messages


def check_storable(
    content: TranscriptContent | None, *, title: str, metadata: Any, external_id: str
) -> None:
    """Refuse, with a clear error, what the database would reject or cut.

    PostgreSQL stores neither NUL characters nor lone surrogates in text or JSON; SQLite
    would, but the two databases must accept the same data.
    """
    if not isinstance(metadata, dict):
        raise InvalidContent("metadata must be a JSON object.", code="invalid-metadata")
    if len(title) > TITLE_LENGTH:
        raise InvalidContent(
            f"The title is longer than {TITLE_LENGTH} characters.", code="field-too-long"
        )
    if len(external_id) > EXTERNAL_ID_LENGTH:
        raise InvalidContent(
            f"The id is longer than {EXTERNAL_ID_LENGTH} characters.", code="field-too-long"
        )
    check_storable_text(metadata, "metadata")
    _check_depth(metadata, "metadata")
    if content is not None:
        for index, message in enumerate(content.canonical.messages):
            for name in ("role", *SHORT_MESSAGE_FIELDS):
                value = getattr(message, name)
                if value is not None and len(value) > SHORT_FIELD_LENGTH:
                    raise InvalidContent(
                        f"Message {index}: {name} is longer than {SHORT_FIELD_LENGTH} characters.",
                        code="field-too-long",
                    )
        # Before the title: a title taken from the first user message shares its characters,
        # and the error should point at the text the user has to fix.
        check_storable_text(content.source_text, "the source text")
        check_storable_text(_canonical_values(content.canonical), "the transcript")
    check_storable_text(title, "the title")
    check_storable_text(external_id, "the id")


# A message's semantic fields, read in one C call.
_semantic_values = attrgetter(*SEMANTIC_FIELDS)


def _canonical_values(canonical: formats.Transcript) -> list:
    """What ``canonical.to_dict()`` holds, without building it (a tenth of an import did):
    the header, the document's attrs and every message's fields, as nested values."""
    return [canonical.header, canonical.attrs, *map(_semantic_values, canonical.messages)]


def check_note(note: str) -> None:
    """Refuse a revision note the database would reject: too long for its column (PostgreSQL
    refuses, SQLite would keep it) or not storable text."""
    if len(note) > NOTE_LENGTH:
        raise InvalidContent(
            f"The note is longer than {NOTE_LENGTH} characters.", code="field-too-long"
        )
    check_storable_text(note, "the note")


def _check_depth(value: Any, where: str) -> None:
    """No deeper nesting than the JSON readers accept: a value stored deeper could be written
    but never read back. (Parsed transcripts are bounded by their readers; metadata is not.)"""
    level = [value]
    for _ in range(formats.MAX_JSON_DEPTH):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return
    raise InvalidContent(
        f"{where} is nested deeper than {formats.MAX_JSON_DEPTH} levels.", code="too-deep"
    )


# --- snapshots ------------------------------------------------------------------------------


def snapshot(transcript: Transcript) -> dict:
    """Everything needed to show, diff and restore ``transcript`` as it is now."""
    return {
        "title": transcript.title,
        "metadata": transcript.metadata,
        "source_text": transcript.source_text,
        "transcript": transcript.canonical().to_dict(),
    }


def stored_snapshot(transcript: Transcript) -> dict:
    """``snapshot`` as a revision stores it: see ``Revision.full_snapshot``."""
    if transcript.source_is_exact:
        return _compact(
            transcript.title, transcript.metadata, transcript.source_text, transcript.spec
        )
    return snapshot(transcript)


def _compact(title: str, metadata: dict, source_text: str, spec: str) -> dict:
    # The source text parses to exactly the canonical transcript: storing that too would
    # keep every message twice in every revision (most of a database's size).
    return {"title": title, "metadata": metadata, "source_text": source_text, "spec": spec}


# --- creating -----------------------------------------------------------------------------


@dataclass
class NewTranscript:
    content: TranscriptContent
    title: str = ""
    metadata: dict = field(default_factory=dict)
    external_id: str = ""
    status: str = Status.DRAFT


def create_transcripts(
    dataset: Dataset,
    new: Sequence[NewTranscript],
    *,
    author,
    kind: str = RevisionKind.CREATE,
    note: str = "",
    checked: bool = False,
) -> list[Transcript]:
    """Add transcripts in bulk: rows, messages and first revisions, a few queries per batch.

    ``checked``: the caller already ran ``check_storable`` on every item (the importer does,
    to report each item), so it is not run twice.
    """
    check_note(note)
    if not checked:
        for item in new:
            check_storable(
                item.content,
                title=item.title,
                metadata=item.metadata,
                external_id=item.external_id,
            )
    transcripts = [
        Transcript(
            dataset=dataset,
            title=item.title,
            external_id=item.external_id,
            metadata=item.metadata,
            status=item.status,
            created_by=author,
            updated_by=author,
            **_content_fields(item.content),
        )
        for item in new
    ]
    with transaction.atomic():
        _insert_objects(transcripts)
        _insert_messages(
            (
                transcript.pk,
                item.content.spec,
                item.content.canonical.messages,
                item.content.source_text,
            )
            for transcript, item in zip(transcripts, new, strict=True)
        )
        now = timezone.now()
        author_id = None if author is None else author.pk
        _insert_rows(
            Revision,
            ("transcript", "number", "kind", "author", "note", "snapshot", "created_at"),
            (
                (
                    transcript.pk,
                    transcript.version,
                    kind,
                    author_id,
                    note,
                    Revision.CURRENT,
                    now,
                )
                for transcript, item in zip(transcripts, new, strict=True)
            ),
        )
    return transcripts


# The fields of a Message row, in the order _insert_messages writes them.
# How a row holds its content: the text, or where it is in the source text (``Span``).
CONTENT_COLUMNS = ("stored_content", "content_start", "content_end", "content_escaped")
MESSAGE_COLUMNS = (
    "transcript",
    "index",
    "role",
    *CONTENT_COLUMNS,
    *SEMANTIC_FIELDS[2:],
    "end_user_text",
)


def _keeps_text_once(connection) -> bool:
    """Whether message rows on ``connection`` say where their content is in the source text
    rather than hold it (``editor.message_text``): on SQLite. PostgreSQL's full-text indexes
    are expressions over the rows' content, which must then be there (docs/storage.md)."""
    return connection.vendor == "sqlite"


def _insert_messages(
    transcripts: Iterable[tuple[int, str, Sequence[formats.Message], str]], first_index: int = 0
) -> None:
    """The Message rows of ``(transcript pk, spec, canonical messages, source text)``, as
    ``Message.from_canonical`` fills them (no content is "", attrs a dict), with what the
    end user sees of each (``Message.end_user_text``); the first message of each gets index
    ``first_index``. On SQLite a content found in the source text is stored as where it is
    there, and the messages go into the search index (``editor.search_index``): this is the
    one place message rows are inserted."""
    connection = connections[router.db_for_write(Message)]
    once = _keeps_text_once(connection)
    rows, texts = [], []
    # Inline, one loop: this runs for every imported message (a call each cost 0.1 s an import).
    for transcript_id, spec, messages, source_text in transcripts:
        spans = locate(source_text, [m.content or "" for m in messages]) if once else None
        for offset, message in enumerate(messages):
            content = message.content or ""
            span = spans and spans[offset]
            end_user_text = Message.end_user_text_of(spec, message)
            if span is None:
                stored, start, end, escaped = content, None, None, None
            else:
                stored, (start, end, escaped) = "", span
            rows.append(
                (
                    transcript_id,
                    first_index + offset,
                    message.role,
                    stored,
                    start,
                    end,
                    escaped,
                    message.channel,
                    message.recipient,
                    message.name,
                    message.call_id,
                    message.intent,
                    message.content_type,
                    message.constrain,
                    message.end,
                    dict(message.attrs or {}),
                    end_user_text,
                )
            )
            if once:
                texts.append((content, end_user_text))
    pks = _insert_rows(Message, MESSAGE_COLUMNS, rows, with_pks=once)
    if once:
        search_index.add(
            connection,
            (
                (pk, content, end_user_text)
                for pk, (content, end_user_text) in zip(pks, texts, strict=True)
            ),
        )


def _insert_objects(objects: list[models.Model]) -> None:
    """INSERT new model instances (of one model) as ``bulk_create`` does, their pks set, but
    as ``_insert_rows`` writes rows (``bulk_create`` compiled every value through the ORM:
    2 s of a 10,000-transcript import on SQLite, and it quoted every value into the SQL text
    on PostgreSQL). Each field's ``pre_save`` value is stored, except that auto_now dates are
    one "now" for the whole lot (rows written together; prepared once, not once a row)."""
    if not objects:
        return
    model = type(objects[0])
    database = router.db_for_write(model)
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    now = timezone.now()
    for f in fields:
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            for obj in objects:
                setattr(obj, f.attname, now)
    saved = [
        attrgetter(f.attname)
        if isinstance(f, models.DateTimeField)
        else partial(f.pre_save, add=True)
        for f in fields
    ]
    rows = (tuple(value_of(obj) for value_of in saved) for obj in objects)
    pks = _insert_rows(model, [f.name for f in fields], rows, with_pks=True)
    for obj, pk in zip(objects, pks, strict=True):
        obj.pk = pk
        obj._state.adding = False
        obj._state.db = database


def _insert_rows(
    model: type[models.Model], names: Sequence[str], rows: Iterable[tuple], with_pks: bool = False
) -> list:
    """INSERT ``rows`` (values in the order of the fields ``names``); with ``with_pks``,
    the primary keys the rows were given, in order (as ``bulk_create`` reads them back).

    ``bulk_create`` compiles every value of every row through the ORM: that was 70 % of an
    import (measured). Here text, numbers, booleans and foreign keys (the pk) go to the
    driver as they are, which is what their fields' preparation gives for those values; the
    other fields (JSON, dates, the compressed source text) are prepared by the field itself
    for this connection, as the ORM would: a JSON string on SQLite, a Jsonb adapter on
    PostgreSQL. No signals, as with bulk_create.
    """
    connection = connections[router.db_for_write(model)]
    fields = [model._meta.get_field(name) for name in names]
    plain = (
        models.CharField,
        models.TextField,
        models.IntegerField,
        models.BooleanField,
        models.ForeignKey,
    )
    prepare = [
        (i, _preparer(f, connection)) for i, f in enumerate(fields) if not isinstance(f, plain)
    ]
    if prepare:
        rows = (_prepared(row, prepare) for row in rows)
    if connection.vendor == "postgresql":
        return _copy_rows(connection, model, fields, rows, with_pks)
    return _insert_statements(connection, model, fields, rows, with_pks)


def _copy_rows(connection, model, fields, rows: Iterable[tuple], with_pks: bool) -> list:
    """PostgreSQL: the rows streamed through one ``COPY … FROM STDIN``, its fastest way in.

    ``executemany`` cost twice as long: Django's cursor binds values on the client, quoting
    each into the SQL text the server then parses, row by row (17 s of a 30 s import of
    10,000 transcripts, measured). COPY returns nothing, so the primary keys are taken
    from the table's sequence first. The COPY goes past Django's cursor: its errors are made
    Django's (an IntegrityError the importer catches), and it is recorded with the other
    queries while they are (``DEBUG``, a test counting them)."""
    quote = connection.ops.quote_name
    columns = [quote(f.column) for f in fields]
    pks: list[int] = []
    if with_pks:
        rows = list(rows)
        pks = _reserve_pks(connection, model, len(rows))
        rows = ((pk, *row) for pk, row in zip(pks, rows, strict=True))
        columns.insert(0, quote(model._meta.pk.column))
    sql = "COPY {} ({}) FROM STDIN".format(quote(model._meta.db_table), ", ".join(columns))
    started = time.monotonic()
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(sql) as copy,
    ):
        for row in rows:
            copy.write_row(row)
    if connection.queries_logged:
        connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})
    return pks


def _reserve_pks(connection, model: type[models.Model], count: int) -> list[int]:
    """``count`` values of the sequence behind ``model``'s primary key, as the rows would
    have taken them one by one (the pk column is an identity column)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [connection.ops.quote_name(model._meta.db_table), model._meta.pk.column, count],
        )
        return [pk for (pk,) in cursor.fetchall()]


def _insert_statements(connection, model, fields, rows: Iterable[tuple], with_pks: bool) -> list:
    """SQLite: ``ROWS_PER_INSERT`` rows a statement (one ``executemany`` of one-row
    statements was slower still, measured once messages stopped having an insert trigger;
    with the trigger, one row a statement spent 6.4 s indexing 100,000 messages)."""
    quote = connection.ops.quote_name
    head = "INSERT INTO {} ({}) VALUES ".format(
        quote(model._meta.db_table), ", ".join(quote(f.column) for f in fields)
    )
    row_sql = "({})".format(", ".join(["%s"] * len(fields)))
    tail = f" RETURNING {quote(model._meta.pk.column)}" if with_pks else ""
    per_statement = max(1, min(ROWS_PER_INSERT, _sqlite_max_parameters(connection) // len(fields)))
    full_sql = head + ", ".join([row_sql] * per_statement) + tail
    rows = iter(rows)
    pks: list = []
    with connection.cursor() as cursor:
        execute = _statement_runner(connection, cursor, full_sql)
        while batch := list(islice(rows, per_statement)):
            sql = (
                full_sql
                if len(batch) == per_statement
                else head + ", ".join([row_sql] * len(batch)) + tail
            )
            execute(sql, [value for row in batch for value in row])
            if with_pks:
                pks.extend(value for (value,) in cursor.fetchall())
    return pks


def _statement_runner(connection, cursor, full_sql: str):
    """SQLite: run statements written with ``%s`` as Django's cursor would, but with the
    full batch's SQL turned into ``?`` placeholders once, not once a statement (Django's
    rewriting of a 500-row statement's SQL was 0.3 s of a 10,000-transcript import). While
    queries are being recorded (``DEBUG``, a test counting them) Django's cursor runs them,
    so that they are recorded as any other."""
    if connection.queries_logged:
        return cursor.execute
    sqlite_cursor = cursor.cursor
    converted = {full_sql: sqlite_cursor.convert_query(full_sql)}

    def execute(sql: str, params: list) -> None:
        if sql not in converted:
            converted[sql] = sqlite_cursor.convert_query(sql)
        with connection.wrap_database_errors:
            sqlite3.Cursor.execute(sqlite_cursor, converted[sql], params)

    return execute


def _sqlite_max_parameters(connection) -> int:
    """The parameters one statement may take on this SQLite connection. Django assumes 999
    (SQLite's default before 3.32): 71 message rows a statement, 1,400 statements (each
    compiled by SQLite, and its SQL rewritten by Django) for 10,000 transcripts."""
    connection.ensure_connection()
    return connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)


def _preparer(field: models.Field, connection):
    """``field``'s preparation of a value for ``connection``; an empty JSON object (most
    messages' attrs, most metadata) prepared once, not once a row."""
    if isinstance(field, models.DateTimeField):
        # A batch's rows share their dates (``_insert_objects``, a revision's ``now``).
        return lru_cache(maxsize=8)(partial(field.get_db_prep_save, connection=connection))
    if not isinstance(field, models.JSONField):
        return partial(field.get_db_prep_save, connection=connection)
    empty = field.get_db_prep_save({}, connection)
    return lambda value: empty if value == {} else field.get_db_prep_save(value, connection)


def _prepared(row: tuple, prepare) -> tuple:
    values = list(row)
    for i, prep in prepare:
        values[i] = prep(values[i])
    return tuple(values)


def create_transcript(
    dataset: Dataset,
    *,
    author,
    text: str | None = None,
    canonical: formats.Transcript | dict | None = None,
    spec: str | None = None,
    title: str = "",
    metadata: dict | None = None,
    external_id: str = "",
    note: str = "",
) -> Transcript:
    """Add one transcript from ``text`` (spec detected unless given) or a canonical one."""
    _require(
        dataset.can_edit(author) if author is not None else True,
        "You may not add transcripts to this dataset.",
    )
    if (text is None) == (canonical is None):
        raise InvalidContent("Give either text or canonical.", code="invalid-request")
    if text is not None:
        content = TranscriptContent.from_text(text, spec)
    else:
        content = TranscriptContent.from_canonical(canonical_from_input(canonical, spec=spec))
    new = NewTranscript(content, title=title, metadata=metadata or {}, external_id=external_id)
    # Checked before the id is looked up: PostgreSQL cannot even compare an unstorable id.
    check_storable(content, title=new.title, metadata=new.metadata, external_id=external_id)
    if external_id and _has_external_id(dataset, external_id):
        raise DuplicateExternalId(external_id)
    try:
        return create_transcripts(dataset, [new], author=author, note=note, checked=True)[0]
    except IntegrityError:
        # Another request created the same id between the look-up and the insert.
        if external_id and _has_external_id(dataset, external_id):
            raise DuplicateExternalId(external_id) from None
        raise


def _has_external_id(dataset: Dataset, external_id: str) -> bool:
    # Deleted transcripts keep their id (undeleting must not collide), so they count too.
    return Transcript.all_objects.filter(dataset=dataset, external_id=external_id).exists()


def _content_fields(content: TranscriptContent) -> dict:
    return {
        "spec": content.spec,
        "header": content.canonical.header,
        "attrs": content.canonical.attrs,
        "source_text": content.source_text,
        "source_is_exact": content.source_is_exact,
        "diagnostics": content.diagnostics,
        "error_count": content.error_count,
        "warning_count": content.warning_count,
        "message_count": len(content.canonical.messages),
        **contains_values(content.canonical.messages),
    }


# --- changing ------------------------------------------------------------------------------


def save_transcript(
    transcript: Transcript,
    *,
    expected_version: int,
    author,
    text: str | None = None,
    spec: str | None = None,
    canonical: formats.Transcript | dict | None = None,
    messages: Sequence[formats.Message | dict] | None = None,
    title: str | None = None,
    metadata: dict | None = None,
    note: str = "",
    kind: str = RevisionKind.EDIT,
    status: str | None = None,
) -> Transcript:
    """Change a transcript, if it is still at ``expected_version``; return it as saved.

    Give at most one of ``text`` (parsed in ``spec``, the transcript's own by default; the
    text is kept byte for byte), ``canonical`` (a whole canonical transcript) or
    ``messages`` (new messages, header kept); ``title`` / ``metadata`` replace theirs when
    given; so does ``status``. Only the bytes of edited messages change in the stored source
    text.

    Raises ``ConflictError`` when someone saved in between, ``TranscriptDeleted`` for a
    deleted transcript, ``NotAllowed`` when ``author`` may not edit the dataset (``None`` is
    the system: management commands), ``InvalidContent`` for bad input. Saving what is
    already stored writes nothing and returns the transcript unchanged.
    """
    if sum(x is not None for x in (text, canonical, messages)) > 1:
        raise InvalidContent(
            "Give at most one of text, canonical and messages.", code="invalid-request"
        )
    check_note(note)
    if author is not None:
        _require(
            transcript.dataset.can_edit(author), "You may not edit transcripts of this dataset."
        )
    with transaction.atomic():
        current = _claim(transcript.pk, expected_version)
        if text is not None:
            content = TranscriptContent.from_text(text, spec or current.spec)
        elif canonical is not None or messages is not None:
            wanted = (
                canonical_from_input(canonical, spec=current.spec)
                if canonical is not None
                else formats.Transcript(
                    spec=current.spec,
                    header=current.header,
                    messages=messages_from_input(messages),
                    attrs=current.attrs,
                )
            )
            content = TranscriptContent.from_canonical(
                wanted, previous_text=current.source_text, previous_spec=current.spec
            )
        else:
            content = None
        new_title = current.title if title is None else title
        new_metadata = current.metadata if metadata is None else metadata
        stored = current.messages_at(expected_version) if content is not None else None
        content_changed = content is not None and not content.same_as(current, stored)
        if status is not None:
            new_status = status
        else:
            new_status = status_after_edit(current.status) if content_changed else current.status
        if (
            not content_changed
            and new_title == current.title
            and new_metadata == current.metadata
            and new_status == current.status
        ):
            transaction.set_rollback(True)  # give the claimed version back: nothing happened
            current.version = expected_version
            return current
        content = content if content_changed else None
        check_storable(
            content, title=new_title, metadata=new_metadata, external_id=current.external_id
        )
        return _write(
            current,
            content,
            title=new_title,
            metadata=new_metadata,
            author=author,
            note=note,
            kind=kind,
            status=new_status,
            stored=stored,
        )


# Past this many changed messages of a same-length edit, rewriting the rows from the first
# change on is cheaper than one UPDATE each.
MAX_ROW_UPDATES = 20


def _replace_messages(
    transcript_id: int,
    spec: str,
    old: Sequence[formats.Message],
    new: Sequence[formats.Message],
    *,
    respec: bool,
    old_source: str,
    new_source: str,
) -> None:
    """Make the Message rows of ``transcript_id`` say ``new`` (in ``new_source``), rewriting
    only what changed, without reading them (``old``: what they say now, in ``old_source``);
    ``respec``: the spec changed, and what the end user sees of each message with it (every
    row is rewritten).

    An edit of message 1,900 of 2,000 updates one row; an insertion or a deletion rewrites the
    rows from the first change on (the indexes after it shift). Equal means equal canonical
    fields (``formats.Message.__eq__``). On SQLite the rows that stay follow their contents
    in the new source text (``_move_spans``) and the search index follows the rows.
    """
    first = 0
    while not respec and first < min(len(old), len(new)) and old[first] == new[first]:
        first += 1
    changed = [i for i in range(first, len(new)) if i >= len(old) or old[i] != new[i]]
    in_place = not respec and len(old) == len(new) and len(changed) <= MAX_ROW_UPDATES
    connection = connections[router.db_for_write(Message)]
    once = _keeps_text_once(connection)
    rewritten = changed if in_place else range(first, len(old))
    if once:
        _move_spans(
            connection,
            transcript_id,
            old,
            old_source,
            new_source,
            below=len(new) if in_place else first,
            rewritten=changed if in_place else (),
        )
        search_index.remove_stored(
            connection, transcript_id, {i: old[i].content or "" for i in rewritten}
        )
    if in_place:
        spans = locate(new_source, [new[i].content or "" for i in changed]) if once else None
        for n, index in enumerate(changed):
            _update_row(transcript_id, spec, index, new[index], spans and spans[n])
        if once:
            search_index.add_stored(
                connection, transcript_id, {i: new[i].content or "" for i in changed}
            )
        return
    Message.objects.filter(transcript_id=transcript_id, index__gte=first).delete()
    _insert_messages([(transcript_id, spec, new[first:], new_source)], first_index=first)


def _update_row(
    transcript_id: int, spec: str, index: int, message: formats.Message, span: Span | None
) -> None:
    values = {name: getattr(message, name) for name in SEMANTIC_FIELDS if name != "content"}
    values.update(
        _stored_content(message.content or "", span),
        attrs=dict(message.attrs or {}),
        end_user_text=Message.end_user_text_of(spec, message),
    )
    Message.objects.filter(transcript_id=transcript_id, index=index).update(**values)


def _stored_content(content: str, span: Span | None) -> dict:
    """``CONTENT_COLUMNS`` of a row whose content is ``content``, found at ``span``."""
    return dict(zip(CONTENT_COLUMNS, _content_values(content, span), strict=True))


def _content_values(content: str, span: Span | None) -> tuple:
    return (content, None, None, None) if span is None else ("", *span)


def _move_spans(
    connection,
    transcript_id: int,
    old: Sequence[formats.Message],
    old_source: str,
    new_source: str,
    *,
    below: int,
    rewritten: Sequence[int],
) -> None:
    """SQLite: the rows below index ``below`` that stay (not ``rewritten``) follow their
    contents from ``old_source`` into ``new_source``, without being read: the two texts differ
    in one stretch (what is before it and after it is the same), so a span after it moves by
    the difference in length, in one UPDATE, and a span across it is looked for again in the
    new text (or the row keeps its content). Spans before it stay."""
    same_before = _common_prefix(old_source, new_source)
    same_after = _common_suffix(old_source[same_before:], new_source[same_before:])
    if same_before == len(old_source) == len(new_source):
        return
    stretch_end = len(old_source) - same_after
    others = " AND ".join(['"index" != %s'] * len(rewritten))
    # Those across the stretch are taken out first: shifted rows could land in it.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE editor_message SET content_start = NULL, content_end = NULL,"
            ' content_escaped = NULL WHERE transcript_id = %s AND "index" < %s'
            " AND content_start < %s AND content_end > %s"
            + (f" AND {others}" if others else "")
            + ' RETURNING "index"',
            [transcript_id, below, stretch_end, same_before, *rewritten],
        )
        crossing = [index for (index,) in cursor.fetchall()]
    shift = len(new_source) - len(old_source)
    if shift:
        Message.objects.filter(
            transcript_id=transcript_id, index__lt=below, content_start__gte=stretch_end
        ).exclude(index__in=rewritten).update(
            content_start=F("content_start") + shift, content_end=F("content_end") + shift
        )
    # Found again last (their new spans are not to be shifted), in order, in one pass over the
    # new text and one statement: a document written afresh has every row across the stretch.
    crossing.sort()
    contents = [old[index].content or "" for index in crossing]
    spans = locate(new_source, contents)
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE editor_message SET content = %s, content_start = %s, content_end = %s,"
            ' content_escaped = %s WHERE transcript_id = %s AND "index" = %s',
            [
                (*_content_values(content, span), transcript_id, index)
                for index, content, span in zip(crossing, contents, spans, strict=True)
            ],
        )


# How much of two texts is compared at a time when looking for where they start to differ.
_COMPARED = 4096


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start (C-speed comparisons of
    blocks, then halving into the block that differs)."""
    start, limit = 0, min(len(a), len(b))
    while (
        start + _COMPARED <= limit and a[start : start + _COMPARED] == b[start : start + _COMPARED]
    ):
        start += _COMPARED
    low, high = start, min(start + _COMPARED, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[start:middle] == b[start:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their end."""
    return _common_prefix(a[::-1], b[::-1])


def _claim(pk: int, expected_version: int) -> Transcript:
    """Move the row from ``expected_version`` to the next one, or raise: the compare-and-swap.

    The conditional UPDATE is atomic in the database (and holds the row lock until the
    transaction ends), so two saves from the same version cannot both pass.
    """
    claimed = Transcript.all_objects.filter(
        pk=pk, version=expected_version, deleted_at__isnull=True
    ).update(version=F("version") + 1)  # not expected_version + 1: that may overflow the column
    if not claimed:
        raise refusal(pk, expected_version)
    return Transcript.all_objects.select_related("dataset").get(pk=pk)


def refusal(pk: int, expected_version: int) -> StorageError:
    """Why transcript ``pk`` cannot be changed from ``expected_version``: gone, deleted, or
    changed since (a conflict carrying the current state)."""
    current = Transcript.all_objects.with_messages().filter(pk=pk).first()
    if current is None:
        return TranscriptNotFound("The transcript does not exist.")
    if current.is_deleted:
        return TranscriptDeleted("The transcript was deleted; undelete it first.")
    return ConflictError(
        expected_version=expected_version,
        current_version=current.version,
        current=snapshot(current),
    )


def _write(
    current: Transcript,
    content: TranscriptContent | None,
    *,
    title: str,
    metadata: dict,
    author,
    note: str,
    kind: str,
    deleted: bool | None = None,
    status: str | None = None,
    stored: Sequence[formats.Message] | None = None,
) -> Transcript:
    """Store the new state of a claimed transcript (``content`` None: messages unchanged;
    ``stored``: its messages as they are now, when the caller read them)."""
    # The revision that said "the transcript as it is now" gets its copy before anything
    # changes; the new one says it from here on (``Revision.CURRENT``).
    Revision.objects.filter(
        transcript_id=current.pk, number=current.version - 1, snapshot=Revision.CURRENT
    ).update(snapshot=stored_snapshot(current))
    now = timezone.now()
    changed = ["title", "metadata", "updated_at", "updated_by"]
    if status is not None:
        current.status = status
        changed.append("status")
    current.title = title
    current.metadata = metadata
    current.updated_by = author
    current.updated_at = now
    if deleted is not None:
        current.deleted_at = now if deleted else None
        current.deleted_by = author if deleted else None
        changed += ["deleted_at", "deleted_by"]
    if content is not None:
        # What the end user sees of a message depends on the spec: a new spec rewrites them all.
        respec = content.spec != current.spec
        old_source = current.source_text  # where the rows say their contents are, until now
        for name, value in _content_fields(content).items():
            setattr(current, name, value)
        changed += list(_content_fields(content))
        old_messages = current.stored_messages() if stored is None else stored
        _replace_messages(
            current.pk,
            content.spec,
            old_messages,
            content.canonical.messages,
            respec=respec,
            old_source=old_source,
            new_source=content.source_text,
        )
        # Message and span annotations follow their messages (or are flagged, never lost).
        follow_edit(current.pk, old_messages, content.canonical.messages, content.spec)
        # Drop any prefetched rows so that canonical() reads the new ones.
        getattr(current, "_prefetched_objects_cache", {}).pop("messages", None)
        current.wrote_messages(content.canonical.messages)
    current.save(update_fields=changed)
    Revision.objects.create(
        transcript=current,
        number=current.version,
        kind=kind,
        author=author,
        note=note,
        snapshot=Revision.CURRENT,
    )
    return current


# --- soft delete --------------------------------------------------------------------------


def delete_transcript(
    transcript: Transcript, *, author, expected_version: int | None = None, note: str = ""
) -> Transcript:
    """Hide a transcript (reversible: ``undelete_transcript``); writes a revision.

    Editors of the dataset may delete; ``expected_version`` guards against deleting a
    version the user has not seen.
    """
    if author is not None:
        _require(
            transcript.dataset.can_edit(author), "You may not delete transcripts of this dataset."
        )
    check_note(note)
    with transaction.atomic():
        current = _claim(
            transcript.pk, transcript.version if expected_version is None else expected_version
        )
        return _write(
            current,
            None,
            title=current.title,
            metadata=current.metadata,
            author=author,
            note=note,
            kind=RevisionKind.DELETE,
            deleted=True,
        )


def undelete_transcript(transcript: Transcript, *, author, note: str = "") -> Transcript:
    """Bring a deleted transcript back; only a curator of its dataset may."""
    if author is not None:
        _require(transcript.dataset.can_curate(author), "Only a curator may undelete transcripts.")
    check_note(note)
    with transaction.atomic():
        # The same compare-and-swap as _claim, on a deleted row.
        claimed = Transcript.all_objects.filter(pk=transcript.pk, deleted_at__isnull=False).update(
            version=F("version") + 1
        )
        if not claimed:
            raise StorageError("The transcript is not deleted.", code="not-deleted")
        current = Transcript.all_objects.with_messages().get(pk=transcript.pk)
        return _write(
            current,
            None,
            title=current.title,
            metadata=current.metadata,
            author=author,
            note=note,
            kind=RevisionKind.UNDELETE,
            deleted=False,
        )


def _require(allowed: bool, message: str) -> None:
    if not allowed:
        raise NotAllowed(message)
