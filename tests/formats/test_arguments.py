"""Call arguments against declared parameter schemas (editor/formats/validate/arguments.py):
the answer is jsonschema's, jsonschema-rs' quick one included, and references never leave
the schema."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from editor.formats.validate import validate_text
from editor.formats.validate.arguments import NOT_FINITE, UnusableSchema, parameters_schema
from tests.budget import examples

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),  # NaN and infinities too: Python's JSON decoder accepts them
    st.text(max_size=6),
)
INSTANCES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "city"]), inner, max_size=4)
    ),
    max_leaves=12,
)
TYPES = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"])


def _schemas(inner):
    keywords = st.fixed_dictionaries(
        {},
        optional={
            "type": TYPES | st.lists(TYPES, min_size=1, max_size=3, unique=True),
            "enum": st.lists(SCALARS, min_size=1, max_size=3),
            "const": SCALARS,
            "minimum": st.integers(-5, 5),
            "exclusiveMaximum": st.floats(-5, 5, allow_nan=False),
            "multipleOf": st.sampled_from([1, 2, 0.5, 0.1]),
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(0, 3),
            "minItems": st.integers(0, 2),
            "uniqueItems": st.booleans(),
            "items": inner,
            "prefixItems": st.lists(inner, min_size=1, max_size=2),
            "contains": inner,
            "properties": st.dictionaries(st.sampled_from(["a", "b", "city"]), inner, max_size=2),
            "required": st.lists(st.sampled_from(["a", "b", "city"]), max_size=2, unique=True),
            "additionalProperties": st.booleans() | inner,
            "propertyNames": st.fixed_dictionaries({"maxLength": st.integers(0, 3)}),
            "minProperties": st.integers(0, 2),
            "dependentRequired": st.fixed_dictionaries({"a": st.just(["b"])}),
            "anyOf": st.lists(inner, min_size=1, max_size=2),
            "oneOf": st.lists(inner, min_size=1, max_size=2),
            "allOf": st.lists(inner, min_size=1, max_size=2),
            "not": inner,
            "if": inner,
            "then": inner,
            "else": inner,
            "format": st.sampled_from(["date", "email", "uri"]),
        },
    )
    return st.booleans() | keywords


SCHEMAS = st.recursive(st.booleans() | st.just({}), _schemas, max_leaves=6)


@settings(max_examples=examples(300), deadline=None)
@given(schema=SCHEMAS, instances=st.lists(INSTANCES, min_size=1, max_size=5))
def test_the_answer_is_jsonschemas_answer(schema, instances):
    assume(_valid_schema(schema))  # parameters_schema() refuses the others first
    checker = parameters_schema(schema)
    explaining = Draft202012Validator(schema)
    for instance in instances:
        if _finite(instance):
            assert (checker.errors(instance) == []) == explaining.is_valid(instance), (
                schema,
                instance,
            )
        else:
            assert checker.errors(instance) == [NOT_FINITE]


def _finite(value) -> bool:
    return all(math.isfinite(v) for v in _numbers(value))


def _numbers(value):
    if isinstance(value, float):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)


def test_nan_and_infinity_are_not_json_numbers():
    # Python's decoder reads them; jsonschema-rs took -Infinity to satisfy a minimum, and
    # jsonschema's multipleOf raised OverflowError on an infinity.
    checker = parameters_schema({"type": "object", "properties": {"a": {"multipleOf": 0.5}}})
    for value in (float("-inf"), float("inf"), float("nan")):
        assert checker.errors({"a": value}) == [NOT_FINITE]
    text = _tool_call_document({"type": "object"}, calls=1).replace(
        '"{}"', json.dumps('{"a": -Infinity}')
    )
    assert _codes(text) == [("E-CALL-SCHEMA", f"functions.f: {NOT_FINITE}")]


def _valid_schema(schema) -> bool:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return False
    return True


def test_errors_are_jsonschemas_messages_in_path_order():
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
        "required": ["city"],
    }
    checker = parameters_schema(schema)
    assert checker.errors({"city": "Oslo", "unit": "celsius"}) == []
    assert checker.errors({"city": 3, "unit": "kelvin"}) == [
        "$.city: 3 is not of type 'string'",
        "$.unit: 'kelvin' is not one of ['celsius', 'fahrenheit']",
    ]


def test_a_pattern_is_an_ecma_262_regular_expression():
    # JSON Schema's patterns are ECMA-262 ones: \d is an ASCII digit (Python's re: any digit).
    checker = parameters_schema({"type": "string", "pattern": r"^\d+$"})
    assert checker.explaining is None
    assert checker.errors("42") == []
    assert checker.errors("٣") == ['$: "٣" does not match "^\\d+$"']


def test_pattern_errors_name_their_paths_in_order():
    checker = parameters_schema(
        {
            "type": "object",
            "properties": {
                "b": {"type": "array", "items": {"pattern": "^x"}},
                "a": {"type": "string", "pattern": "^[a-z]+$"},
            },
            "patternProperties": {"^n_": {"type": "integer"}},
        }
    )
    assert checker.errors({"a": "ok", "b": ["x1"], "n_1": 3}) == []
    assert checker.errors({"a": "NO", "b": ["x", "y"], "n_1": "3"}) == [
        '$.a: "NO" does not match "^[a-z]+$"',
        '$.b[1]: "y" does not match "^x"',
        '$.n_1: "3" is not of type "integer"',
    ]


def test_a_pattern_that_backtracks_forever_in_python_is_checked_in_bounded_time():
    # ^(a+)+$ against 40 a's and a "!" takes Python's re about an hour (28 took 12 s); the
    # check runs in a child process so that a regression fails here instead of hanging.
    script = (
        "import json\n"
        "from editor.formats.validate import validate_text\n"
        f"print(json.dumps([d.code for d in validate_text({_redos_document()!r})[1]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == ["E-CALL-SCHEMA"]


def _redos_document() -> str:
    parameters = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}
    arguments = json.dumps({"a": "a" * 40 + "!"})
    return _tool_call_document(parameters, calls=1).replace('"{}"', json.dumps(arguments))


def test_a_pattern_in_pythons_own_syntax_makes_the_schema_unusable():
    parameters = {"type": "object", "properties": {"a": {"type": "string", "pattern": r"a\Z"}}}
    text = _tool_call_document(parameters, calls=2).replace('"{}"', json.dumps('{"a": "a"}'))
    codes = _codes(text)
    assert [code for code, _ in codes] == ["W-TOOL-SCHEMA-INVALID"]
    assert "Parameters of functions.f are not valid JSON Schema: " in codes[0][1]


def _tool_call_document(parameters: dict, calls: int = 2) -> str:
    messages: list[dict] = [{"role": "user", "content": "Weather?"}]
    for n in range(calls):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    return json.dumps({"messages": messages, "tools": [tool]})


def _codes(text: str) -> list[tuple[str, str]]:
    _, diagnostics = validate_text(text)
    return [(d.code, d.message) for d in diagnostics]


def test_a_reference_to_a_url_is_never_fetched():
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        parameters = {"type": "object", "properties": {"a": {"$ref": f"http://127.0.0.1:{port}/s"}}}
        text = _tool_call_document(parameters).replace('"{}"', json.dumps('{"a": 1}'))
        codes = _codes(text)
        try:
            listener.accept()
            fetched = True
        except BlockingIOError:
            fetched = False
    finally:
        listener.close()
    assert not fetched
    assert codes == [
        (
            "W-TOOL-SCHEMA-INVALID",
            f"Parameters of functions.f are not valid JSON Schema: unresolvable reference "
            f"http://127.0.0.1:{port}/s",
        )
    ]


def test_a_reference_to_nowhere_in_the_schema_is_one_warning():
    parameters = {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}
    text = _tool_call_document(parameters, calls=3).replace('"{}"', json.dumps('{"a": 1}'))
    assert [code for code, _ in _codes(text)] == ["W-TOOL-SCHEMA-INVALID"]


def test_references_inside_the_schema_and_to_metaschemas_resolve():
    parameters = {
        "type": "object",
        "$defs": {"unit": {"enum": ["celsius"]}},
        "properties": {
            "unit": {"$ref": "#/$defs/unit"},
            "meta": {"$ref": "https://json-schema.org/draft/2020-12/schema"},
        },
    }
    good = _tool_call_document(parameters).replace('"{}"', json.dumps('{"unit": "celsius"}'))
    assert _codes(good) == []
    bad = _tool_call_document(parameters, calls=1).replace(
        '"{}"', json.dumps('{"unit": "kelvin", "meta": {"type": 3}}')
    )
    assert [code for code, _ in _codes(bad)] == ["E-CALL-SCHEMA", "E-CALL-SCHEMA"]


def test_the_schema_cache_keeps_json_types_apart_and_shares_equal_schemas():
    text = '{"type": "object", "additionalProperties": %s}'
    one = parameters_schema(json.loads(text % "true"))
    assert parameters_schema(json.loads(text % "true")) is one  # decoded twice, cached once
    # Equal in Python (True == 1), not in JSON: 1 is no schema, and is not served true's checker.
    with pytest.raises(UnusableSchema):
        parameters_schema(json.loads(text % "1"))
    minimum = '{"type": "number", "minimum": %s}'
    assert parameters_schema(json.loads(minimum % "1")) is not parameters_schema(
        json.loads(minimum % "1.0")
    )
