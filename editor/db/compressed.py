"""Columns stored compressed: ``CompressedTextField`` (a transcript's source text) and
``CompressedJSONField`` (a revision's snapshot).

A transcript's source text is most of a database's size (docs/performance.md), and no query looks into it: it is read and
written whole. Stored as a Zstandard frame it takes a fraction of that, and a transcript's
text compresses or decompresses in microseconds (a context kept per thread).

What the column holds, in bytes: empty for "", a Zstandard frame (it starts with the
format's magic number) when compressing saves space, else the text's UTF-8 bytes. UTF-8
never starts with the magic number (its second byte, 0xB5, cannot follow an ASCII
character), so the two cannot be confused. A database written before this field (a TEXT
value in SQLite) reads back as the text it is.
"""

from __future__ import annotations

import codecs
import json
import threading

import zstandard
from django.db import models

from editor.db.compact_json import CompactJSONEncoder

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Below this a frame's header and checksum-free block cost more than the text saves.
MIN_COMPRESSED_LENGTH = 64
# Level 3 (zstd's default) made the benchmark's 10,000 transcripts no smaller than level 1,
# and took 6 % longer (docs/performance.md).
LEVEL = 1

_local = threading.local()


def _contexts() -> tuple[zstandard.ZstdCompressor, zstandard.ZstdDecompressor]:
    """This thread's compression contexts (made once: making one costs more than using it)."""
    contexts = getattr(_local, "contexts", None)
    if contexts is None:
        compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=False)
        contexts = _local.contexts = (compressor, zstandard.ZstdDecompressor())
    return contexts


def pack(text: str) -> bytes:
    """``text`` as the column stores it."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) < MIN_COMPRESSED_LENGTH:
        return raw
    frame = _contexts()[0].compress(raw)
    return frame if len(frame) < len(raw) else raw


def unpack(stored: bytes | memoryview | str) -> str:
    """The text of a stored value."""
    if isinstance(stored, str):  # written as TEXT before the column was compressed
        return stored
    stored = bytes(stored)
    if stored.startswith(ZSTD_MAGIC):
        stored = _contexts()[1].decompress(stored)
    return stored.decode("utf-8", "surrogatepass")


def unpack_prefix(stored: bytes | memoryview | str, characters: int) -> str:
    """At least the first ``characters`` characters of a stored value's text (all of it when
    it is shorter), decompressing no further than they need: a message near the start of a
    long transcript (a search's snippet) without the megabytes after it."""
    if isinstance(stored, str):
        return stored
    wanted = characters * 4  # a character takes at most 4 bytes in UTF-8
    if bytes(stored[:4]) == ZSTD_MAGIC:
        with _contexts()[1].stream_reader(bytes(stored)) as frame:
            chunks = []
            while wanted > 0 and (chunk := frame.read(wanted)):
                chunks.append(chunk)
                wanted -= len(chunk)
        raw = b"".join(chunks)
    else:
        raw = bytes(stored[:wanted])
    # Not final: a character cut in two at the end is left out rather than an error.
    return codecs.getincrementaldecoder("utf-8")("surrogatepass").decode(raw)


class _CompressedField(models.Field):
    """A value stored as ``pack`` of its text in a binary column; subclasses say how a value
    becomes text and back. Only whole values are read, written and compared (``pack`` is
    deterministic: equal values are equal bytes); no lookup looks into one.

    Not a ``BinaryField`` subclass: that one's per-value placeholder keeps PostgreSQL's
    ``bulk_create`` from sending a column as one array, and with server-side binding a
    batch of a few thousand rows would then pass PostgreSQL's 65,535 parameters."""

    def get_internal_type(self) -> str:
        return "BinaryField"  # the column: BLOB on SQLite, bytea on PostgreSQL

    def from_db_value(self, value, expression, connection):
        return None if value is None else self.from_text(unpack(value))

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None:
            return None
        if not isinstance(value, bytes | memoryview):  # bytes: already packed
            value = self.packed(value)
        return connection.Database.Binary(value)

    def packed(self, value) -> bytes:
        """``value`` as the column stores it: to write the same value into many rows, packed
        once (a packed value is stored as it is)."""
        return pack(self.to_text(value))

    def to_text(self, value) -> str:
        raise NotImplementedError

    def from_text(self, text: str):
        raise NotImplementedError


class CompressedTextField(_CompressedField):
    """A ``TextField`` to Python code (a ``str`` in, a ``str`` out), compressed in a binary
    column."""

    description = "Text (stored compressed)"

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("default", "")
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("default") == "":
            del kwargs["default"]
        return name, path, args, kwargs

    def to_text(self, value: str) -> str:
        return value

    def from_text(self, text: str) -> str:
        return text


class CompressedJSONField(_CompressedField):
    """A ``JSONField`` to Python code (dicts, lists… in and out), its compact JSON text
    (``editor.db.compact_json``) compressed in a binary column."""

    description = "JSON (stored compressed)"

    def to_text(self, value) -> str:
        return json.dumps(value, cls=CompactJSONEncoder)

    def from_text(self, text: str):
        return json.loads(text)
