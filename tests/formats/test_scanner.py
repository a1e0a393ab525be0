"""The shared token scanner: escapes and literal blocks of OpenChatML 2.2 (§3)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editor.formats.codecs.scanner import ESCAPE, LITERAL, UNKNOWN, escape, scan, unescape

VOCABULARY = frozenset(
    {"start", "channel", "message", "end", "call", "return", "constrain", "literal", "endliteral"}
)


def test_scan_finds_tokens_escapes_literals_and_unknown_names():
    src = "<|start|>user<|message|>x <<|end|> <|literal|><|start|><|endliteral|> <|foo|><|end|>"
    kinds = [t.kind for t in scan(src, VOCABULARY, escapes=True, literals=True)]
    assert kinds == ["start", "message", ESCAPE, LITERAL, UNKNOWN, "end"]


@pytest.mark.parametrize(
    ("logical", "written"),
    [
        ("a<|start|>b", "a<<|start|>b"),
        ("<<|start|>", "<<<|start|>"),
        ("a<", "a<|literal|><<|endliteral|>"),  # `a<<|end|>` would read as an escape
        ("a<<", "a<|literal|><<<|endliteral|>"),
        ("plain", "plain"),
    ],
)
def test_escape_writes_a_body_that_reads_back_as_the_logical_text(logical, written):
    assert escape(logical, VOCABULARY) == written
    assert unescape(written, VOCABULARY) == logical


PIECES = st.sampled_from(["<", "|", ">", "<|end|>", "<|literal|>", "<|endliteral|>", "a", "\n"])


@given(st.lists(PIECES, max_size=12).map("".join))
def test_escaped_body_followed_by_a_terminator_keeps_its_text(logical):
    body = escape(logical, VOCABULARY)
    src = body + "<|end|>"
    tokens = scan(src, VOCABULARY, escapes=True, literals=True)
    assert tokens[-1].kind == "end" and tokens[-1].end == len(src)
    assert [t.kind for t in tokens[:-1]].count("end") == 0
    assert unescape(body, VOCABULARY) == logical
