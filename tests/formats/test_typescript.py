"""The TypeScript tool-namespace subset (typescript.py) and its writer (harmony_prompt.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from editor.formats.convert import harmony_prompt
from editor.formats.tools.typescript import parse_namespaces

SPEC_16_2 = """# Tools

## functions
namespace functions {
// Gets weather for a city.
type get_current_weather = (_: {
  location: string,
  format?: "celsius" | "fahrenheit", // default: celsius
}) => any;
} // namespace functions"""

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Gets the current weather in the provided location.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "string",
                    "description": "The city and state, e.g. San Francisco, CA",
                },
                "format": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "default": "celsius",
                },
                "days": {"type": "array", "items": {"type": "number"}},
                "options": {
                    "type": "object",
                    "properties": {
                        "metric": {"type": "boolean"},
                        "note": {"type": "string", "nullable": True},
                    },
                    "required": ["metric"],
                },
            },
            "required": ["location"],
        },
    },
}


def test_spec_example_becomes_json_schema():
    (tool,) = parse_namespaces(SPEC_16_2)
    assert tool.qualified_name == "functions.get_current_weather"
    assert tool.description == "Gets weather for a city."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["location"],
    }


def test_comments_above_arrays_generics_and_unknown_constructs():
    text = """namespace functions {
type f = (_: {
// Cities to look up
// default: ["Paris"]
cities: Array<string>,
grid: number[][],
odd: Map<string, number>,
flag?: true | false,
}) => any;
type g = () => any;
}"""
    f, g = parse_namespaces(text)
    props = f.parameters["properties"]
    assert props["cities"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Cities to look up",
        "default": ["Paris"],
    }
    assert props["grid"] == {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}},
    }
    assert props["odd"] == {}
    assert props["flag"] == {"enum": [True, False]}
    assert f.parameters["required"] == ["cities", "grid", "odd"]
    assert g.name == "g" and g.parameters is None  # `() => any`: no parameters declared
    assert "parameters" not in g.to_openai_tool()["function"]


@given(
    st.text(
        alphabet=st.sampled_from(list("namespace functions type f=(_:{}[]<>|?:;,\"'/\n*ab")),
        max_size=200,
    )
)
def test_never_raises(text):
    parse_namespaces(text)


def test_developer_message_follows_harmony_layout():
    text = harmony_prompt.developer_message("Always respond in riddles", [WEATHER_TOOL])
    assert text.startswith(
        "# Instructions\n\nAlways respond in riddles\n\n# Tools\n\n## functions\n\nnamespace functions {\n\n"
    )
    assert (
        "// Gets the current weather in the provided location.\ntype get_current_weather = (_: {\n"
        in text
    )
    assert "// The city and state, e.g. San Francisco, CA\nlocation: string,\n" in text
    assert 'format?: "celsius" | "fahrenheit", // default: celsius\n' in text
    assert text.endswith("}) => any;\n\n} // namespace functions")


def test_schema_to_typescript_and_back_is_the_same_schema():
    text = harmony_prompt.developer_message(None, [WEATHER_TOOL])
    (tool,) = parse_namespaces(text)
    assert tool.to_openai_tool() == WEATHER_TOOL


def test_system_message():
    text = harmony_prompt.system_message(
        reasoning_effort="high", current_date="2025-08-08", has_functions=True
    )
    assert text == (
        "You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n"
        "Current date: 2025-08-08\n\nReasoning: high\n\n# Valid channels: analysis, commentary, final. "
        "Channel must be included for every message.\nCalls to these tools must go to the commentary channel: 'functions'."
    )
