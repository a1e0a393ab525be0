"""Collect the tools a transcript declares, with their argument schemas.

Three places declare tools, looked at in this order (the first declaration of a name wins):

| where | form | tool key |
|---|---|---|
| ``Transcript.attrs["tools"]`` (openai-messages) | ``[{"type": "function", "function": {name, parameters}}]`` | ``functions.NAME`` |
| a ``<|function_list|>`` section of a v0.1 system message | JSON objects of the same shape, one or more, or a JSON array | ``functions.NAME`` |
| a developer or system message of any spec | TypeScript ``namespace NS { type NAME = (_: {…}) => any; }`` | ``NS.NAME`` |

A call addresses a tool by its recipient (``to=functions.NAME``); a v0.1 call by its bare
``name``, looked up as ``functions.NAME``.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from ..codecs import json_depth
from ..codecs.bodytext import logical_text
from ..model import Transcript
from .typescript import parse_namespaces

FUNCTIONS_PREFIX = "functions."
FUNCTION_LIST_TOKEN = "<|function_list|>"
DECLARING_ROLES = frozenset({"developer", "system"})


class ToolSchema(NamedTuple):
    """A declared tool (immutable; a tuple: every record of a dataset builds its own)."""

    key: str  # `functions.get_weather`
    parameters: dict[str, Any]  # a JSON Schema for the arguments object
    description: str | None
    message_index: int | None  # the declaring message; None for document-level `tools`


def qualified(name: str) -> str:
    return name if "." in name else FUNCTIONS_PREFIX + name


def _from_openai(entry: Any, index: int | None) -> ToolSchema | None:
    if not isinstance(entry, dict):
        return None
    function = entry.get("function", entry)
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return None
    params = function.get("parameters")
    return ToolSchema(
        key=qualified(function["name"]),
        parameters=params if isinstance(params, dict) else {},
        description=function.get("description")
        if isinstance(function.get("description"), str)
        else None,
        message_index=index,
    )


def json_values(text: str) -> list[Any]:
    """Every top-level JSON value written one after another in ``text`` (prose between them
    ends the scan)."""
    return _json_run(text)[0]


def _json_run(text: str) -> tuple[list[Any], str]:
    """``json_values`` and the text after them (from the first thing that is not JSON)."""
    if json_depth.excess_nesting(text) is not None:
        return [], text
    decoder = json.JSONDecoder()
    values = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return values, ""
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return values, text[pos:]
        values.append(value)


def function_list_sections(content: str) -> list[str]:
    """The text after each ``<|function_list|>`` up to the next one (v0.1 writes the token as
    both opener and closer) or the end of the body."""
    parts = content.split(FUNCTION_LIST_TOKEN)
    return parts[1:]


def function_list_tools(section: str) -> list[dict[str, Any]] | None:
    """The OpenAI tool entries a ``<|function_list|>`` section consists of, or None when it
    holds anything else (prose, a non-tool value): then it is text, not only declarations."""
    values, rest = _json_run(section)
    entries = [e for v in values for e in (v if isinstance(v, list) else [v])]
    if rest or not entries or any(_from_openai(e, None) is None for e in entries):
        return None
    return entries


def _from_function_lists(content: str, index: int) -> list[ToolSchema]:
    found = []
    for section in function_list_sections(content):
        for value in json_values(section):
            for entry in value if isinstance(value, list) else [value]:
                if (tool := _from_openai(entry, index)) is not None:
                    found.append(tool)
    return found


def declared_tools(transcript: Transcript) -> list[dict[str, Any]]:
    """The document-level ``tools`` entries that are objects. ShareGPT datasets often store
    ``tools`` as a JSON-encoded string; it is decoded here, and anything else is ignored."""
    tools = transcript.attrs.get("tools")
    if isinstance(tools, str):
        tools = next(iter(json_values(tools)), None)
    if not isinstance(tools, list):
        return []
    return [entry for entry in tools if isinstance(entry, dict)]


def collect(transcript: Transcript) -> dict[str, ToolSchema]:
    """Every declared tool of ``transcript`` by key (see the table in the module docstring)."""
    tools: dict[str, ToolSchema] = {}
    for entry in declared_tools(transcript):
        _add(tools, _from_openai(entry, None))
    for index, message in enumerate(transcript.messages):
        if message.role not in DECLARING_ROLES:
            continue
        content = logical_text(transcript.spec, message.content)
        if FUNCTION_LIST_TOKEN in content:
            for tool in _from_function_lists(content, index):
                _add(tools, tool)
        for signature in parse_namespaces(content):
            _add(
                tools,
                ToolSchema(
                    key=signature.qualified_name,
                    parameters=signature.parameters or {"type": "object", "properties": {}},
                    description=signature.description,
                    message_index=index,
                ),
            )
    return tools


def _add(tools: dict[str, ToolSchema], tool: ToolSchema | None) -> None:
    """The first declaration of a name wins."""
    if tool is not None and tool.key not in tools:
        tools[tool.key] = tool
