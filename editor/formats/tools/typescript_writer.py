"""JSON Schema → the TypeScript of a Harmony tool declaration, byte for byte as openai/harmony's
renderer writes it (``typescript`` reads it back).

    declaration = *("// " LINE LF) "type " NAME " = " signature ";"
    signature   = "(_: " type ") => any" / "() => any"          ; the latter without parameters
    type        = oneof / names / object / literals / "string" / "number" / "boolean"
                / type "[]" / "Array<any>" / "any"
    oneof       = 1*(LF INDENT " | " type [" | null"] [" // " comments])   ; "oneOf", any level
    names       = NAME *(" | " NAME)                                      ; "type": [...] lists
    object      = [INDENT "// " DESCRIPTION LF] "{" LF *property INDENT "}"
    property    = [INDENT "// " TITLE LF INDENT "//" LF] [INDENT "// " DESCRIPTION LF]
                  [INDENT "// Examples:" LF 1*(INDENT "// - " QUOTED LF)]
                  INDENT NAME ["?"] ": " type [" | null"] "," [" // default: " DEFAULT] LF
                / the same comments, INDENT NAME ["?"] ":" LF oneof-lines "," LF

Rules of the reference, kept as they are: ``integer`` is ``number``; only ``type: string``
enums become literal unions (any other ``enum``, ``const``, ``anyOf`` and ``type: null`` are
``any``); ``nullable: true`` adds ``| null`` unless the type already says ``null``; a string
default is quoted unless the property is an enum; an array of a union is written ``A | B[]``;
nested types indent by four spaces, ``oneOf`` variants by three.

One departure, so that the declaration stays TypeScript: a description of several lines is
written one ``//`` line each (the reference writes it raw, leaving its later lines
uncommented).
"""

from __future__ import annotations

import json
from typing import Any

PROPERTY_INDENT = "    "
VARIANT_INDENT = "   "


def function_type(function: dict[str, Any]) -> str:
    """``// description`` lines, then ``type NAME = (_: …) => any;``."""
    lines = [f"// {line}" for line in _text_lines(function.get("description"))]
    name = function.get("name") or "unnamed"
    params = function.get("parameters")
    if isinstance(params, dict):
        lines.append(f"type {name} = (_: {type_of(params, '')}) => any;")
    else:
        lines.append(f"type {name} = () => any;")
    return "\n".join(lines)


def type_of(schema: Any, indent: str) -> str:
    if not isinstance(schema, dict):
        return "any"
    variants = schema.get("oneOf")
    if isinstance(variants, list):
        return "".join(
            f"\n{indent} | {_variant(v, indent, enum_defaults_quoted=True)}" for v in variants
        )
    kind = schema.get("type")
    if isinstance(kind, list):
        names = [("number" if k == "integer" else k) for k in kind if isinstance(k, str)]
        return " | ".join(names) if names else "any"
    if kind == "object":
        return _object(schema, indent)
    if kind == "string":
        literals = [f'"{v}"' for v in _enum(schema) if isinstance(v, str)]
        return " | ".join(literals) if literals else "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        return f"{type_of(schema['items'], indent)}[]" if "items" in schema else "Array<any>"
    return "any"


def _object(schema: dict[str, Any], indent: str) -> str:
    out = _comments(indent, schema.get("description"))
    out += "{\n"
    properties = schema.get("properties")
    required = schema.get("required")
    required = set(r for r in required if isinstance(r, str)) if isinstance(required, list) else ()
    if isinstance(properties, dict):
        for name, prop in properties.items():
            out += _property(name, prop if isinstance(prop, dict) else {}, name in required, indent)
    return out + f"{indent}}}"


def _property(name: str, prop: dict[str, Any], required: bool, indent: str) -> str:
    mark = "" if required else "?"
    out = ""
    if isinstance(prop.get("title"), str):
        out += f"{indent}// {prop['title']}\n{indent}//\n"
    variants = prop.get("oneOf")
    if "oneOf" not in prop:
        out += _comments(indent, prop.get("description"))
    examples = prop.get("examples")
    if isinstance(examples, list) and examples:
        out += f"{indent}// Examples:\n"
        out += "".join(f'{indent}// - "{e}"\n' for e in examples if isinstance(e, str))
    if isinstance(variants, list):
        return out + _oneof_property(name, mark, prop, variants, indent)
    out += f"{indent}{name}{mark}: {_nullable(prop, type_of(prop, indent + PROPERTY_INDENT))},"
    if "default" in prop and "oneOf" not in prop:
        out += f" // default: {_default(prop, enum_defaults_quoted=False)}"
    return out + "\n"


def _oneof_property(
    name: str, mark: str, prop: dict[str, Any], variants: list[Any], indent: str
) -> str:
    """A property whose ``oneOf`` variants go one a line under it. Its description goes
    above, unless the first variant has the same one (then neither is written); the first
    variant then says no description of its own."""
    description = prop.get("description") if isinstance(prop.get("description"), str) else None
    first = variants[0] if variants and isinstance(variants[0], dict) else {}
    above = description is not None and first.get("description") != description
    out = f"{indent}// {description}\n" if above else ""
    if "default" in prop:
        out += f"{indent}// default: {_default(prop, enum_defaults_quoted=False)}\n"
    out += f"{indent}{name}{mark}:\n"
    for i, variant in enumerate(variants):
        if i == 0 and above:
            out += f"{indent} | {_variant(variant, indent, describe=False)}\n"
        else:
            out += f"{indent} | {_variant(variant, indent, unless=description)}\n"
    return out + f"{indent},\n"


def _variant(
    variant: Any,
    indent: str,
    *,
    enum_defaults_quoted: bool = False,
    describe: bool = True,
    unless: str | None = None,
) -> str:
    """One ``oneOf`` variant: its type, then its description (when ``describe`` and not
    ``unless``, the property's own) and its default as one comment."""
    if not isinstance(variant, dict):
        return "any"
    text = _nullable(variant, type_of(variant, indent + VARIANT_INDENT))
    comments = []
    description = variant.get("description")
    if describe and isinstance(description, str) and description != unless:
        comments.append(description)
    if "default" in variant:
        comments.append(f"default: {_default(variant, enum_defaults_quoted)}")
    return f"{text} // {' '.join(comments)}" if comments else text


def _nullable(schema: dict[str, Any], text: str) -> str:
    return f"{text} | null" if schema.get("nullable") is True and "null" not in text else text


def _default(schema: dict[str, Any], enum_defaults_quoted: bool) -> str:
    """A string default is quoted, except an enum's below the top level; anything else is
    compact JSON."""
    value = schema["default"]
    if isinstance(value, str) and (enum_defaults_quoted or not _enum(schema)):
        return f'"{value}"' if not _enum(schema) else json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _enum(schema: dict[str, Any]) -> list[Any]:
    values = schema.get("enum")
    return values if isinstance(values, list) else []


def _comments(indent: str, text: Any) -> str:
    if not isinstance(text, str):
        return ""
    return "".join(f"{indent}// {line}\n" for line in text.split("\n"))


def _text_lines(text: Any) -> list[str]:
    """The lines of a tool description as Rust's ``str::lines`` gives them."""
    if not isinstance(text, str) or not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]
