"""The spec ids and the codec that reads and writes each one.

A codec module exposes ``CODECS``: a tuple of ``Codec``. The registry imports the modules
on first use so that importing ``editor.formats`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from .diagnostics import Diagnostics
from .model import Transcript

SPEC_IDS = (
    "chatml",
    "chatml-json",
    "openchatml-0.1",
    "openchatml-2.0",
    "openchatml-2.2",
    "harmony",
    "mms",
    "mms-tokens",
    "openchatml-json",
    "openai-messages",
    "sharegpt",
)

# Token-text formats round-trip byte for byte; JSON formats round-trip by value.
TEXT_SPECS = frozenset(
    {"chatml", "openchatml-0.1", "openchatml-2.0", "openchatml-2.2", "harmony", "mms-tokens"}
)
JSON_SPECS = frozenset(SPEC_IDS) - TEXT_SPECS

_CODEC_MODULES = (
    "editor.formats.codecs.chatml",
    "editor.formats.codecs.openchatml2",
    "editor.formats.codecs.openchatml01",
    "editor.formats.codecs.mms",
    "editor.formats.codecs.jsonformats",
)


@dataclass(frozen=True)
class Codec:
    spec: str
    parse: Callable[[str, Diagnostics], Transcript]
    serialize: Callable[[Transcript], str]
    # The token that opens every message of a text format (``<|start|>``, ``<|im_start|>``,
    # ``<|role|>``): where the streaming parser may cut. None for JSON formats.
    message_start: str | None = None
    # A JSON format's parse of a document ``json_support`` has already read (a JSONL dataset
    # reads each line once, to find its spec, then parses what it read). None: not offered.
    read: Callable[[str, list[Any] | None, Diagnostics], Transcript] | None = None


_registry: dict[str, Codec] | None = None


def codecs() -> dict[str, Codec]:
    global _registry
    if _registry is None:
        found: dict[str, Codec] = {}
        for module_name in _CODEC_MODULES:
            for codec in import_module(module_name).CODECS:
                found[codec.spec] = codec
        _registry = found
    return _registry


class UnknownSpec(ValueError):
    def __init__(self, spec: str):
        super().__init__(f"unknown spec id {spec!r}; expected one of: {', '.join(SPEC_IDS)}")
        self.spec = spec


def get_codec(spec: str) -> Codec:
    if spec not in SPEC_IDS:
        raise UnknownSpec(spec)
    return codecs()[spec]
