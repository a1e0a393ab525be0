"""JSON columns written compactly: no space after the separators, and text that is not ASCII
as it is, in UTF-8, rather than as ``\\uXXXX`` escapes (six bytes for a character that takes
two in UTF-8 for Cyrillic or Greek, three for Chinese).

SQLite keeps a JSON column as the text written (PostgreSQL's jsonb is binary either way):
a transcript's header, attributes and metadata, each message's attributes, and a
transcript's diagnostics, which ``DiagnosticsField`` also writes without what their codes
say already. A revision's snapshot is this JSON compressed (``editor.db.compressed``).
"""

import json

from django.db import models

from editor.formats.diagnostics import CODES


class CompactJSONEncoder(json.JSONEncoder):
    def __init__(self, **options):
        # ``json.dumps(value, cls=…)`` passes its defaults (", " and ": ", ASCII only); these
        # win. What may be stored holds no lone surrogate (``editor.db.storable``), so every
        # string encodes to UTF-8.
        super().__init__(**{**options, "separators": (",", ":"), "ensure_ascii": False})


class OrderedJSONField(models.JSONField):
    """A JSON column that gives back an object's keys in the order they were written.

    PostgreSQL's ``jsonb`` stores an object's keys in an order of its own (shortest first),
    so a tool's ``{"name", "description", "parameters"}`` came back as ``name, parameters,
    description``: a converted export differed from the transcript's own text, and a dataset
    version's bytes depended on whether a member was read from its row or its revision. On
    PostgreSQL these columns are ``json`` (the text as written); SQLite keeps the text
    either way. Nothing queries inside them (``json`` has neither ``jsonb``'s operators nor
    equality).
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("encoder", CompactJSONEncoder)
        super().__init__(*args, **kwargs)

    def db_type(self, connection):
        if connection.vendor == "postgresql":
            return "json"
        return super().db_type(connection)

    def get_db_prep_value(self, value, connection, prepared=False):
        if connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        if not prepared:
            value = self.get_prep_value(value)
        # The text itself: Django's ``Jsonb`` adapter would have the server reorder the keys.
        return json.dumps(value, cls=self.encoder)

    def from_db_value(self, value, expression, connection):
        if value is not None and not isinstance(value, str):
            return value  # psycopg decoded the ``json`` column itself, keys in their order
        return super().from_db_value(value, expression, connection)


# The keys of a stored diagnostic (``formats.Diagnostic.to_dict``), in its order; a ``fix``
# may follow.
DIAGNOSTIC_KEYS = ("code", "severity", "message", "line", "column", "offset", "message_index")
# Left out when None (a diagnostic of the whole document has no message index).
POSITION_KEYS = ("line", "column", "offset", "message_index")


class DiagnosticsField(models.JSONField):
    """A transcript's diagnostics, written compactly and without what their codes say
    already: the severity when it is the code's own (``formats.diagnostics.CODES``), and
    positions that are None. Read back whole, every key in its place: 42 of the 176 bytes of
    a typical warning."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("encoder", CompactJSONEncoder)
        super().__init__(*args, **kwargs)

    def get_prep_value(self, value):
        if isinstance(value, list):
            value = [_stored(item) if isinstance(item, dict) else item for item in value]
        return super().get_prep_value(value)

    def from_db_value(self, value, expression, connection):
        value = super().from_db_value(value, expression, connection)
        if isinstance(value, list):
            value = [_whole(item) if isinstance(item, dict) else item for item in value]
        return value


def _stored(diagnostic: dict) -> dict:
    info = CODES.get(diagnostic.get("code"))
    return {
        key: value
        for key, value in diagnostic.items()
        if not (key in POSITION_KEYS and value is None)
        and not (key == "severity" and info is not None and value == info.severity)
    }


def _whole(stored: dict) -> dict:
    info = CODES.get(stored.get("code"))
    defaults = dict.fromkeys(POSITION_KEYS)
    if info is not None:
        defaults["severity"] = info.severity
    merged = {**defaults, **stored}
    in_order = {key: merged.pop(key) for key in DIAGNOSTIC_KEYS if key in merged}
    return {**in_order, **merged}
