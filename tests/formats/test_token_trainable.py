"""``Counts.trainable`` (editor.formats.tokens): per message, the tokens the training
rendering (editor.formats.training) counts for it when it is trained, so that stored counts
can stand in for a recount; and the fast search for where a message's header ends agrees
with the training rendering's own split."""

from __future__ import annotations

import pytest

from editor.formats import parse, serialize, training
from editor.formats import tokens as core
from editor.formats.tokens import _header_end
from editor.formats.training import _pieces
from tests.editor.samples import demo_texts

CL100K = core.tiktoken_encoding("cl100k_base")


def header_of(text: str, begin: int, end: int, content: str) -> int:
    first = _pieces(text, begin, end, content)[0]
    return first[2] if first[0] == "header" else begin


@pytest.mark.parametrize(
    "message, content",
    [
        ("<|start|>assistant<|message|>Hello<|end|>", "Hello"),
        ("<|start|>assistant<|message|>Hello<|end|>\n", "Hello"),
        ("<|start|>assistant<|message|>Hello", "Hello"),  # cut off: no end token
        ("<|start|>assistant<|message|>say <|end|><|end|>", "say <|end|>"),  # a token in it
        ("<|start|>assistant<|message|><|end|>", ""),  # empty
        ("<|start|>end<|message|>end<|end|>", "end"),  # the content in the header too
        ("<|start|>assistant<|message|>x|><|end|>", "x|>"),
        ("[INST] hi [/INST] [END]", " [/INST]"),
        ("<|start|>assistant<|message|>not found<|end|>", "elsewhere"),
    ],
)
def test_the_header_ends_where_the_training_rendering_splits_it(message, content):
    text = f"framing {message} more"
    begin, end = 8, 8 + len(message)
    assert _header_end(text, begin, end, content) == header_of(text, begin, end, content)


SPECS = sorted(demo_texts())


@pytest.mark.parametrize("spec", SPECS)
def test_trainable_is_what_the_training_rendering_counts(spec):
    transcript = parse(demo_texts()[spec], spec=spec).transcript
    counts = core.token_counts(transcript, CL100K)
    assert len(counts.trainable) == len(transcript.messages)
    # The training rendering counts the transcript's own serialization (the sample as read).
    text = serialize(transcript)
    masks = training.training_mask(transcript, training.ALL_ASSISTANT, tokenizer=CL100K, text=text)
    for mask, trainable in zip(masks, counts.trainable, strict=True):
        if mask.trained:
            assert mask.trained_tokens == trainable, (spec, mask.index)
    # In a text spec, trainable is the message's tokens less its header's.
    if spec in core.TEXT_SPECS:
        assert all(t <= m.tokens for t, m in zip(counts.trainable, counts.messages, strict=True))
        assert sum(counts.trainable) < sum(m.tokens for m in counts.messages)
