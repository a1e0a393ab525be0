"""The YAML document header of OpenChatML 2.x (2.0 §2, 2.2 §2).

    document  = [header] *message
    header    = fenced / unfenced
    fenced    = "---" EOL yaml ("---" / "...") EOL     ; closing fence on a line of its own
    unfenced  = KEY ":" … up to the first line that begins with "<|start|>"

An unfenced header ends at a *line-start* ``<|start|>`` because the spec's own header example
lists the control tokens (``tokens: ["<|start|>", …]``) inside the YAML; with no line-start
``<|start|>`` it ends at the first ``<|start|>`` anywhere, else at the end of the text.

The YAML is untrusted: it is read with the safe loader, at most ``MAX_HEADER_CHARS``
characters, and its node graph is measured *before* construction so that alias bombs
("billion laughs") and recursive aliases are rejected in time linear in the header size.
Timestamps stay strings and every value is made JSON-representable, because the header is
part of the canonical JSON form; ``version`` keeps its exact text (``2.10`` is not ``2.1``).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import yaml

from ..diagnostics import Diagnostics

try:  # libyaml is several times faster; the pure-Python loader behaves the same
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _SafeLoader

FENCED = "fenced"
UNFENCED = "unfenced"

FENCE = "---"
FENCE_CLOSERS = ("---", "...")
START = "<|start|>"
LINE_START = "\n" + START
MAX_HEADER_CHARS = 64 * 1024
MAX_NODES = 10_000  # YAML nodes after alias expansion; a 64 KiB header has far fewer

KEY_LINE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*[ \t]*:(?:[ \t]|$)")
NUMBER_RE = re.compile(r"[0-9]+(?:\.[0-9]+)*")
VERSION_TAGS = frozenset({"tag:yaml.org,2002:float", "tag:yaml.org,2002:int"})
TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
HSPACE = " \t\r"


# Every level of YAML nesting takes one of these characters ("[", "{", "- ", "? ", or a
# "key:" indented further). libyaml's composer recurses in C, where 30 000 levels overflow
# the stack and kill the process; the pure-Python one recurses in Python and stops with a
# RecursionError. A header with more indicators than this goes to the Python loader.
NESTING_INDICATORS = "[{-?:"
MAX_INDICATORS_FOR_LIBYAML = 2_000


def _without_timestamps(loader: type) -> type:
    """``loader`` without implicit timestamps: dates stay the strings that were written."""
    resolvers = {
        first: [(tag, regexp) for tag, regexp in found if tag != TIMESTAMP_TAG]
        for first, found in loader.yaml_implicit_resolvers.items()
    }
    return type(f"Header{loader.__name__}", (loader,), {"yaml_implicit_resolvers": resolvers})


_HeaderLoader = _without_timestamps(_SafeLoader)
_DeepHeaderLoader = _without_timestamps(yaml.SafeLoader)


def _loader_for(text: str):
    indicators = sum(text.count(char) for char in NESTING_INDICATORS)
    return (_HeaderLoader if indicators <= MAX_INDICATORS_FOR_LIBYAML else _DeepHeaderLoader)(text)


class HeaderSpan(NamedTuple):
    form: str | None  # FENCED, UNFENCED, or None when the text has no header
    yaml_start: int
    yaml_end: int
    end: int  # where the header ends, its closing fence line included
    closed: bool  # False for a fenced header whose closing fence is missing


NO_HEADER = HeaderSpan(None, 0, 0, 0, True)


def _line_end(src: str, pos: int) -> int:
    """Offset just after the line starting at ``pos`` (its newline included)."""
    newline = src.find("\n", pos)
    return len(src) if newline == -1 else newline + 1


def find_header(src: str, *, final: bool = True) -> HeaderSpan | None:
    """Where the header of ``src`` is; None when ``final`` is false and more text could change it.

    header-form = fenced / unfenced / none   ; decided by the first line
    """
    first_end = src.find("\n")
    if first_end == -1:
        if not final and not src.startswith("<"):
            return None
        first_end = len(src)
    first_line = src[:first_end].lstrip("\ufeff")
    if first_line.rstrip(HSPACE) == FENCE:
        return _find_fenced(src, first_end + 1, final)
    if KEY_LINE_RE.match(first_line):
        return _find_unfenced(src, final)
    return NO_HEADER


def _find_fenced(src: str, yaml_start: int, final: bool) -> HeaderSpan | None:
    """fenced = "---" EOL yaml ("---" / "...") EOL"""
    pos = yaml_start
    while pos < len(src):
        line_end = _line_end(src, pos)
        if src[pos:line_end].rstrip(HSPACE + "\n") in FENCE_CLOSERS and (
            line_end < len(src) or src.endswith("\n") or final
        ):
            return HeaderSpan(FENCED, yaml_start, pos, line_end, True)
        pos = line_end
    if not final:
        return None
    span = _find_unfenced(src, final)
    return HeaderSpan(FENCED, 0, span.yaml_end, span.end, False)


def _find_unfenced(src: str, final: bool) -> HeaderSpan | None:
    """unfenced = KEY ":" … up to the first line that begins with "<|start|>" """
    at = src.find(LINE_START)
    if at != -1:
        return HeaderSpan(UNFENCED, 0, at + 1, at + 1, True)
    if not final:
        return None
    at = src.find(START)
    end = len(src) if at == -1 else at
    return HeaderSpan(UNFENCED, 0, end, end, True)


class Header(NamedTuple):
    span: HeaderSpan
    value: dict[str, Any]


def read_header(src: str, sink: Diagnostics) -> Header:
    """Find and load the header of ``src``; problems go to ``sink`` as E-PARSE-HEADER."""
    span = find_header(src)
    if span.form is None:
        return Header(span, {})
    if not span.closed:
        sink.add("E-PARSE-HEADER", 0, "The header's opening '---' has no closing '---' line")
    if span.yaml_end - span.yaml_start > MAX_HEADER_CHARS:
        sink.add(
            "E-PARSE-HEADER",
            span.yaml_start,
            f"The header is larger than {MAX_HEADER_CHARS // 1024} KiB; it was not read",
        )
        return Header(span, {})
    value = load_yaml(src, span.yaml_start, span.yaml_end, sink)
    return Header(span, value)


def load_yaml(src: str, start: int, end: int, sink: Diagnostics) -> dict[str, Any]:
    """The mapping written in ``src[start:end]``; {} (and E-PARSE-HEADER) when there is none."""
    text = src[start:end]
    loader = _loader_for(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return {}
        if not isinstance(node, yaml.MappingNode):
            sink.add(
                "E-PARSE-HEADER", start, "The header must be a YAML mapping (key: value lines)"
            )
            return {}
        size = expanded_size(node)
        if size is None or size > MAX_NODES:
            sink.add(
                "E-PARSE-HEADER",
                start,
                "The header's aliases expand to too much data (or refer to themselves)",
            )
            return {}
        version = _version_text(node)
        value = _jsonable(loader.construct_document(node))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        offset = start if mark is None else start + _offset_of(text, mark.line, mark.column)
        problem = error.problem or error.context or "malformed YAML"
        sink.add("E-PARSE-HEADER", offset, f"Malformed YAML header: {problem}")
        return {}
    except RecursionError:
        sink.add("E-PARSE-HEADER", start, "The YAML header nests too deep to be read")
        return {}
    except (yaml.YAMLError, ValueError) as error:
        sink.add("E-PARSE-HEADER", start, f"Malformed YAML header: {error}")
        return {}
    finally:
        loader.dispose()
    if version is not None:
        value["version"] = version
    return value


def expanded_size(root: yaml.Node) -> int | None:
    """Node count of ``root`` with every alias expanded; None when an alias contains itself.

    Iterative and memoised per node, so it is linear in the composed (unexpanded) graph.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = min(MAX_NODES + 1, 1 + sum(sizes[id(child)] for child in children))
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            return None
        open_nodes.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                return None
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _version_text(node: yaml.MappingNode) -> str | None:
    for key, value in node.value:
        if (
            isinstance(key, yaml.ScalarNode)
            and key.value == "version"
            and isinstance(value, yaml.ScalarNode)
            and value.tag in VERSION_TAGS
        ):
            return value.value
    return None


def _offset_of(text: str, line: int, column: int) -> int:
    pos = 0
    for _ in range(line):
        newline = text.find("\n", pos)
        if newline == -1:
            return len(text)
        pos = newline + 1
    return min(pos + column, len(text))


def _jsonable(value: Any) -> Any:
    """The same data with JSON types only: keys as strings, sets and tuples as lists."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [_jsonable(v) for v in items]
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def dump_header(header: dict[str, Any], form: str | None) -> str:
    """The canonical text of ``header`` in ``form`` (fenced unless told otherwise); "" if empty."""
    if not header:
        return ""
    rest = dict(header)
    version = rest.pop("version", None)
    lines = ""
    if isinstance(version, str) and NUMBER_RE.fullmatch(version):
        lines = (
            f"version: {version}\n"  # bare, as the spec writes it; load_yaml reads it back as text
        )
    else:
        rest = header
    if rest:
        lines += yaml.safe_dump(rest, sort_keys=False, allow_unicode=True, default_flow_style=False)
    if form == UNFENCED:
        return lines
    return f"{FENCE}\n{lines}{FENCE}\n"
