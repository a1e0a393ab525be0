"""The str.find / regex fast path of the token-text parser is only a shortcut: on any input,
parsing with it gives exactly what the full token walk gives (messages, their sources and
gaps, diagnostics)."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editor.formats.codecs import openchatml2
from editor.formats.codecs.chatml import CHATML
from editor.formats.codecs.openchatml2 import HARMONY, OCM20, OCM22, parse_document
from editor.formats.diagnostics import Diagnostics
from tests.budget import examples

ATTRIBUTES = [" to=functions.f", " call_id=1", " name=x", " intent=preamble", " content_type=md"]
ODD = ["", " ", "<", "|>", "<|", "=", " to=", " x=1", " =y", "<|unknown|>", "<<|end|>", "\n"]
TERMINATORS = ["<|end|>", "<|call|>", "<|return|>", "<|end_message|>", "<|start|>", ""]


@st.composite
def messages(draw) -> str:
    """A message that is well-formed more often than not, with every part sometimes odd."""

    def part(options: list[str]) -> str:
        return draw(st.sampled_from(options)) if draw(st.booleans()) else ""

    odd = st.sampled_from(ODD)
    head = "<|start|>" + draw(st.sampled_from(["user", "assistant", "", "to=x"]))
    head += "".join(draw(st.lists(st.sampled_from(ATTRIBUTES + ODD[:3]), max_size=3)))
    channel = part(["<|channel|>analysis", "<|channel|>commentary to=functions.f", "<|channel|>"])
    constrain = part(["<|constrain|>json", "<|constrain|>json x", "<|constrain|>"])
    body = "<|message|>" + draw(st.sampled_from(["hello", "a < b", "é", "", "x<"]))
    return (
        head
        + channel
        + constrain
        + draw(odd) * draw(st.booleans())
        + body
        + draw(st.sampled_from(TERMINATORS))
    )


def documents() -> st.SearchStrategy[str]:
    gaps = st.sampled_from(["", "\n", " \n\t", "stray", "<|end|>", "<|literal|>x<|endliteral|>"])
    return st.lists(st.tuples(gaps, messages()), max_size=6).map(
        lambda parts: "".join(gap + message for gap, message in parts)
    )


def _parse(text: str, dialect) -> tuple:
    sink = Diagnostics(text)
    transcript = parse_document(text, sink, dialect)
    return (
        [(m, m.source, m.gap) for m in transcript.messages],
        transcript.layout,
        [d.to_dict() for d in sink.items],
    )


@pytest.mark.parametrize("dialect", [OCM20, OCM22, HARMONY, CHATML], ids=lambda d: d.spec)
@settings(max_examples=examples(300), deadline=None)
@given(text=documents())
def test_fast_path_gives_what_the_token_walk_gives(dialect, text):
    fast = _parse(text, dialect)
    with mock.patch.object(openchatml2, "_fast_message", lambda src, at, dialect: None):
        slow = _parse(text, dialect)
    assert fast == slow
