"""Inserting many rows fast: COPY on PostgreSQL, multi-row INSERT statements through the
raw ``sqlite3`` cursor on SQLite. Knows tables and fields, nothing of the domain."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from functools import lru_cache, partial
from itertools import islice
from operator import attrgetter

from django.db import connections, models, router
from django.utils import timezone

# Rows in one INSERT statement on SQLite (fewer when it takes fewer parameters).
ROWS_PER_INSERT = 500


def insert_objects(objects: list[models.Model]) -> None:
    """INSERT new model instances (of one model) as ``bulk_create`` does, their pks set, but
    as ``insert_rows`` writes rows (``bulk_create`` compiles every value through the ORM, and
    quotes every value into the SQL text on PostgreSQL). Each field's ``pre_save`` value is stored, except that auto_now dates are
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
    pks = insert_rows(model, [f.name for f in fields], rows, with_pks=True)
    for obj, pk in zip(objects, pks, strict=True):
        obj.pk = pk
        obj._state.adding = False
        obj._state.db = database


def insert_rows(
    model: type[models.Model], names: Sequence[str], rows: Iterable[tuple], with_pks: bool = False
) -> list:
    """INSERT ``rows`` (values in the order of the fields ``names``); with ``with_pks``,
    the primary keys the rows were given, in order (as ``bulk_create`` reads them back).

    ``bulk_create`` compiles every value of every row through the ORM, most of an import's
    time (docs/performance.md). Here text, numbers, booleans and foreign keys (the pk) go to the
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

    ``executemany`` is much slower: Django's cursor binds values on the client, quoting each
    into the SQL text the server then parses, row by row. COPY returns nothing, so the primary keys are taken
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
    statements is slower; docs/performance.md)."""
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
    full batch's SQL turned into ``?`` placeholders once, not once a statement (Django
    rewrites a statement's SQL each time it runs, a visible part of an import). While
    queries are being recorded (``DEBUG``, as under ``make run``; a test counting them) each
    statement is recorded with its placeholders: Django's own record quotes every value into
    the SQL text, one ``SELECT QUOTE(…)`` per 999 values, which made a debug import half as
    slow again and kept megabytes of SQL text per statement."""
    sqlite_cursor = cursor.cursor
    converted = {full_sql: sqlite_cursor.convert_query(full_sql)}

    def execute(sql: str, params: list) -> None:
        if sql not in converted:
            converted[sql] = sqlite_cursor.convert_query(sql)
        started = time.monotonic()
        with connection.wrap_database_errors:
            sqlite3.Cursor.execute(sqlite_cursor, converted[sql], params)
        if connection.queries_logged:
            connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})

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
        # A batch's rows share their dates (``insert_objects``, a revision's ``now``).
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
