"""Inserting many rows fast: COPY on PostgreSQL, multi-row INSERT statements through the
raw ``sqlite3`` cursor on SQLite. Knows tables and fields, nothing of the domain."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import islice

from django.db import connections, models, router
from django.utils import timezone

# Rows in one INSERT statement on SQLite (fewer when it takes fewer parameters).
ROWS_PER_INSERT = 500


@dataclass
class NewRows:
    """The rows of new ``model`` instances, made and prepared for the database (``new_rows``)
    before they are inserted (``insert_new_rows``): the making can then happen outside the
    transaction that inserts them (on SQLite, outside its write lock)."""

    model: type[models.Model]
    fields: list[models.Field]
    values: Sequence[dict]  # as given: the foreign keys' objects are cached on the instances
    rows: list[list]  # each row's values as given, foreign keys as their pk
    prepared: list[tuple]  # the same, as the database takes them


def insert_new(model: type[models.Model], values: Sequence[dict]) -> list[models.Model]:
    """INSERT a new ``model`` row per dict of ``values`` (field name -> value; a foreign key
    given as its object or None), and return them as instances, saved (pks set, the objects
    of their foreign keys cached). The fields not given take their defaults, auto_now dates one
    "now" for the lot (rows written together). No ``pre_save`` hooks other than those dates,
    no signals, as with ``bulk_create``."""
    if not values:
        return []
    new = new_rows(model, values)
    return saved_instances(new, insert_new_rows(new))


def new_rows(model: type[models.Model], values: Sequence[dict]) -> NewRows:
    """The rows ``insert_new`` inserts, made and prepared (``NewRows``)."""
    connection = connections[router.db_for_write(model)]
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    now = timezone.now()
    plan = [
        (f.name, getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False), f.get_default)
        for f in fields
    ]
    related = [at for at, f in enumerate(fields) if f.is_relation]
    rows = []
    for given in values:
        row = [
            now if is_dated else given[name] if name in given else default()
            for name, is_dated, default in plan
        ]
        for at in related:
            if isinstance(row[at], models.Model):
                row[at] = row[at].pk
        rows.append(row)
    prepare = _preparers(connection, fields)
    prepared = [_prepared(row, prepare) for row in rows] if prepare else [tuple(r) for r in rows]
    return NewRows(model, fields, values, rows, prepared)


def insert_new_rows(new: NewRows) -> list:
    """INSERT rows ``new_rows`` made; their primary keys, in order (``saved_instances``
    makes the instances, for a caller that wants them)."""
    names = [f.name for f in new.fields]
    return insert_rows(new.model, names, new.prepared, with_pks=True, prepared=names)


def saved_instances(new: NewRows, pks: Sequence) -> list[models.Model]:
    """The rows ``insert_new_rows`` inserted, as saved instances (``insert_new``).

    The instances are made from the rows positionally, as ``Model.from_db`` makes rows read
    back: ``Model(**values)`` looks each field's keyword up and sets each foreign key through
    its descriptor, then ``bulk_create``'s ``pre_save`` reads every value back, 8 % of an
    import of 10,000 transcripts between the two."""
    model = new.model
    database = router.db_for_write(model)
    pk_at = model._meta.concrete_fields.index(model._meta.pk)
    related = [f for f in new.fields if f.is_relation]
    instances = []
    for pk, row, given in zip(pks, new.rows, new.values, strict=True):
        instance = model(*row[:pk_at], pk, *row[pk_at:])
        instance._state.adding = False
        instance._state.db = database
        for f in related:
            if isinstance(given.get(f.name), models.Model):
                f.set_cached_value(instance, given[f.name])
        instances.append(instance)
    return instances


def insert_rows(
    model: type[models.Model],
    names: Sequence[str],
    rows: Iterable[tuple],
    with_pks: bool = False,
    prepared: Collection[str] = (),
) -> list:
    """INSERT ``rows`` (values in the order of the fields ``names``); with ``with_pks``,
    the primary keys the rows were given, in order (as ``bulk_create`` reads them back).
    The values of the fields ``prepared`` come prepared for the database already
    (``value_preparer``), made with the rest of the row.

    ``bulk_create`` compiles every value of every row through the ORM, most of an import's
    time (docs/performance.md). Here text, numbers, booleans and foreign keys (the pk) go to the
    driver as they are, which is what their fields' preparation gives for those values; the
    other fields (JSON, dates, the compressed source text) are prepared by the field itself
    for this connection, as the ORM would: a JSON string on SQLite, a Jsonb adapter on
    PostgreSQL. No signals, as with bulk_create.
    """
    connection = connections[router.db_for_write(model)]
    fields = [model._meta.get_field(name) for name in names]
    prepare = _preparers(connection, fields, prepared)
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
    statements is slower; docs/performance.md), run on the raw ``sqlite3`` cursor.

    The statements are written with ``?`` placeholders, as ``sqlite3`` takes them: Django's
    cursor rewrites ``%s`` into ``?`` with a regular expression over the SQL text of every
    statement it runs, 8,500 placeholders a statement of message rows (2.6 % of an import).
    A column that is NULL in every row of a statement is written ``NULL`` in its SQL rather
    than bound: ``sqlite3`` binds ``None`` through its adapter lookup, slowly (100,000 message
    rows with seven such columns took 0.7 to 0.9 s bound, 0.2 to 0.25 s written). While queries are
    being recorded (``DEBUG``, as under ``make run``; a test counting them) each statement is
    recorded with its placeholders: Django's own record quotes every value into the SQL
    text, one ``SELECT QUOTE(…)`` per 999 values, which made a debug import half as slow again
    and kept megabytes of SQL text per statement."""
    quote = connection.ops.quote_name
    head = "INSERT INTO {} ({}) VALUES ".format(
        quote(model._meta.db_table), ", ".join(quote(f.column) for f in fields)
    )
    tail = f" RETURNING {quote(model._meta.pk.column)}" if with_pks else ""
    per_statement = max(1, min(ROWS_PER_INSERT, _sqlite_max_parameters(connection) // len(fields)))
    rows = iter(rows)
    pks: list = []
    with connection.cursor() as cursor:
        while batch := list(islice(rows, per_statement)):
            columns = list(zip(*batch, strict=True))
            nulls = frozenset(
                at for at, values in enumerate(columns) if values.count(None) == len(batch)
            )
            if nulls:
                bound = [values for at, values in enumerate(columns) if at not in nulls]
                params = [value for row in zip(*bound, strict=True) for value in row]
            else:
                params = [value for row in batch for value in row]
            sql = _insert_sql(head, len(fields), nulls, len(batch), tail)
            started = time.monotonic()
            with connection.wrap_database_errors:
                sqlite3.Cursor.execute(cursor.cursor, sql, params)
            if connection.queries_logged:
                connection.queries_log.append(
                    {"sql": sql, "time": f"{time.monotonic() - started:.3f}"}
                )
            if with_pks:
                pks.extend(value for (value,) in cursor.fetchall())
    return pks


@lru_cache(maxsize=64)
def _insert_sql(head: str, width: int, nulls: frozenset, count: int, tail: str) -> str:
    """``count`` rows of ``width`` values, those at the positions ``nulls`` written NULL."""
    row_sql = "({})".format(", ".join("NULL" if at in nulls else "?" for at in range(width)))
    return head + ", ".join([row_sql] * count) + tail


def _sqlite_max_parameters(connection) -> int:
    """The parameters one statement may take on this SQLite connection. Django assumes 999
    (SQLite's default before 3.32): 71 message rows a statement, 1,400 statements (each
    compiled by SQLite, and its SQL rewritten by Django) for 10,000 transcripts."""
    connection.ensure_connection()
    return connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)


def value_preparer(field: models.Field, connection):
    """``field``'s preparation of a value for ``connection``; an empty JSON object or list
    (most messages' attrs, most metadata and diagnostics) prepared once, not once a row. A
    JSON field's needs nothing of the connection but its dialect: its values may be prepared
    in another process set up with the same settings."""
    if isinstance(field, models.DateTimeField):
        # A batch's rows share their dates (``insert_new``, a revision's ``now``).
        return lru_cache(maxsize=8)(partial(field.get_db_prep_save, connection=connection))
    if not isinstance(field, models.JSONField):
        return partial(field.get_db_prep_save, connection=connection)
    empty_object = field.get_db_prep_save({}, connection)
    empty_list = field.get_db_prep_save([], connection)

    def prepare(value):
        if value == {}:
            return empty_object
        if value == []:
            return empty_list
        return field.get_db_prep_save(value, connection)

    return prepare


# Fields whose values go to the driver as they are (``insert_rows``).
PLAIN_FIELDS = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.BooleanField,
    models.ForeignKey,
)


def _preparers(connection, fields: Sequence[models.Field], prepared: Collection[str] = ()):
    """(position, preparation) of each field of ``fields`` whose values need preparing for
    ``connection``, unless named in ``prepared``."""
    return [
        (i, value_preparer(f, connection))
        for i, f in enumerate(fields)
        if not isinstance(f, PLAIN_FIELDS) and f.name not in prepared
    ]


def _prepared(row: tuple, prepare) -> tuple:
    values = list(row)
    for i, prep in prepare:
        values[i] = prep(values[i])
    return tuple(values)
