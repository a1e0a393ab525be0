"""Call arguments against the parameters a tool declares (JSON Schema 2020-12).

Two engines, each where it is right:

* jsonschema-rs answers the common question first — are these arguments valid? — many times
  faster than jsonschema (most calls in a dataset are valid);
* jsonschema explains arguments found invalid: its messages and JSON paths are what
  E-CALL-SCHEMA reports, and it alone decides for a schema holding NaN or an infinity.

Arguments holding NaN or an infinity (Python's JSON decoder accepts them) are one error:
JSON has no such numbers.

A schema with a ``pattern`` (or ``patternProperties``) is checked and explained by
jsonschema-rs alone. JSON Schema patterns are ECMA-262 regular expressions, which
jsonschema-rs implements in bounded time; jsonschema hands them to Python's backtracking
``re``, where a declared ``^(a+)+$`` and 30 characters of arguments take minutes (found
here: any transcript could stall a web worker). A pattern jsonschema-rs cannot compile (Python
syntax such as ``\\Z``) makes the schema unusable.
``tests/formats/test_arguments.py`` checks the engines agree on everything else.

A ``$ref`` resolves inside the schema (or to a JSON Schema metaschema) only: a declared schema
is user input, and fetching the URL it names would let any transcript make the server
request any address. An unresolvable reference makes the schema unusable too.
"""

from __future__ import annotations

import json
import marshal
import math
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema_specifications import REGISTRY as METASCHEMAS
from referencing.exceptions import Unresolvable

# Keywords whose values are regular expressions.
REGEX_KEYWORDS = ('"pattern"', '"patternProperties"')
CACHED_SCHEMAS = 256
NOT_FINITE = "$: NaN and Infinity are not JSON numbers (RFC 8259)"
RS_ERRORS = (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError)


class UnusableSchema(Exception):
    """The schema cannot check anything: why, as W-TOOL-SCHEMA-INVALID says it."""


@dataclass(frozen=True)
class ParametersSchema:
    fast: jsonschema_rs.Validator | None
    explaining: Draft202012Validator | None  # None: jsonschema-rs explains (patterns)

    def errors(self, arguments: Any) -> list[str]:
        """One ``$.path: message`` per schema error, in path order; [] when valid."""
        if not _finite(arguments):
            # Python's JSON decoder reads them; JSON has no such numbers, and jsonschema's
            # multipleOf raises on an infinity.
            return [NOT_FINITE]
        if self.explaining is None:
            return _explained_by_rs(self.fast, arguments)
        if self.fast is not None and self.fast.is_valid(arguments):
            return []
        try:
            found = sorted(
                self.explaining.iter_errors(arguments),
                key=lambda e: list(map(str, e.absolute_path)),
            )
        except Unresolvable as err:
            raise UnusableSchema(f"unresolvable reference {err.ref}") from None
        return [f"{error.json_path}: {error.message}" for error in found]


def _explained_by_rs(validator: jsonschema_rs.Validator, arguments: Any) -> list[str]:
    found = sorted(validator.iter_errors(arguments), key=lambda e: list(map(str, e.instance_path)))
    return [f"{_json_path(error.instance_path)}: {error.message}" for error in found]


def _json_path(path) -> str:
    """``$.a[0].b``, as jsonschema writes an error's path."""
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


def _finite(value: Any) -> bool:
    """False when ``value`` holds NaN or an infinity (which the engines also compare
    differently, e.g. -Infinity against a minimum). Decoded JSON: its nesting is bounded
    (``json_depth``), so the recursion is too; most arguments are a few strings, looked at
    once each, where encoding them all would copy them."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        return all(map(_finite, value.values()))
    if kind is list:
        return all(map(_finite, value))
    return True


def parameters_schema(schema: Any) -> ParametersSchema:
    """The checker of a declared parameters schema; UnusableSchema when it is not one.

    Cached by the schema's ``marshal`` form: checking a schema against the metaschema costs
    far more than a parse, and a dataset declares the same tools on every record. Version 2
    of the format writes every value out (no back-references, so equal schemas give equal
    bytes however their objects are shared), keeps types apart (``true`` is not ``1``, ``1.0``
    not ``1``) and is three times cheaper than ``repr``."""
    try:
        key: bytes | str = marshal.dumps(schema, 2)
    except ValueError:  # not decoded JSON: a value marshal cannot write
        key = repr(schema)
    compiled = _COMPILED.get(key)
    if compiled is None:
        if len(_COMPILED) >= CACHED_SCHEMAS:
            _COMPILED.clear()
        compiled = _COMPILED[key] = _compiled(schema)
    if isinstance(compiled, str):
        raise UnusableSchema(compiled)
    return compiled


_COMPILED: dict[bytes | str, ParametersSchema | str] = {}


def _compiled(schema: Any) -> ParametersSchema | str:
    """The checker of ``schema``, or why it is not a schema. It checks with its own copy:
    the caller's may be edited after it is cached."""
    schema_json = json.dumps(schema, sort_keys=True, default=str)
    schema = json.loads(schema_json)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as err:
        return err.message
    has_regex = any(keyword in schema_json for keyword in REGEX_KEYWORDS)
    try:
        fast = jsonschema_rs.Draft202012Validator(schema, offline=True)
    except RS_ERRORS as err:
        if has_regex:
            return str(err).splitlines()[0]
        fast = None  # e.g. an unresolvable $ref: jsonschema reports it when it meets it
    if has_regex:
        return ParametersSchema(fast, None)
    if not _finite(schema):
        fast = None  # NaN or an infinity in the schema: jsonschema alone (see _finite)
    return ParametersSchema(fast, Draft202012Validator(schema, registry=METASCHEMAS))
