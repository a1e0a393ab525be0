"""SQLite's search index (the FTS5 table ``editor_message_search``), kept by
``editor.storage`` as it writes message rows.

The table keeps no text (``content=''``): a row is taken out with a ``delete`` command that
repeats the texts it was put in with, exactly. Message rows may not hold their text either
(``editor.db.message_text``), so no trigger can: storage passes the texts, which it has, and a
transcript deleted for good takes its messages out first
(``editor.storage.message_rows.connect``). A row left in the
index after its message is gone (rows deleted by raw SQL) would find nothing: message ids are
never reused (AUTOINCREMENT) and every search goes through the message rows. PostgreSQL's
search is GIN indexes over the message rows, kept by the database.

Each message is in the index as two texts: what the end user sees of it, and the whole
content when that is not all of it (``Message.end_user_text``; migration 0010).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

TABLE = "editor_message_search"


def texts(content: str, end_user_text: str | None) -> tuple[str, str]:
    """The two texts a message is indexed with."""
    if end_user_text is None:
        return content, ""
    return end_user_text, content


def add(connection, messages: Iterable[tuple[int, str, str | None]]) -> None:
    """Index ``(message id, content, end_user_text)`` rows."""
    _write(connection, f"INSERT INTO {TABLE}(rowid, end_user_text, hidden_text)", messages)


def remove(connection, messages: Iterable[tuple[int, str, str | None]]) -> None:
    """Take ``(message id, content, end_user_text)`` rows out, as they were indexed."""
    _write(
        connection,
        f"INSERT INTO {TABLE}({TABLE}, rowid, end_user_text, hidden_text)",
        messages,
        command="delete",
    )


def remove_stored(connection, transcript_id: int, contents: dict[int, str]) -> None:
    """Take out the messages of ``transcript_id`` at the indexes of ``contents``, whose content
    is (or was) ``contents[index]``: their rows are not read (an edit reads no message row;
    tests/api/test_read_caches.py), the SQL pairs each with its ``end_user_text``."""
    _write_stored(
        connection,
        f"INSERT INTO {TABLE}({TABLE}, rowid, end_user_text, hidden_text) SELECT 'delete', ",
        transcript_id,
        contents,
    )


def add_stored(connection, transcript_id: int, contents: dict[int, str]) -> None:
    """Index the messages of ``transcript_id`` at the indexes of ``contents`` (their content),
    as ``remove_stored`` takes them out."""
    _write_stored(
        connection,
        f"INSERT INTO {TABLE}(rowid, end_user_text, hidden_text) SELECT ",
        transcript_id,
        contents,
    )


def _write_stored(connection, head: str, transcript_id: int, contents: dict[int, str]) -> None:
    if not contents:
        return
    # texts() in SQL, with each content from the JSON list of [index, content] pairs.
    sql = head + (
        "message.id, COALESCE(message.end_user_text, pair.value ->> 1),"
        " CASE WHEN message.end_user_text IS NULL THEN '' ELSE pair.value ->> 1 END"
        " FROM json_each(%s) AS pair JOIN editor_message AS message"
        ' ON message.transcript_id = %s AND message."index" = pair.value ->> 0'
        " WHERE pair.value ->> 1 != '' OR COALESCE(message.end_user_text, '') != ''"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(list(contents.items()), ensure_ascii=False), transcript_id])


def _write(connection, head: str, messages, command: str | None = None) -> None:
    """One statement for all of ``messages``, their texts in one JSON parameter. FTS5 writes
    what a statement added as a segment of its index: statements of a few hundred rows each
    left twice as many segments as one statement per batch, which slows every lookup of a row
    by its id (each transcript looked into by a search; docs/performance.md)."""
    rows = [
        [pk, *texts(content, end_user_text)]
        for pk, content, end_user_text in messages
        if content or end_user_text  # a message without text has no token to index
    ]
    if not rows:
        return
    values = "value ->> 0, value ->> 1, value ->> 2"
    if command is not None:
        values = f"'{command}', {values}"
    with connection.cursor() as cursor:
        cursor.execute(
            f"{head} SELECT {values} FROM json_each(%s)", [json.dumps(rows, ensure_ascii=False)]
        )
