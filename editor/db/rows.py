"""Reading a model's row from a hand-written statement, as the ORM would have read it.

For a read so frequent that compiling its query costs more than running it: the statement is
written once, selects the model's concrete columns first (``ModelColumns.select``), and each
row goes through the same converters the ORM applies (the backend's, then each field's own
``from_db_value``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from django.db import connections, models


@dataclass(frozen=True)
class ModelColumns:
    """A model's concrete columns, first in a row, and how to convert them. Made once per
    database alias: every connection to it (one a thread) has the same backend, so the same
    converters."""

    select: tuple[str, ...]  # the columns as the statement selects them: ``t."title"``
    fields: tuple[str, ...]  # their attnames, for ``Model.from_db``
    converters: tuple[tuple[int, tuple, Any], ...]  # (column, converters, its expression)

    def values(self, row: tuple, connection) -> list:
        values = list(row[: len(self.fields)])
        for at, converters, expression in self.converters:
            for converter in converters:
                values[at] = converter(values[at], expression, connection)
        return values


@functools.cache
def model_columns(model: type[models.Model], alias: str, table_alias: str) -> ModelColumns:
    """The columns of ``model`` selected from its table named ``table_alias`` in a statement
    on database ``alias``."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    table, fields = model._meta.db_table, model._meta.concrete_fields
    converters = []
    for at, field in enumerate(fields):
        column = field.get_col(table)
        found = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        if found:
            converters.append((at, tuple(found), column))
    return ModelColumns(
        select=tuple(f"{table_alias}.{quote(field.column)}" for field in fields),
        fields=tuple(field.attname for field in fields),
        converters=tuple(converters),
    )
