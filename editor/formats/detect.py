"""Which spec a text is written in (docs/formats.md lists the rules).

Token text is told apart by the first message-opening token and a few markers searched with
``str.find`` (linear); JSON by the shape of the decoded value, or, for JSON too broken to
decode even after the mechanical repairs, by the keys in its first ``SNIFF_LIMIT`` characters.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .codecs import json_depth
from .codecs.json_support import LENIENT, repair
from .codecs.scanner import TOKEN_RE

SNIFF_LIMIT = 65536
BOM = "\ufeff"

# The token that opens the first message decides the token-text family.
COMPLETION_START = "<|channel|>"
FAMILY_OPENERS = {
    "start": "ocm",
    "im_start": "openchatml-0.1",
    "fim_prefix": "openchatml-0.1",
    "fim_middle": "openchatml-0.1",
    "fim_suffix": "openchatml-0.1",
    "file_separator": "openchatml-0.1",
    "role": "mms-tokens",
    "content": "mms-tokens",
    "end_turn": "mms-tokens",
}
OCM22_MARKERS = (
    " call_id=",
    " intent=",
    " content_type=",
    "<|literal|>",
    "<<|",
    "<|start|>tool name=",
)
TERMINATORS_2X = ("<|end|>", "<|call|>", "<|return|>")
VERSION_RE = re.compile(r"""^version:[ \t]*["']?([0-9][^\s"'#]*)""", re.MULTILINE)
# `to=` in the start header, i.e. before the header's first `<` (2.0 style); Harmony writes
# it after the channel.
TO_IN_HEADER_RE = re.compile(r"<\|start\|>assistant[^<]*\sto=")
# gpt-oss system prompts: a headerless text without channels yet (a prompt) is Harmony.
HARMONY_PROMPT_MARKERS = ("<|message|>Reasoning: ", "\nReasoning: ", "# Valid channels:")
# What only Harmony writes among channelled headerless texts: `to=` or a bare content type
# (`commentary json`, `analysis to=python code`) after the channel, `<|constrain|>` (not a
# 2.0 token). gpt-oss also puts `to=` in the start header, so these outweigh it.
HARMONY_CHANNEL_RE = re.compile(r"<\|channel\|>[^<\s]+[ \t]+(?:to=|[^<\s=]+[ \t]*<\|message\|>)")
HARMONY_TOKENS = ("<|constrain|>",)

# Sniffing broken JSON: the first matching key decides.
SNIFF_KEYS = (
    ('{"token"', "chatml-json"),
    ('"conversations"', "sharegpt"),
    ('"from"', "sharegpt"),
    ('"end_turn"', "mms"),
    ('"format"', "mms"),
    ('"thread"', "mms"),
    ('"thinking"', "openchatml-json"),
    ('"channel"', "openchatml-json"),
    ('"tool_call"', "openchatml-json"),
    ('"role"', "openai-messages"),
)
MMS_ROLES = ("platform", "context")
SHAREGPT_KEYS = frozenset({"from", "value"})
CHAT_COMPLETIONS_ONLY_KEYS = frozenset({"tool_call_id", "reasoning", "reasoning_content"})


def detect(text: str) -> str | None:
    """The spec id of ``text``, or None when it is none of the supported specs."""
    stripped = text.lstrip(BOM + " \t\r\n")
    if stripped[:1] in ("[", "{") and not stripped.startswith("[BOS]"):
        return detect_json(stripped)
    return detect_tokens(text)


# --- token text ----------------------------------------------------------------------------


def detect_tokens(text: str) -> str | None:
    family = _family(text)
    version = _header_version(text)
    if version is not None:
        return (
            "openchatml-2.0"
            if version in ("2", "2.0") or version.startswith("2.0.")
            else "openchatml-2.2"
        )
    if family == "ocm":
        return _ocm_flavour(text)
    if family is None and text.lstrip(BOM).startswith("[BOS]"):
        return "openchatml-0.1"
    if family is None and text.lstrip(BOM + " \t\r\n").startswith(COMPLETION_START):
        return "harmony"  # a completion: an inference engine's answer after `<|start|>assistant`
    return family


def _family(text: str) -> str | None:
    for match in TOKEN_RE.finditer(text):
        family = FAMILY_OPENERS.get(match.group(2))
        if family is not None and not match.group(1):
            return family
    return None


def _header_version(text: str) -> str | None:
    """The ``version:`` of a YAML header (fenced by ``---`` or not) before the first message."""
    first = text.find("<|start|>")
    head = text[: first if first != -1 else min(len(text), SNIFF_LIMIT)].lstrip(BOM)
    match = VERSION_RE.search(head)
    if match is not None:
        return match.group(1)
    if head.startswith("---") and first != -1:
        return "2.2"  # a fenced header without a version: the current version
    return None


def _ocm_flavour(text: str) -> str:
    if any(marker in text for marker in OCM22_MARKERS):
        return "openchatml-2.2"
    if "<|channel|>" in text:
        if (
            any(marker in text for marker in HARMONY_PROMPT_MARKERS + HARMONY_TOKENS)
            or HARMONY_CHANNEL_RE.search(text)
            or not TO_IN_HEADER_RE.search(text)
        ):
            return "harmony"
        return "openchatml-2.0"
    if any(marker in text for marker in HARMONY_PROMPT_MARKERS):
        return "harmony"
    if any(t in text for t in TERMINATORS_2X):
        return "openchatml-2.0"
    return "chatml"


# --- JSON ----------------------------------------------------------------------------------


def detect_json(text: str) -> str | None:
    value = _decode(text)
    if value is _BROKEN:
        return _sniff(text[:SNIFF_LIMIT])
    if value is JSON_LINES:
        return "openchatml-json"
    return classify(value)


_BROKEN = object()
JSON_LINES = object()


def _decode(text: str) -> Any:
    try:
        return json_depth.loads(text)
    except json.JSONDecodeError as err:
        if err.msg == "Extra data":
            return _decode_lines(text)
    candidate, edits, _ = repair(text)
    if not edits:
        return _BROKEN
    try:
        return json_depth.loads(candidate, LENIENT)
    except json.JSONDecodeError:
        return _BROKEN


def _decode_lines(text: str) -> Any:
    """JSON Lines: only the OpenChatML projection is written that way."""
    first = text[: text.find("\n")] if "\n" in text else text
    try:
        value = json_depth.loads(first)
    except json.JSONDecodeError:
        return _BROKEN
    return JSON_LINES if isinstance(value, dict) else _BROKEN


def _sniff(prefix: str) -> str | None:
    return next((spec for key, spec in SNIFF_KEYS if key in prefix), None)


def classify(value: Any) -> str | None:
    """The JSON spec a decoded document has the shape of."""
    items = _items(value)
    if items is None:
        return None
    dicts = [i for i in items if isinstance(i, dict)]
    keys = set().union(*dicts)  # every key some message has: one pass, in C
    if "token" in keys or (items and not dicts and all(isinstance(i, str) for i in items)):
        return "chatml-json"
    if (isinstance(value, dict) and "conversations" in value) or (
        keys >= SHAREGPT_KEYS and any("from" in d and "value" in d for d in dicts)
    ):
        return "sharegpt"
    if isinstance(value, dict) and "thread" in value:
        return "mms"
    # Every record of a JSONL dataset is classified, so the roles are looked up in C: a
    # list's `in` compares without hashing, whatever a role's value.
    roles = [d.get("role") for d in dicts]
    if "format" in keys or "end_turn" in keys or any(map(roles.__contains__, MMS_ROLES)):
        return "mms"
    if "channel" in keys or "tool_call" in keys:
        return "openchatml-json"
    if "thinking" in keys and not _chat_completions_only(value, keys):
        return "openchatml-json"  # the 2.0 §10 projection: Chat Completions' shape + thinking
    if "role" in keys:
        return "openai-messages"
    return None


def _chat_completions_only(value: Any, keys: set[str]) -> bool:
    """Keys of Chat Completions that OpenChatML's 2.0 §10 projection does not have: a
    document with ``thinking`` and one of these is Chat Completions as gpt-oss's chat
    template, Hugging Face datasets and ollama write it (reasoning under ``thinking``)."""
    return (isinstance(value, dict) and "tools" in value) or not keys.isdisjoint(
        CHAT_COMPLETIONS_ONLY_KEYS
    )


def _items(value: Any) -> list | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("conversations", "messages", "thread"):
            if isinstance(value.get(key), list):
                return value[key]
        if "role" in value:
            return [value]  # one message on its own
    return None
