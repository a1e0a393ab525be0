"""Text both databases can store.

PostgreSQL stores neither NUL characters nor lone surrogates in text or JSON (it refuses the
whole statement: a 500 if nothing checked first); SQLite would keep them, but the two
databases must accept the same data. Every domain function that writes text a user chose
checks it here first, so the user gets ``unstorable-text`` naming the field.
"""

from __future__ import annotations

from typing import Any

from .errors import InvalidContent

NUL = "\x00"


def check_storable_text(value: Any, where: str) -> None:
    """No NUL and no lone surrogate in any string of ``value`` (keys of objects included).
    ``where`` names the field in the message: "The name", "the note"."""
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
