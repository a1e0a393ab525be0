"""The system and developer messages gpt-oss expects, written the way Harmony writes them.

System message (``system_message``)::

    You are ChatGPT, a large language model trained by OpenAI.
    Knowledge cutoff: 2024-06
    Current date: 2025-08-08

    Reasoning: high

    # Tools

    ## browser
    …
    ## python
    …

    # Valid channels: analysis, commentary, final. Channel must be included for every message.
    Calls to these tools must go to the commentary channel: 'functions'.

(the date line only when a date is given, the reasoning line only with an effort, the
``# Tools`` section only with built-in tools, as gpt-oss declares ``browser`` and ``python``
there, kept verbatim, the last line only when function tools exist). ``read_system_message``
is its inverse: the settings such a message was written from, or None for any other text.

Developer message (``developer_message``)::

    # Instructions

    {instructions}

    # Tools

    ## functions

    namespace functions {

    // {tool description}
    type {name} = (_: {
    // {parameter description}
    {param}: string,
    {opt}?: "celsius" | "fahrenheit", // default: celsius
    }) => any;

    } // namespace functions

Each tool is written by ``tools.typescript_writer`` exactly as openai/harmony's renderer
writes it; ``tools.typescript.parse_namespaces`` reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..tools.typescript_writer import function_type

MODEL_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
REASONING_EFFORTS = ("low", "medium", "high")
DEFAULT_REASONING_EFFORT = "medium"  # what gpt-oss's chat template uses when none is given
DATE_PREFIX = "Current date: "
REASONING_PREFIX = "Reasoning: "
KNOWLEDGE_CUTOFF = "2024-06"
CHANNELS = ("analysis", "commentary", "final")
FUNCTIONS_NAMESPACE = "functions"
TOOLS_SECTION = "# Tools\n\n"
# The tools gpt-oss declares in its system message (function tools go to the developer's).
BUILTIN_NAMESPACES = frozenset({"browser", "python"})
_SIMPLE_TYPES = {
    "string": "string",
    "number": "number",
    "integer": "number",
    "boolean": "boolean",
    "null": "null",
}


def system_message(
    *,
    reasoning_effort: str | None = None,
    current_date: str | None = None,
    has_functions: bool = False,
    builtin_tools: str | None = None,
    identity: str = MODEL_IDENTITY,
    knowledge_cutoff: str = KNOWLEDGE_CUTOFF,
) -> str:
    """``builtin_tools``: the ``# Tools`` section declaring built-in tools, as written."""
    lines = [identity, f"Knowledge cutoff: {knowledge_cutoff}"]
    if current_date:
        lines.append(DATE_PREFIX + current_date)
    if reasoning_effort:
        lines += ["", REASONING_PREFIX + reasoning_effort]
    if builtin_tools:
        lines += ["", builtin_tools]
    lines += [
        "",
        f"# Valid channels: {', '.join(CHANNELS)}. Channel must be included for every message.",
    ]
    if has_functions:
        lines.append(
            f"Calls to these tools must go to the commentary channel: '{FUNCTIONS_NAMESPACE}'."
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class SystemSettings:
    """What a generated system message says beyond the fixed conventions."""

    reasoning_effort: str
    current_date: str | None
    has_functions: bool
    builtin_tools: str | None = None  # the built-in tools' ``# Tools`` section, as written


def read_system_message(text: str) -> SystemSettings | None:
    """The settings ``system_message`` wrote ``text`` from (default identity and cutoff, an
    effort, built-in tools), or None when ``text`` is anything else: only an exact
    regeneration counts, so reading a message as settings and writing it back never changes
    it."""
    lines = text.split("\n")
    date_line = lines[2] if len(lines) > 2 and lines[2].startswith(DATE_PREFIX) else None
    at = 4 if date_line is None else 5
    if len(lines) <= at or not lines[at - 1].startswith(REASONING_PREFIX):
        return None
    effort = lines[at - 1].removeprefix(REASONING_PREFIX)
    if effort not in REASONING_EFFORTS:
        return None
    date = None if date_line is None else date_line.removeprefix(DATE_PREFIX)
    builtins = _builtin_tools_section("\n".join(lines[at + 1 :]))
    for has_functions in (False, True):
        if text == system_message(
            reasoning_effort=effort,
            current_date=date,
            has_functions=has_functions,
            builtin_tools=builtins,
        ):
            return SystemSettings(effort, date, has_functions, builtins)
    return None


# The lines of a system message in gpt-oss's format. Its renderer writes them in this order
# (each optional): identity, cutoff, date | reasoning | # Tools … | channels, function routing;
# chat templates and hand-written prompts vary the order and capitalisation.
CUTOFF_PREFIX = "Knowledge cutoff: "
CHANNELS_PREFIX = "# Valid channels: "
ROUTING_PREFIX = "Calls to these tools must go to the commentary channel: "
TOOLS_HEADING = "# Tools"
# The lines that open a section (``# Tools`` is a line of its own)
LINE_PREFIXES = (CUTOFF_PREFIX, DATE_PREFIX, REASONING_PREFIX, CHANNELS_PREFIX, ROUTING_PREFIX)
# A message is gpt-oss's only when it says one of these (or declares built-in tools): an
# identity line alone is any prompt.
DISTINCTIVE = frozenset({CUTOFF_PREFIX, REASONING_PREFIX, CHANNELS_PREFIX})


def is_system_message(text: str) -> bool:
    """Whether ``text`` is a system message in gpt-oss's format: sections its renderer or its
    chat template writes (an identity line — any one line of no other kind —,
    ``Knowledge cutoff:``, ``Current date:``,
    ``Reasoning: low|medium|high``, a ``# Tools`` section, ``# Valid channels: …``, the
    ``functions`` routing line), each at most once, in any order and capitalisation,
    separated by blank lines or not, with at least a cutoff, reasoning or channels line or a
    ``# Tools`` section of built-in tools. Such a message is *the* system message, whatever
    its settings and layout: kept as written, never generated again nor read as
    instructions."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    seen: set[str] = set()
    builtins = identity = False
    at = 0
    while at < len(lines):
        line = lines[at]
        at += 1
        if not line.strip():
            continue
        kind = _system_line_kind(line)
        if kind is None:  # one line of another kind, wherever it stands: the model's identity
            if identity:
                return False
            identity = True
            continue
        if kind in seen:
            return False
        if kind == REASONING_PREFIX and _value(line, kind) not in REASONING_EFFORTS:
            return False
        seen.add(kind)
        if kind == TOOLS_HEADING:  # its namespaces run up to the next section of the message
            namespaces = []
            while at < len(lines) and _system_line_kind(lines[at]) is None:
                if lines[at].startswith("## "):
                    namespaces.append(lines[at][3:].strip())
                at += 1
            builtins = bool(namespaces) and set(namespaces) <= BUILTIN_NAMESPACES
    return builtins or not DISTINCTIVE.isdisjoint(seen)


def _system_line_kind(line: str) -> str | None:
    folded = line.strip().casefold()
    if folded == TOOLS_HEADING.casefold():
        return TOOLS_HEADING
    return next((kind for kind in LINE_PREFIXES if folded.startswith(_folded(kind))), None)


def _folded(prefix: str) -> str:
    return prefix.casefold().rstrip()


def _value(line: str, prefix: str) -> str:
    """What a section line says after its prefix, in lower case."""
    return line.strip().casefold().removeprefix(_folded(prefix)).strip()


def _builtin_tools_section(rest: str) -> str | None:
    """The ``# Tools`` section at the start of ``rest`` (what follows the reasoning line and
    its blank line) when every namespace it declares is a gpt-oss built-in; it runs up to the
    blank line before the channels line."""
    end = rest.rfind("\n\n# Valid channels: ")
    if not rest.startswith(TOOLS_SECTION) or end < 0:
        return None
    section = rest[:end]
    headings = [line[3:] for line in section.split("\n") if line.startswith("## ")]
    if not headings or not section.startswith(TOOLS_SECTION + "## "):
        return None
    return section if set(headings) <= BUILTIN_NAMESPACES else None


def developer_message(instructions: str | None, tools: list[dict[str, Any]]) -> str:
    """``# Instructions`` (when given) then ``# Tools`` (when any) in Harmony layout."""
    sections = []
    if instructions:
        sections.append(f"# Instructions\n\n{instructions}")
    if tools:
        sections.append(f"# Tools\n\n## {FUNCTIONS_NAMESPACE}\n\n{tools_namespace(tools)}")
    return "\n\n".join(sections)


def tools_namespace(tools: list[dict[str, Any]], namespace: str = FUNCTIONS_NAMESPACE) -> str:
    """OpenAI ``tools`` entries (``{"type": "function", "function": {…}}``) as a namespace."""
    blocks = [function_type(_function_of(tool)) for tool in tools]
    body = "\n\n".join(blocks)
    return f"namespace {namespace} {{\n\n{body}\n\n}} // namespace {namespace}"


def _function_of(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function", tool)
    return function if isinstance(function, dict) else {}
