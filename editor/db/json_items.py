"""Counts over the objects of a JSON array column that both databases answer alike.

``rows_per_item_value(rows, field, key)``: for each value of ``key`` among the objects of the
JSON array ``field``, how many of ``rows`` hold at least one such object (a facet of a
transcript list's diagnostic codes), and ``ItemValues``, the values one row holds. One statement over the rows' own query: SQLite walks
each array with ``json_each``, PostgreSQL with ``jsonb_array_elements``; each row's array is
read once and no row is fetched into Python.
"""

from __future__ import annotations

from django.core.exceptions import EmptyResultSet
from django.db import NotSupportedError, connections
from django.db.models import F, Func, QuerySet, TextField

_ITEMS = {
    # (the table function over the array {items}, the value of key %s of one item)
    "sqlite": ("json_each({items}) item", "json_extract(item.value, %s)"),
    "postgresql": ("jsonb_array_elements({items}) item", "item ->> %s"),
}


def rows_per_item_value(rows: QuerySet, field: str, key: str) -> list[tuple[str, int]]:
    """``[(value, rows holding it), …]``, the most held first (then by value)."""
    connection = connections[rows.db]
    if connection.vendor not in _ITEMS:
        raise NotSupportedError(f"Written for SQLite and PostgreSQL, not {connection.vendor}")
    items, value = _ITEMS[connection.vendor]
    # The item's key as SQLite's path or PostgreSQL's key.
    key_param = f"$.{key}" if connection.vendor == "sqlite" else key
    # The ORM names the selected columns after the values asked for: r.pk, r.<field>.
    try:
        inner, params = rows.order_by().values_list("pk", field).query.sql_with_params()
    except EmptyResultSet:  # rows.none(): nothing to count
        return []
    array = f"r.{connection.ops.quote_name(field)}"
    sql = (
        f"SELECT v, COUNT(*) AS n FROM ("
        f"SELECT DISTINCT r.pk, {value} AS v FROM ({inner}) r, "
        f"{items.format(items=array)}"
        f") held WHERE v IS NOT NULL GROUP BY v ORDER BY n DESC, v"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [key_param, *params])
        return [(found, count) for found, count in cursor.fetchall()]


class ItemValues(Func):
    """The distinct values of ``key`` among the objects of a row's JSON array column,
    space-separated, in order (``None`` for an empty array): a transcript's diagnostic codes
    on one row of a list, without reading its diagnostics into Python."""

    output_field = TextField()

    def __init__(self, field: str, key: str):
        super().__init__(F(field))
        self.key = key

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError(f"Written for SQLite and PostgreSQL, not {connection.vendor}")

    def as_sqlite(self, compiler, connection, **extra):
        array, params = compiler.compile(self.source_expressions[0])
        return (
            "(SELECT group_concat(v, ' ') FROM (SELECT DISTINCT json_extract(value, %s) AS v"
            f" FROM json_each({array}) WHERE v IS NOT NULL ORDER BY v))",
            [f"$.{self.key}", *params],
        )

    def as_postgresql(self, compiler, connection, **extra):
        array, params = compiler.compile(self.source_expressions[0])
        return (
            "(SELECT string_agg(v, ' ' ORDER BY v) FROM (SELECT DISTINCT item ->> %s AS v"
            f" FROM jsonb_array_elements({array}) item) held)",
            [self.key, *params],
        )
