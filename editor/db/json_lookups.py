"""Lookups on JSON fields that both databases answer alike (``has_item_with`` below).

``holds``: a JSON value that is ``v``, or an array with ``v`` among its elements. A label
filter matches a choice answer (``"billing"``), a multi-choice answer that includes
the option (``["billing", "bug"]``), a rating (``3``) and a span's tag with one lookup.
PostgreSQL says it with jsonb containment (a scalar contains itself, an array contains each
of its elements); SQLite, whose JSON fields have no ``contains`` lookup, with ``json_each``,
which yields a scalar's own value and an array's elements. Types are kept on both: the rating
``3`` is not the text ``"3"``.
"""

import json

from django.db import NotSupportedError
from django.db.models import JSONField, Lookup


@JSONField.register_lookup
class Holds(Lookup):
    lookup_name = "holds"
    prepare_rhs = False

    def as_sql(self, compiler, connection):
        raise NotSupportedError(
            f"holds is written for SQLite and PostgreSQL, not {connection.vendor}"
        )

    def as_sqlite(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        return (
            f"EXISTS (SELECT 1 FROM json_each({lhs}) WHERE json_each.value = %s)",
            [*params, self.rhs],
        )

    def as_postgresql(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        return f"{lhs} @> %s::jsonb", [*params, json.dumps(self.rhs)]


@JSONField.register_lookup
class HasItemWith(Lookup):
    """``has_item_with=(key, value)``: a JSON array with an object element whose ``key`` is
    ``value`` (a transcript's diagnostics with a given code). PostgreSQL says it with jsonb
    containment (``@> [{key: value}]``, which its GIN indexes serve), SQLite with
    ``json_each`` over the elements."""

    lookup_name = "has_item_with"
    prepare_rhs = False

    def as_sql(self, compiler, connection):
        raise NotSupportedError(
            f"has_item_with is written for SQLite and PostgreSQL, not {connection.vendor}"
        )

    def as_sqlite(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        key, value = self.rhs
        return (
            f"EXISTS (SELECT 1 FROM json_each({lhs}) WHERE json_extract(json_each.value, %s) = %s)",
            [*params, f"$.{key}", value],
        )

    def as_postgresql(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        key, value = self.rhs
        return f"{lhs} @> %s::jsonb", [*params, json.dumps([{key: value}])]
