"""JSON columns written compactly: no space after the separators, and text that is not ASCII
as it is, in UTF-8, rather than as ``\\uXXXX`` escapes (six bytes for a character that takes
two in UTF-8 for Cyrillic or Greek, three for Chinese).

SQLite keeps a JSON column as the text written (PostgreSQL's jsonb is binary either way):
a transcript's diagnostics, its header and attributes, each message's attributes and
every revision's snapshot (whole messages, for a revision that is not the newest).
"""

import json


class CompactJSONEncoder(json.JSONEncoder):
    def __init__(self, **options):
        # ``json.dumps(value, cls=…)`` passes its defaults (", " and ": ", ASCII only); these
        # win. What may be stored holds no lone surrogate (``editor.storable``), so every
        # string encodes to UTF-8.
        super().__init__(**{**options, "separators": (",", ":"), "ensure_ascii": False})
