"""A transcript's message rows: inserted in bulk, and after an edit only the rows that
changed rewritten (with the spans of the text they point into moved)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from django.db import connections, router
from django.db.models import F
from django.db.models.signals import pre_delete

from editor import formats, search
from editor.db.bulk_insert import insert_rows, value_preparer
from editor.db.message_text import Span, locate
from editor.formats.model import SCALAR_FIELDS, SEMANTIC_FIELDS
from editor.models import (
    Message,
    Transcript,
)

# The fields of a Message row, in the order insert_messages writes them.
# How a row holds its content: the text, or where it is in the source text (``Span``).
CONTENT_COLUMNS = ("stored_content", "content_start", "content_end", "content_escaped")


MESSAGE_COLUMNS = (
    "transcript",
    "index",
    "role",
    *CONTENT_COLUMNS,
    *SCALAR_FIELDS,
    "attrs",
    "end_user_text",
)


def insert_messages(
    transcripts: Iterable[tuple[int, str, Sequence[formats.Message], str]], first_index: int = 0
) -> None:
    """The Message rows of ``(transcript pk, spec, canonical messages, source text)``
    (``message_values``); the first message of each gets index ``first_index``."""
    spans = rows_point_into_source()
    write_message_rows(
        (transcript_id, *message_values(spec, messages, source_text, spans, first_index))
        for transcript_id, spec, messages, source_text in transcripts
    )


def rows_point_into_source() -> bool:
    """Whether message rows may hold where their content is in the source text instead of the
    content: where the app writes the search index itself (docs/storage.md)."""
    return search.backend(router.db_for_write(Message)).writes_own_index


def message_values(
    spec: str,
    messages: Sequence[formats.Message],
    source_text: str,
    spans: bool,
    first_index: int = 0,
) -> tuple[list[tuple], list[tuple[str, str | None]]]:
    """One transcript's Message rows (``MESSAGE_COLUMNS`` but the transcript's id: plain
    values, which another process may make; ``editor.importing.preparing``), as
    ``Message.from_canonical`` fills them (no content is "", attrs a dict, here as the JSON
    text the database takes), with what the end user sees of each
    (``Message.end_user_text``); and, with ``spans`` (where the app writes
    the search index, rows may point into the source text: docs/storage.md), each content
    found in ``source_text`` stored as where it is there, and each message's
    ``(content, end user text)`` for the index ([] otherwise)."""
    located = locate(source_text, [m.content or "" for m in messages]) if spans else None
    attrs_value = _attrs_preparer(router.db_for_write(Message))
    rows, texts = [], []
    # Inline, one loop: this runs for every imported message (a function call each is a
    # visible part of an import).
    for offset, message in enumerate(messages):
        content = message.content or ""
        span = located and located[offset]
        end_user_text = Message.end_user_text_of(spec, message)
        if span is None:
            stored, start, end, escaped = content, None, None, None
        else:
            stored, (start, end, escaped) = "", span
        rows.append(
            (
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
                attrs_value(dict(message.attrs or {})),
                end_user_text,
            )
        )
        if spans:
            texts.append((content, end_user_text))
    return rows, texts


@cache
def _attrs_preparer(alias: str):
    """A row's attrs as the database takes them (JSON text), made with the row
    (``message_values``, maybe in the import helper) rather than when it is written: the
    writer then sends its rows as they are. The connection only names the dialect."""
    return value_preparer(Message._meta.get_field("attrs"), connections[alias])


def write_message_rows(
    transcripts: Iterable[tuple[int, list[tuple], list[tuple[str, str | None]]]],
) -> None:
    """INSERT the rows ``message_values`` made, ``(transcript pk, rows, texts)`` each, and
    their texts into the search index where the app keeps it: the one place message rows
    are inserted."""
    alias = router.db_for_write(Message)
    connection, searched = connections[alias], search.backend(alias)
    rows, texts = [], []
    for transcript_id, values, indexed in transcripts:
        rows.extend((transcript_id, *row) for row in values)
        texts.extend(indexed)
    pks = insert_rows(
        Message, MESSAGE_COLUMNS, rows, with_pks=searched.writes_own_index, prepared=("attrs",)
    )
    if searched.writes_own_index:
        searched.add(
            connection,
            (
                (pk, content, end_user_text)
                for pk, (content, end_user_text) in zip(pks, texts, strict=True)
            ),
        )


# Past this many changed messages of a same-length edit, rewriting the rows from the first
# change on is cheaper than one UPDATE each.
MAX_ROW_UPDATES = 20


def replace_messages(
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
    alias = router.db_for_write(Message)
    connection, searched = connections[alias], search.backend(alias)
    once = searched.writes_own_index
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
        searched.remove_stored(
            connection, transcript_id, {i: old[i].content or "" for i in rewritten}
        )
    if in_place:
        spans = locate(new_source, [new[i].content or "" for i in changed]) if once else None
        for n, index in enumerate(changed):
            _update_row(transcript_id, spec, index, new[index], spans and spans[n])
        if once:
            searched.add_stored(
                connection, transcript_id, {i: new[i].content or "" for i in changed}
            )
        return
    Message.objects.filter(transcript_id=transcript_id, index__gte=first).delete()
    insert_messages([(transcript_id, spec, new[first:], new_source)], first_index=first)


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


def connect() -> None:
    """Take a transcript's messages out of the index when it is deleted for good (the admin,
    a dataset deleted; the app itself only soft-deletes)."""
    pre_delete.connect(_transcript_deleted, sender=Transcript, dispatch_uid="search-index")


def _transcript_deleted(sender, instance, using, **kwargs) -> None:
    unindex(using, [instance])


def unindex(using: str, transcripts: list[Transcript]) -> None:
    """Take the messages of ``transcripts`` (about to be deleted for good) out of the search
    index, where the database does not keep it itself: one statement for them all."""
    searched = search.backend(using)
    if not searched.writes_own_index or not transcripts:
        return
    by_id = {transcript.pk: transcript for transcript in transcripts}
    rows = (
        Message.objects.using(using)
        .filter(transcript__in=list(by_id))
        .values_list("transcript_id", "pk", "end_user_text", *Message.STORED_FIELDS)
    )
    searched.remove(
        connections[using],
        (
            (pk, Message.canonical_of(stored, by_id[owner]).content or "", end_user_text)
            for owner, pk, end_user_text, *stored in rows
        ),
    )
