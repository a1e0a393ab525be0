"""Reading a Parquet file (``PAR1`` at both ends): one candidate per row, a row group at a time.

Hugging Face datasets are mostly published as Parquet: chat rows (``{"messages": [...]}``),
TRL preference rows and HH-RLHF pairs. Each row is read as the same row of a JSONL file
would be: a preference row (``editor.importing.preference``) or a transcript envelope or
bare document (``editor.formats.jsonl``), the columns an export writes as JSON text (``tools``,
``metadata``…) decoded first. Struct fields a Parquet schema fills with null for
the messages that lack them (``tool_calls: null``) are dropped first, as if never written.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from editor.formats import jsonl
from editor.importing import limits, preference
from editor.importing.candidates import Candidate, from_record, unreadable
from editor.importing.report import ImportReport

MAGIC = b"PAR1"
# The columns an export writes as JSON text (docs/formats.md, "Parquet"): read back as JSON.
JSON_TEXT_COLUMNS = ("tools", "metadata", "document", "annotations", "provenance")
BATCH_ROWS = 256  # rows decoded at once: a few MB of text, whatever the file's size


def read_parquet(
    stream: IO[bytes], name: str, report: ImportReport, spec: str | None, shape: str | None
) -> Iterator[Candidate]:
    """The candidates of the Parquet file ``stream`` (seekable), located ``name:row``."""
    try:
        table = pq.ParquetFile(stream)
    except (pa.ArrowException, OSError) as error:
        yield unreadable(name, "bad-parquet", f"not a readable Parquet file: {error}")
        return
    rows = table.metadata.num_rows or 1
    size = report.bytes_total or 0
    number = 0
    for batch in table.iter_batches(batch_size=BATCH_ROWS):
        for value in batch.to_pylist():
            number += 1
            report.bytes_read = size * number // rows  # a share of the file, for progress
            value = _decoded(_without_nulls(value))
            yield _candidate(value, f"{name}:{number}", number, spec, shape)


def _candidate(
    value: dict, location: str, number: int, spec: str | None, shape: str | None
) -> Candidate:
    if preference.wants_rows(value, shape):
        return preference.row_candidate(value, location, number, spec, shape)
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > limits.MAX_LINE_BYTES:
        return unreadable(location, "line-too-long", f"row {number} is too long for one transcript")
    return from_record(jsonl.read_value(text, value, spec, number=number), location)


def _decoded(row: dict) -> dict:
    """The JSON text columns of ``row`` as the JSON they hold (left as they are when they
    are not JSON: the reader of the row then says what is wrong)."""
    for key in JSON_TEXT_COLUMNS:
        if isinstance(row.get(key), str):
            with contextlib.suppress(ValueError):
                row[key] = json.loads(row[key])
    return row


def _without_nulls(value: Any) -> Any:
    """``value`` without the null fields of its objects (a Parquet struct's absent fields)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value
