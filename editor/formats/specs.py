"""The spec ids and the codec that reads and writes each one: the registry.

A codec module exposes ``CODECS``: a tuple of ``Codec``, each carrying the ``SpecInfo`` the
app reads (``spec_info``). The registry imports the shipped modules on first use so that
importing ``editor.formats`` stays cheap; ``register`` adds a spec defined elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from .diagnostics import Diagnostics
from .model import Transcript
from .specinfo import SpecInfo

# The specs this package ships, in the order menus list them (``spec_ids()`` adds the
# registered ones).
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

DEFAULT_SPEC = "openchatml-2.2"  # what a new dataset or document is written in
CHAT_DATASET_SPEC = "openai-messages"  # its documents are TRL / Hugging Face chat rows

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
    info: SpecInfo = field(kw_only=True)  # what the app needs to know of the spec


_registry: dict[str, Codec] | None = None


def codecs() -> dict[str, Codec]:
    """Every codec by spec id: the shipped ones in ``SPEC_IDS`` order, then the registered."""
    global _registry
    if _registry is None:
        found: dict[str, Codec] = {}
        for module_name in _CODEC_MODULES:
            for codec in import_module(module_name).CODECS:
                found[codec.spec] = codec
        _registry = {spec: found[spec] for spec in SPEC_IDS}
    return _registry


class UnknownSpec(ValueError):
    def __init__(self, spec: str):
        super().__init__(f"unknown spec id {spec!r}; expected one of: {', '.join(spec_ids())}")
        self.spec = spec


def get_codec(spec: str) -> Codec:
    codec = codecs().get(spec) if isinstance(spec, str) else None
    if codec is None:
        raise UnknownSpec(spec)
    return codec


def spec_ids() -> tuple[str, ...]:
    """Every spec id the registry knows: ``SPEC_IDS``, then those added with ``register``."""
    return tuple(codecs())


def is_spec(spec: Any) -> bool:
    """Whether ``spec`` is the id of a registered spec."""
    return isinstance(spec, str) and spec in codecs()


def spec_info(spec: str) -> SpecInfo:
    """What the app needs to know of ``spec`` (``UnknownSpec`` when it is not registered)."""
    return get_codec(spec).info


def register(codec: Codec) -> None:
    """Add a spec defined outside this package: parsing, serializing, validating, converting
    and every page of the app then handle it. Refused (``ValueError``) when its id is taken
    or its ``SpecInfo`` is incomplete (``SpecInfo.problems``)."""
    registry = codecs()
    if codec.spec in registry:
        raise ValueError(f"spec id {codec.spec!r} is already registered")
    problems = codec.info.problems()
    if problems:
        raise ValueError(f"incomplete SpecInfo for {codec.spec!r}: {'; '.join(problems)}")
    registry[codec.spec] = codec


def unregister(spec: str) -> None:
    """Remove a spec added with ``register`` (the shipped ones stay)."""
    if spec in SPEC_IDS:
        raise ValueError(f"{spec!r} ships with the package and cannot be unregistered")
    if codecs().pop(spec, None) is None:
        raise UnknownSpec(spec)
