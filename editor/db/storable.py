"""Text both databases can store.

PostgreSQL stores neither NUL characters nor lone surrogates in text or JSON (it refuses the
whole statement: a 500 if nothing checked first); SQLite would keep them, but the two
databases must accept the same data. Every domain function that writes text a user chose
checks it here first, so the user gets ``unstorable-text`` naming the field.
"""

from __future__ import annotations

import json
from typing import Any

from editor.errors import InvalidContent

NUL = "\x00"
ESCAPED_NUL = "\\u0000"  # how json.dumps writes a NUL


def check_storable_text(value: Any, where: str) -> None:
    """No NUL and no lone surrogate in any string of ``value`` (keys of objects included).
    ``where`` names the field in the message: "The name", "the note"."""
    if not isinstance(value, str) and _plainly_storable(value):
        return
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if NUL in item:
                raise InvalidContent(f"{where} contains a NUL character.", code="unstorable-text")
            if item.isascii():  # O(1) in CPython, and ASCII has no surrogates: no copy needed
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidContent(
                    f"{where} contains a lone surrogate (not valid Unicode text).",
                    code="unstorable-text",
                ) from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _plainly_storable(value: Any) -> bool:
    """True when ``value`` surely holds no NUL and no lone surrogate, decided in C (the walk
    below visits every string in Python, a tenth of an import's reading): ``json.dumps`` writes
    a NUL as ``\\u0000`` and keeps a lone surrogate, which UTF-8 cannot encode. False lets the
    walk decide, and name the fault: also for a text that merely says ``\\u0000``, and for
    values JSON cannot write."""
    try:
        dumped = json.dumps(value, ensure_ascii=False, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return False
    if ESCAPED_NUL in dumped:
        return False
    if dumped.isascii():
        return True
    try:
        dumped.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
