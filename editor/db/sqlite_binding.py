"""``None`` and ``bool`` bound by ``sqlite3`` at the speed of the other plain values.

``sqlite3`` binds an exact ``int``, ``float`` or ``str`` at once, but any other value goes
through its adapter protocol first: a lookup in its adapters, then two attribute lookups that
fail (``__adapt__``, ``__conform__``) before the value is bound as it is. The rows an import
writes are full of ``None`` (columns a message does not use) and ``bool`` (whether a content
is escaped): 100,000 message rows carry about 800,000 of them, and the protocol's misses made
up a sixth of the task worker's CPU on SQLite (0.4 s of 2.7 s; docs/performance.md). An
adapter registered for each type is found by the first lookup and gives what ``sqlite3``
would have bound anyway: ``None`` (NULL) and the ``int`` a ``bool`` is stored as.
"""

from __future__ import annotations

import sqlite3


def register_adapters() -> None:
    sqlite3.register_adapter(type(None), _null)
    sqlite3.register_adapter(bool, int)


def _null(value: None) -> None:
    return value
