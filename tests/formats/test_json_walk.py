"""The located JSON walk (``json_support.read_document``) decodes exactly what ``json.loads``
decodes and refuses exactly what it refuses: it is the only decoding of a valid document."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editor.formats.codecs import json_support as js
from tests.budget import examples

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=20,
)
BLANKS = st.text(st.sampled_from(" \t\n\r"), max_size=3)


@st.composite
def written(draw) -> str:
    """A JSON text of any value, with any indentation and any blanks around separators."""
    value = draw(VALUES)
    indent = draw(st.none() | st.integers(0, 3) | st.just("\t"))
    item, key = draw(BLANKS), draw(BLANKS)
    text = json.dumps(value, indent=indent, separators=("," + item, ":" + key))
    return draw(BLANKS) + text + draw(BLANKS)


@settings(max_examples=examples(300), deadline=None)
@given(written())
def test_the_walk_reads_what_json_reads(text):
    node = js.read_document(text)
    assert node.value == json.loads(text)
    assert text[node.start : node.end].strip() == text.strip()
    for item in node.items or (node.members or {}).values():
        assert json.loads(text[item.start : item.end]) == item.value


@settings(max_examples=examples(300), deadline=None)
@given(written(), st.data())
def test_the_walk_refuses_what_json_refuses(text, data):
    # One character removed, doubled or replaced: often invalid, sometimes still valid.
    at = data.draw(st.integers(0, max(0, len(text) - 1)))
    edit = data.draw(st.sampled_from(["", text[at : at + 1] * 2, ",", ":", "]", "}", "x", '"']))
    broken = text[:at] + edit + text[at + 1 :]
    try:
        expected = json.loads(broken)
    except json.JSONDecodeError:
        with pytest.raises(json.JSONDecodeError):
            js.read_document(broken)
    else:
        assert js.read_document(broken).value == expected


@pytest.mark.parametrize(
    "text", ["[1 2]", '{"a" 1}', '{"a": 1 "b": 2}', "[1,]", '{"a": 1,}', "[1] 2", "[", '{"a"', ""]
)
def test_broken_separators_are_refused(text):
    with pytest.raises(json.JSONDecodeError):
        js.read_document(text)
