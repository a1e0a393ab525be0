"""``check_storable_text``: what both databases can store, decided the same by its fast path
and by its walk."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editor.db.storable import check_storable_text
from editor.errors import InvalidContent
from editor.storage.content import TranscriptContent, check_storable
from tests.budget import examples

# Strings that now and then hold a NUL, a lone surrogate, or the text "\u0000".
risky_text = st.lists(
    st.sampled_from(["a", "é", "😀", "\x00", "\ud800", "\udfff", "\\", "u0000", '"'])
    | st.characters(),
    max_size=6,
).map("".join)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | risky_text,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(risky_text | st.integers(), inner, max_size=4)
    ),
    max_leaves=12,
)


def faults(value) -> list[str]:
    """Every fault of ``value``'s strings, found the slow and obvious way."""
    if isinstance(value, str):
        found = ["NUL"] if "\x00" in value else []
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            found.append("surrogate")
        return found
    if isinstance(value, dict):
        return [f for pair in value.items() for item in pair for f in faults(item)]
    if isinstance(value, (list, tuple)):
        return [f for item in value for f in faults(item)]
    return []


@settings(max_examples=examples(400), deadline=None)
@given(values)
def test_refused_exactly_when_a_string_holds_a_nul_or_a_lone_surrogate(value):
    if faults(value):
        with pytest.raises(InvalidContent) as refused:
            check_storable_text(value, "the value")
        assert refused.value.code == "unstorable-text"
    else:
        check_storable_text(value, "the value")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"a": ["ok", "b\x00"]}, "the value contains a NUL character."),
        ([{"k\ud800": 1}], "the value contains a lone surrogate (not valid Unicode text)."),
        ({(1, 2): "\x00"}, "the value contains a NUL character."),  # no JSON: walked
    ],
)
def test_the_refusal_names_the_fault(value, says):
    with pytest.raises(InvalidContent) as refused:
        check_storable_text(value, "the value")
    assert refused.value.message == says


def test_text_that_only_says_backslash_u0000_is_storable():
    check_storable_text({"content": "write \\u0000 to end a C string"}, "the value")


@pytest.mark.parametrize(
    "text",
    [
        '[{"role": "user", "content": "end of string\\u0000"}]',
        '[{"role": "user", "content": "half a pair \\ud800"}]',
        '[{"role": "user\\u0000", "content": "hi"}]',
    ],
)
def test_a_value_only_an_escape_made_unstorable_is_refused(text):
    """The source text is storable (the escape is plain ASCII), its parsed value is not: the
    values are walked whenever the text holds a backslash."""
    content = TranscriptContent.from_text(text, "openai-messages")

    with pytest.raises(InvalidContent) as refused:
        check_storable(content, title="", metadata={}, external_id="")

    assert refused.value.code == "unstorable-text"
    assert "the transcript" in refused.value.message
