"""Export rows written as Parquet (``file_format=parquet``), streamed in row groups.

Every export shape is a stream of JSON objects (transcript lines, chat rows, preference
rows); ``write_parquet`` writes them ``ROW_GROUP_ROWS`` at a time with
``pyarrow.parquet.ParquetWriter``, so memory holds one row group, whatever the dataset's size.

Columns (docs/formats.md, "Parquet"), fixed before the first row group is written:

* message lists in OpenAI's chat shape (``messages``; ``prompt``, ``chosen``, ``rejected``
  of conversational preference rows) are ``list<struct<role, content, name, tool_call_id,
  tool_calls: list<struct<id, type, function: struct<name, arguments>>>, reasoning_content,
  weight>>``: what
  ``datasets`` loads as lists of dicts and TRL's chat templates read. A content that is not a
  string (a list of parts) is written as its JSON text; a message key outside these is
  dropped and counted as a loss;
* message lists of another JSON spec, and every other nested value (``tools``, ``metadata``,
  ``document``, ``provenance``, ``annotations``), are JSON text columns (``json.loads`` them);
* a list of integers or booleans (a token mask) is ``list<int64>``; strings, integers and
  booleans are themselves. A column's type comes from the shape's known columns, else from
  the first row that has it; a key first seen after the first row group is dropped and
  counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 1000
MESSAGE_LIST_KEYS = ("messages", "prompt", "chosen", "rejected")
FUNCTION = pa.struct([("name", pa.string()), ("arguments", pa.string())])
TOOL_CALL = pa.struct([("id", pa.string()), ("type", pa.string()), ("function", FUNCTION)])
MESSAGE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("name", pa.string()),
        ("tool_call_id", pa.string()),
        ("tool_calls", pa.list_(TOOL_CALL)),
        # An assistant turn's analysis as chat rows carry it (and chat templates read it).
        ("reasoning_content", pa.string()),
        # A training mask in OpenAI's shape (format=messages, mask=weight): 0 or 1.
        ("weight", pa.int64()),
    ]
)
MESSAGES = pa.list_(MESSAGE)
INTEGERS = pa.list_(pa.int64())  # token masks: booleans written as 0 / 1
MESSAGE_FIELDS = frozenset(MESSAGE.names)
JSON_TEXT = "json"
# Columns a shape may hold that its first row can lack, and their kind.
KNOWN_COLUMNS = {
    "id": pa.string(),
    "title": pa.string(),
    "spec": pa.string(),
    "status": pa.string(),
    "text": pa.string(),
    "metadata": JSON_TEXT,
    "document": JSON_TEXT,
    "annotations": JSON_TEXT,
    "tools": JSON_TEXT,
    "provenance": JSON_TEXT,
}


class ParquetRows:
    """Writes dict rows to ``path`` as Parquet, one row group per ``row_group_rows`` rows.

    Use as a context manager; ``write(row)`` buffers, a full buffer is written as one row
    group. ``losses`` counts what the columns could not hold, by ``column`` / ``key``.
    """

    def __init__(self, path: str | Path, *, row_group_rows: int = ROW_GROUP_ROWS):
        self.path = Path(path)
        self.row_group_rows = row_group_rows
        self.kinds: dict[str, Any] | None = None
        self.buffer: list[dict] = []
        self.writer: pq.ParquetWriter | None = None
        self.losses: dict[str, int] = {}
        self.count = 0

    def __enter__(self) -> ParquetRows:
        return self

    def __exit__(self, exc_type, *exc_info) -> None:
        if exc_type is None:
            self.close()
        elif self.writer is not None:
            self.writer.close()

    def write(self, row: dict) -> None:
        self.buffer.append(row)
        if len(self.buffer) >= self.row_group_rows:
            self._flush()

    def close(self) -> None:
        if self.buffer or self.writer is None:
            self._flush()
        self.writer.close()

    def _flush(self) -> None:
        if self.kinds is None:
            self.kinds = _kinds(self.buffer)
            self.schema = pa.schema(
                [
                    (name, pa.string() if kind == JSON_TEXT else kind)
                    for name, kind in self.kinds.items()
                ]
            )
            self.writer = pq.ParquetWriter(self.path, self.schema)
        columns = {name: [] for name in self.kinds}
        for row in self.buffer:
            for key in row.keys() - self.kinds.keys():
                self._lose(f"{key}: not a column (first seen after the first rows)")
            for name, kind in self.kinds.items():
                columns[name].append(self._cell(row.get(name), kind, name))
        self.writer.write_table(pa.table(columns, schema=self.schema))
        self.count += len(self.buffer)
        self.buffer = []

    def _cell(self, value: Any, kind: Any, name: str) -> Any:
        if value is None:
            return None
        if kind == JSON_TEXT:
            return json.dumps(value, ensure_ascii=False)
        if kind == MESSAGES:
            return [self._message(m, name) for m in value]
        if kind == INTEGERS:
            return [int(v) for v in value]
        if kind == pa.string() and not isinstance(value, str):
            return json.dumps(value, ensure_ascii=False)
        return value

    def _message(self, message: dict, column: str) -> dict:
        for key in message.keys() - MESSAGE_FIELDS:
            self._lose(f"{column}.{key}: not a field of a Parquet message")
        out = {key: message.get(key) for key in MESSAGE_FIELDS}
        if out["content"] is not None and not isinstance(out["content"], str):
            out["content"] = json.dumps(out["content"], ensure_ascii=False)
        if out["tool_calls"]:
            out["tool_calls"] = [_tool_call(call) for call in out["tool_calls"]]
        return out

    def _lose(self, what: str) -> None:
        self.losses[what] = self.losses.get(what, 0) + 1


def _tool_call(call: dict) -> dict:
    function = dict(call.get("function") or {})
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        function["arguments"] = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": call.get("id"),
        "type": call.get("type"),
        "function": {"name": function.get("name"), "arguments": function.get("arguments")},
    }


def _kinds(rows: list[dict]) -> dict[str, Any]:
    """Each column's kind, in the order the rows first name them."""
    kinds: dict[str, Any] = {}
    for row in rows:
        for key, value in row.items():
            if key not in kinds and (value is not None or key in KNOWN_COLUMNS):
                kinds[key] = _kind(key, value)
    return kinds


def _kind(key: str, value: Any) -> Any:
    if key in MESSAGE_LIST_KEYS and isinstance(value, list):
        return MESSAGES if all(_is_chat_message(m) for m in value) else JSON_TEXT
    if key in KNOWN_COLUMNS:
        return KNOWN_COLUMNS[key]
    if isinstance(value, bool):
        return pa.bool_()
    if isinstance(value, int):
        return pa.int64()
    if isinstance(value, float):
        return pa.float64()
    if isinstance(value, str):
        return pa.string()
    integers = isinstance(value, list) and all(isinstance(v, (bool, int)) for v in value)
    if integers and (value or "mask" in key):  # an empty mask is still a mask
        return INTEGERS
    return JSON_TEXT


def _is_chat_message(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("role"), str)


def write_parquet(rows: Iterable[dict], path: str | Path, **options) -> ParquetRows:
    """Write ``rows`` to ``path``; the writer (its ``count`` and ``losses``) is returned."""
    with ParquetRows(path, **options) as out:
        for row in rows:
            out.write(row)
    return out
