"""Diagnostic positions: the 1-based line and column of any offset, in any order asked."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from editor.formats.diagnostics import LineIndex
from tests.budget import examples


def naive(text: str, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(text)))
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


@settings(max_examples=examples(300), deadline=None)
@given(
    st.text(st.sampled_from("ab\n\r"), max_size=40),
    st.lists(st.integers(-3, 45), min_size=1, max_size=5),
)
def test_every_offset_asked_gets_its_line_and_column(text, offsets):
    index = LineIndex(text)
    assert [index.position(offset) for offset in offsets] == [naive(text, o) for o in offsets]


def test_a_header_warning_at_the_start():
    assert LineIndex("a\nb\n").position(0) == (1, 1)
    index = LineIndex("ab\ncd")
    assert (index.position(4), index.position(1), index.position(99)) == ((2, 2), (1, 2), (2, 3))
