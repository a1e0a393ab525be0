"""The streaming parser: any chunking gives the whole-text parse's messages."""

from __future__ import annotations

import random

import pytest

from editor import formats
from editor.formats.stream import StreamParser, iter_messages

from .conftest import fixture_inputs, read_input

OWN = ("openchatml-2.0", "openchatml-2.2", "harmony", "chatml")
TOKEN_TEXT = [
    c for c in fixture_inputs("valid") + fixture_inputs("invalid") if c[0] in formats.TEXT_SPECS
]


def stream(text, spec, sizes):
    parser = StreamParser(spec)
    out, pos = [], 0
    for size in sizes:
        out += parser.feed(text[pos : pos + size])
        pos += size
    out += parser.feed(text[pos:])
    out += parser.close()
    return out, parser


@pytest.mark.parametrize("case", TOKEN_TEXT, ids=[f"{s}/{p.name}" for s, p in TOKEN_TEXT])
def test_every_chunking_of_a_fixture_gives_the_same_messages(case):
    spec, path = case
    text = read_input(path)
    whole, diagnostics = formats.parse(text, spec=spec)
    rng = random.Random(path.name)
    for chunking in ([1] * len(text), [len(text)], [rng.randint(1, 9) for _ in range(len(text))]):
        messages, parser = stream(text, spec, chunking)
        assert messages == whole.messages
        assert [m.source for m in messages] == [m.source for m in whole.messages]
        assert [m.gap for m in messages] == [m.gap for m in whole.messages]
        # Diagnostics match exactly for this family's parsers (other codecs word a cut-off
        # message their own way); an open last message is a stream truncation, not a prompt.
        if spec in OWN and whole.messages and whole.messages[-1].end is not None:
            assert parser.diagnostics == diagnostics


def test_messages_come_out_as_soon_as_the_next_one_starts():
    parser = StreamParser("openchatml-2.2")
    assert parser.feed("---\nversion: 2.2\n---\n<|start|>user<|message|>hi<|end|>\n<|sta") == []
    (first,) = parser.feed("rt|>assistant<|channel|>final<|message|>yo<|return|>")
    assert first.content == "hi" and parser.header == {"version": "2.2"}
    (second,) = parser.close()
    assert second.end == "return" and parser.diagnostics == []


def test_stream_ending_mid_message_is_truncated_even_for_chatml():
    for spec, text in [
        ("openchatml-2.2", "<|start|>assistant<|channel|>final<|message|>Half"),
        ("harmony", "<|start|>user<|message|>hi<|end|><|start|>assistant"),
        ("chatml", "<|start|>user<|message|>hi<|end_message|><|start|>assistant<|message|>par"),
    ]:
        messages = list(iter_messages(text, spec))
        parser = StreamParser(spec)
        parser.feed(text)
        parser.close()
        assert messages[-1].end is None
        assert [d.code for d in parser.diagnostics] == ["E-STREAM-TRUNCATED"]
        assert parser.diagnostics[0].offset == len(text)


def test_header_with_tokens_and_literal_blocks_are_never_cut():
    text = (
        '---\nversion: 2.2\ntokens: ["<|start|>"]\n---\n'
        "<|start|>user<|message|><|literal|><|start|>x<|endliteral|> <<|start|><|end|>\n"
        "<|start|>assistant<|message|>ok<|end|>"
    )
    whole, _ = formats.parse(text, spec="openchatml-2.2")
    for size in (1, 2, 3, 5, 8, 13):
        assert (
            list(
                iter_messages(
                    (text[i : i + size] for i in range(0, len(text), size)), "openchatml-2.2"
                )
            )
            == whole.messages
        )
    assert len(whole.messages) == 2


def test_feed_is_amortized_linear():
    import time

    body = "word " * 200
    text = "".join(f"<|start|>user<|message|>{body}{i}<|end|>\n" for i in range(2000))

    def run(t):
        start = time.perf_counter()
        list(iter_messages((t[i : i + 7] for i in range(0, len(t), 7)), "openchatml-2.2"))
        return time.perf_counter() - start

    small = min(run(text[: len(text) // 4]) for _ in range(2))
    big = min(run(text) for _ in range(2))
    assert big < small * 4 * 3


def test_other_text_codecs_stream_too():
    samples = [c for c in TOKEN_TEXT if c[0] in ("openchatml-0.1", "mms-tokens")]
    assert {spec for spec, _ in samples} == {"openchatml-0.1", "mms-tokens"}
    for spec, path in samples:
        text = read_input(path)
        whole, _ = formats.parse(text, spec=spec)
        assert list(iter_messages(iter(text), spec)) == whole.messages, path.name
