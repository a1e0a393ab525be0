"""The spec core: parse, serialize, detect and convert every supported chat markup spec.

Pure Python; imports nothing from Django.

    >>> from editor import formats
    >>> result = formats.parse("<|start|>user<|message|>hi<|end|>", spec="openchatml-2.2")
    >>> result.transcript.messages[0].content
    'hi'
"""

from __future__ import annotations

# ``detect`` is the function: importing ``.parsing`` (which imports the submodule ``.detect``)
# binds the package attribute to the module first, and the import of the function wins.
from .codecs.bodytext import logical_text
from .codecs.json_depth import MAX_DEPTH as MAX_JSON_DEPTH
from .codecs.json_depth import loads as load_json
from .diagnostics import CODES, Diagnostic, Diagnostics, ParseError, first_error, has_errors
from .model import CALL, END, RETURN, Message, Transcript
from .parsing import ParseResult, detect, parse, parse_read, serialize
from .specinfo import SpecInfo, Vocabulary
from .specs import (
    CHAT_DATASET_SPEC,
    DEFAULT_SPEC,
    SPEC_IDS,
    TEXT_SPECS,
    Codec,
    UnknownSpec,
    get_codec,
    is_spec,
    register,
    spec_ids,
    spec_info,
    unregister,
)
from .words import Badge, PartContext

__all__ = [
    "CALL",
    "CHAT_DATASET_SPEC",
    "CODES",
    "DEFAULT_SPEC",
    "END",
    "MAX_JSON_DEPTH",
    "RETURN",
    "SPEC_IDS",
    "TEXT_SPECS",
    "Badge",
    "Codec",
    "Diagnostic",
    "Diagnostics",
    "Message",
    "ParseError",
    "ParseResult",
    "PartContext",
    "SpecInfo",
    "Transcript",
    "UnknownSpec",
    "Vocabulary",
    "detect",
    "first_error",
    "get_codec",
    "has_errors",
    "is_spec",
    "load_json",
    "logical_text",
    "parse",
    "parse_read",
    "register",
    "serialize",
    "spec_ids",
    "spec_info",
    "unregister",
]
