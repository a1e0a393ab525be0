"""Read the TypeScript subset Harmony uses to declare tools, as JSON Schema.

The subset (gpt-oss developer messages, OpenChatML 2.2 §16.2)::

    file      = *( namespace / other )
    namespace = "namespace" IDENT "{" *( comment / function ) "}"
    function  = *comment "type" IDENT "=" "(" [ IDENT ":" type ] ")" "=>" IDENT [";"]
    type      = [ "|" ] postfix *( "|" postfix )
    postfix   = primary *( "[" "]" )
    primary   = "string" / "number" / "integer" / "boolean" / "null" / "any" / "unknown"
              / "object" / STRING / NUMBER / "true" / "false" / "(" type ")"
              / "Array" "<" type ">" / "{" *property "}"
    property  = *comment IDENT [ "?" ] ":" type [ "," / ";" ] [ comment ]   ; same line
              / *comment IDENT [ "?" ] ":" 1*( LF "|" variant [ comment ] ) LF ","

Comments (``// …`` and ``/* … */``) written before a property, or after it on the same
line, become its ``description``; a comment ``default: X`` becomes its ``default`` (X read
as JSON when it is JSON, else as a string); a first comment followed by an empty ``//`` is
its ``title``; ``// Examples:`` then ``// - "x"`` lines are its ``examples``. Comments before
``type`` describe the tool; comments between ``:`` and ``{`` describe that object. ``T | null``
is ``T`` with ``nullable: true``; variants written one a line under their property (each
``| T`` starting a line, as openai/harmony writes ``oneOf``) are its ``oneOf``, each with its
own trailing comment. ``() => any`` declares no parameters. ``tools.typescript_writer``
writes this subset.

Robust by construction: ``parse_namespaces`` never raises. A construct outside the subset
becomes the empty schema ``{}`` (anything goes) and parsing resumes after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..codecs import json_depth

# One lexer pass with a non-backtracking alternation: comments, strings, numbers, words,
# the arrow, and single punctuation characters. Anything else is skipped.
_TOKEN_RE = re.compile(
    r"""
    (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>-?\d+(?:\.\d+)?)
  | (?P<word>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<arrow>=>)
  | (?P<punct>[{}()\[\]<>:;,?|=&.])
    """,
    re.VERBOSE | re.DOTALL,
)

_PRIMITIVES = {
    "string": {"type": "string"},
    "number": {"type": "number"},
    "integer": {"type": "integer"},
    "boolean": {"type": "boolean"},
    "null": {"type": "null"},
    "object": {"type": "object"},
    "any": {},
    "unknown": {},
}
_DEFAULT_PREFIX = "default:"
_EXAMPLES = "Examples:"
# A variant's trailing comment: its description, then its default ("desc default: 20").
_VARIANT_COMMENT = re.compile(r"(?:(?P<description>.*?) )?default: (?P<default>.*)|(?P<text>.*)")
_MAX_DEPTH = 64  # nesting beyond this is treated as an unknown construct, not recursed into


@dataclass(frozen=True)
class _Tok:
    kind: str  # comment / string / number / word / arrow / punct / eof
    text: str
    line: int
    start: int  # offset of the token in the parsed text


@dataclass
class ToolSignature:
    """One ``type NAME = (_: {…}) => any;`` of a namespace, as an OpenAI-style function."""

    namespace: str
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None  # None: ``() => any``, no parameters declared

    @property
    def qualified_name(self) -> str:
        """The recipient a call to this tool is addressed to: ``functions.get_weather``."""
        return f"{self.namespace}.{self.name}"

    def to_openai_tool(self) -> dict[str, Any]:
        function: dict[str, Any] = {"name": self.name}
        if self.description:
            function["description"] = self.description
        if self.parameters is not None:
            function["parameters"] = self.parameters
        return {"type": "function", "function": function}


def _lex(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    line = 1
    pos = 0
    for match in _TOKEN_RE.finditer(text):
        line += text.count("\n", pos, match.start())
        kind = match.lastgroup or "punct"
        if kind in ("line_comment", "block_comment"):
            kind = "comment"
        out.append(_Tok(kind, match.group(), line, match.start()))
        pos = match.start()
    out.append(_Tok("eof", "", line + text.count("\n", pos), len(text)))
    return out


def _comment_text(raw: str) -> str:
    if raw.startswith("//"):
        return raw[2:].strip()
    inner = raw[2:-2]
    return "\n".join(part.strip().lstrip("*").strip() for part in inner.splitlines()).strip()


def _json_or_string(text: str) -> Any:
    try:
        return json_depth.loads(text)
    except ValueError:
        return text


def _apply_comments(schema: dict[str, Any], comments: list[str]) -> dict[str, Any]:
    if len(comments) > 1 and comments[0] and not comments[1]:
        schema["title"], comments = comments[0], comments[2:]
    if _EXAMPLES in comments:
        at = comments.index(_EXAMPLES)
        end = at + 1
        while end < len(comments) and comments[end].startswith("- "):
            end += 1
        schema["examples"] = [_json_or_string(c[2:]) for c in comments[at + 1 : end]]
        comments = comments[:at] + comments[end:]
    descriptions = []
    for comment in comments:
        if comment.lower().startswith(_DEFAULT_PREFIX):
            schema["default"] = _json_or_string(comment[len(_DEFAULT_PREFIX) :].strip())
        elif comment:
            descriptions.append(comment)
    if descriptions:
        schema["description"] = "\n".join(descriptions)
    return schema


class _Parser:
    def __init__(self, text: str):
        self.toks = _lex(text)
        self.i = 0

    # --- cursor -------------------------------------------------------------------------
    def peek(self, skip_comments: bool = True) -> _Tok:
        j = self.i
        while skip_comments and self.toks[j].kind == "comment":
            j += 1
        return self.toks[j]

    def next(self) -> _Tok:
        while self.toks[self.i].kind == "comment":
            self.i += 1
        tok = self.toks[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def accept(self, text: str) -> bool:
        if self.peek().text == text and self.peek().kind != "string":
            self.next()
            return True
        return False

    def comments(self) -> list[str]:
        """Consume the comments at the cursor and return their texts."""
        out = []
        while self.toks[self.i].kind == "comment":
            out.append(_comment_text(self.toks[self.i].text))
            self.i += 1
        return out

    def trailing_comments(self, line: int) -> list[str]:
        """Consume comments that sit on ``line`` (after a property, before the newline)."""
        out = []
        while self.toks[self.i].kind == "comment" and self.toks[self.i].line == line:
            out.append(_comment_text(self.toks[self.i].text))
            self.i += 1
        return out

    def skip_balanced(self, stop: frozenset[str]) -> None:
        """Skip an unknown construct up to (not past) a ``stop`` token at nesting depth 0."""
        depth = 0
        pairs = {"{": "}", "(": ")", "[": "]", "<": ">"}
        closers = set(pairs.values())
        while (tok := self.peek()).kind != "eof":
            if depth == 0 and tok.text in stop:
                return
            if tok.kind == "punct" and tok.text in pairs:
                depth += 1
            elif tok.kind == "punct" and tok.text in closers:
                if depth == 0:
                    return
                depth -= 1
            self.next()

    # --- grammar ------------------------------------------------------------------------
    def namespaces(self) -> list[ToolSignature]:
        tools: list[ToolSignature] = []
        while self.peek().kind != "eof":
            tok = self.next()
            if tok.kind == "word" and tok.text == "namespace" and self.peek().kind == "word":
                name = self.next().text
                if self.accept("{"):
                    tools.extend(self.namespace_body(name))
        return tools

    def namespace_body(self, namespace: str) -> list[ToolSignature]:
        tools = []
        while True:
            comments = self.comments()
            tok = self.peek()
            if tok.kind == "eof" or self.accept("}"):
                return tools
            if tok.kind == "word" and tok.text == "type":
                self.next()
                tool = self.function(namespace, comments)
                if tool is not None:
                    tools.append(tool)
            else:
                self.next()

    def function(self, namespace: str, comments: list[str]) -> ToolSignature | None:
        if self.peek().kind != "word":
            return None
        name = self.next().text
        tool = ToolSignature(namespace=namespace, name=name)
        descriptions = [c for c in comments if c]
        if descriptions:
            tool.description = "\n".join(descriptions)
        if not (self.accept("=") and self.accept("(")):
            self.skip_balanced(frozenset({";", "type"}))
            self.accept(";")
            return tool
        if not self.accept(")"):
            if self.peek().kind == "word":
                self.next()
            if self.accept(":"):
                tool.parameters = self.type_expr(0)
            else:
                tool.parameters = {"type": "object", "properties": {}}
            self.skip_balanced(frozenset({")"}))
            self.accept(")")
        if self.accept("=>"):
            self.type_expr(0)  # the return type (`any`) carries nothing we keep
        self.accept(";")
        return tool

    def type_expr(self, depth: int) -> dict[str, Any]:
        if depth > _MAX_DEPTH:
            self.skip_balanced(frozenset({",", ";", ")", "}", "|"}))
            return {}
        described = self.comments()  # between ":" and "{": the object's own description
        self.accept("|")
        options = [self.postfix(depth)]
        while self.accept("|"):
            options.append(self.postfix(depth))
        schema = _union(options)
        if described and schema.get("type") == "object":
            schema = {"description": "\n".join(described), **schema}
        return schema

    def variants(self, depth: int) -> dict[str, Any]:
        """``oneOf`` written one variant a line: each line ``| T [| U…] [// comment]``."""
        variants = []
        while self.peek().text == "|" and self.peek().kind == "punct":
            line = self.next().line
            options = [self.postfix(depth)]
            while self.peek().text == "|" and self.peek().line == line:
                self.next()
                options.append(self.postfix(depth))
            variant = _union(options)
            for comment in self.trailing_comments(self.toks[self.i - 1].line):
                match = _VARIANT_COMMENT.fullmatch(comment)
                if match["default"] is not None:
                    variant["default"] = _json_or_string(match["default"])
                if match["description"] or match["text"]:
                    variant["description"] = match["description"] or match["text"]
            variants.append(variant)
        return {"oneOf": variants}

    def postfix(self, depth: int) -> dict[str, Any]:
        schema = self.primary(depth)
        while self.peek().text == "[" and self.toks_after_peek_is("]"):
            self.next()
            self.next()
            schema = {"type": "array", "items": schema}
        return schema

    def toks_after_peek_is(self, text: str) -> bool:
        j = self.i
        while self.toks[j].kind == "comment":
            j += 1
        return self.toks[j + 1].text == text if j + 1 < len(self.toks) else False

    def primary(self, depth: int) -> dict[str, Any]:
        tok = self.peek()
        if tok.kind == "string":
            self.next()
            return {"const": _json_or_string('"' + tok.text[1:-1] + '"')}
        if tok.kind == "number":
            self.next()
            return {"const": _json_or_string(tok.text)}
        if tok.kind == "word":
            self.next()
            if tok.text in ("true", "false"):
                return {"const": tok.text == "true"}
            if tok.text == "Array" and self.accept("<"):
                items = self.type_expr(depth + 1)
                self.skip_balanced(frozenset({">"}))
                self.accept(">")
                return {"type": "array", "items": items} if items else {"type": "array"}
            if tok.text in _PRIMITIVES:
                return dict(_PRIMITIVES[tok.text])
            # A named type we cannot resolve (or a generic): anything goes.
            if self.peek().text == "<":
                self.next()
                self.skip_balanced(frozenset({">"}))
                self.accept(">")
            return {}
        if self.accept("("):
            inner = self.type_expr(depth + 1)
            self.skip_balanced(frozenset({")"}))
            self.accept(")")
            return inner
        if self.accept("{"):
            return self.object_body(depth + 1)
        self.skip_balanced(frozenset({",", ";", ")", "}", "|"}))
        return {}

    def object_body(self, depth: int) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        while True:
            comments = self.comments()
            tok = self.peek()
            if tok.kind == "eof" or self.accept("}"):
                break
            if tok.kind not in ("word", "string"):
                self.next()
                continue
            self.next()
            name = tok.text[1:-1] if tok.kind == "string" else tok.text
            optional = self.accept("?")
            colon = self.peek()
            if not self.accept(":"):
                self.skip_balanced(frozenset({",", ";"}))
                self.accept(",") or self.accept(";")
                continue
            after = self.peek()
            if after.text == "|" and after.kind == "punct" and after.line > colon.line:
                schema = self.variants(depth)
            else:
                schema = self.type_expr(depth)
            end_line = self.toks[self.i - 1].line
            self.skip_balanced(frozenset({",", ";"}))
            if self.peek().text in (",", ";"):
                end_line = self.next().line
            properties[name] = _apply_comments(schema, comments + self.trailing_comments(end_line))
            if not optional:
                required.append(name)
        out: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            out["required"] = required
        return out


def _union(options: list[dict[str, Any]]) -> dict[str, Any]:
    if len(options) == 1:
        return options[0]
    others = [o for o in options if o != {"type": "null"}]
    if len(options) == 2 and len(others) == 1 and "type" in others[0]:
        return {**others[0], "nullable": True}
    if all(set(o) == {"const"} for o in options):
        values = [o["const"] for o in options]
        kinds = {type(v) for v in values}
        schema: dict[str, Any] = {"enum": values}
        if kinds == {str}:
            schema = {"type": "string", "enum": values}
        return schema
    return {"anyOf": options}


def parse_namespaces(text: str) -> list[ToolSignature]:
    """Every tool of every ``namespace X { … }`` block in ``text``; never raises."""
    if "namespace" not in text:
        return []
    try:
        return _Parser(text).namespaces()
    except (IndexError, RecursionError):  # pragma: no cover - guard for the never-raises promise
        return []
