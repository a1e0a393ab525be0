"""Training masks (editor.formats.training): each convention on Harmony transcripts with
several turns and tool calls, checked against hand-written expectations in
tests/fixtures/training (NAME.harmony beside NAME.json); every spec id masks and renders."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from editor import formats
from editor.formats import training
from editor.formats.cli import main
from editor.formats.render.visibility import canonical_role
from editor.formats.tokens import tiktoken_encoding

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TRAINING = FIXTURES / "training"


def _corpus():
    for path in sorted(TRAINING.glob("*.harmony")):
        yield pytest.param(path, id=path.stem)


def corpus():
    return list(_corpus())


def load(path: Path):
    text = path.read_text(encoding="utf-8")
    transcript, _ = formats.parse(text, "harmony")
    return text, transcript, json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))


def test_corpus_is_there():
    assert len(list(corpus())) >= 4


@pytest.mark.parametrize("path", corpus())
@pytest.mark.parametrize("convention", training.CONVENTIONS)
def test_trained_messages_match_the_fixture(path, convention):
    _, transcript, expected = load(path)
    masks = training.training_mask(transcript, convention)
    assert [m.index for m in masks if m.trained] == expected["trained"][convention]
    # Nothing but assistant messages is ever trained, and every mask says why.
    assert all(m.role == "assistant" for m in masks if m.trained)
    assert all(m.reason for m in masks)


@pytest.mark.parametrize("path", corpus())
def test_trained_spans_are_content_and_end_token_never_the_header(path):
    text, transcript, expected = load(path)
    for convention, texts in expected.get("trained_text", {}).items():
        masks = training.training_mask(transcript, convention, text=text)
        got = ["".join(text[a:b] for a, b in m.spans) for m in masks if m.trained]
        assert got == texts
    masks = training.training_mask(transcript, training.ALL_ASSISTANT, text=text)
    for mask in masks:
        kinds = [p.kind for p in mask.parts]
        assert kinds[0] == "header" and "content" in kinds
        header = mask.parts[0]
        assert text[header.start : header.end].startswith("<|start|>")
        assert not header.trained
        # The parts tile the message: header, content, end token, with no gap.
        assert all(a.end == b.start for a, b in zip(mask.parts, mask.parts[1:], strict=False))
        assert all(p.trained == mask.trained for p in mask.parts[1:])


def test_gpt_oss_is_harmony_default_and_all_assistant_the_others():
    assert training.default_convention("harmony") == training.GPT_OSS
    assert training.default_convention("openchatml-2.2") == training.ALL_ASSISTANT
    _, transcript, expected = load(TRAINING / "three-turns.harmony")
    assert [m.index for m in training.training_mask(transcript) if m.trained] == expected[
        "trained"
    ]["gpt_oss"]


def test_dropped_analysis_says_why():
    _, transcript, _ = load(TRAINING / "three-turns.harmony")
    masks = training.training_mask(transcript, "gpt_oss")
    assert masks[1].reason == training.EARLIER_ANALYSIS
    assert masks[0].reason == training.NOT_ASSISTANT
    masks = training.training_mask(transcript, "last_assistant_turn")
    assert masks[2].reason == training.BEFORE_LAST_TURN


def test_unknown_convention_is_refused():
    _, transcript, _ = load(TRAINING / "three-turns.harmony")
    with pytest.raises(ValueError, match="unknown convention 'everything'"):
        training.training_mask(transcript, "everything")


class CharCounter:
    """A tokenizer that counts characters: trained tokens are then the trained spans' length."""

    def count(self, text: str) -> int:
        return len(text)


def test_trained_tokens_with_a_counter():
    text, transcript, expected = load(TRAINING / "two-turns-with-call.harmony")
    masks = training.training_mask(transcript, "gpt_oss", tokenizer=CharCounter(), text=text)
    assert training.trained_token_total(masks) == sum(
        len(t) for t in expected["trained_text"]["gpt_oss"]
    )
    assert all(m.trained_tokens == 0 for m in masks if not m.trained)


def test_trained_tokens_with_cl100k_are_the_text_tokens_starting_in_trained_spans():
    cl100k = tiktoken_encoding("cl100k_base")
    text, transcript, _ = load(TRAINING / "unresolved-call.harmony")
    masks = training.training_mask(transcript, "gpt_oss", tokenizer=cl100k, text=text)
    # Where each token of the whole text starts (the text is ASCII: bytes are characters).
    assert text.isascii()
    starts, at = [], 0
    for token in cl100k.encode(text):
        starts.append(at)
        at += len(cl100k.encoding.decode_single_token_bytes(token))
    for mask in masks:
        want = sum(1 for s in starts if any(a <= s < b for a, b in mask.spans))
        assert mask.trained_tokens == want
    assert [m.trained_tokens > 0 for m in masks] == [m.trained for m in masks]


def _valid_fixture_of_each_spec():
    for spec in formats.SPEC_IDS:
        path = next(
            p
            for p in sorted((FIXTURES / spec / "valid").glob("*"))
            if not p.name.endswith(".expected.json")
        )
        yield pytest.param(spec, path, id=spec)


def valid_fixture_of_each_spec():
    return list(_valid_fixture_of_each_spec())


@pytest.mark.parametrize(("spec", "path"), valid_fixture_of_each_spec())
def test_every_spec_id_masks_and_renders_for_training(spec, path):
    text = path.read_text(encoding="utf-8")
    transcript, _ = formats.parse(text, spec)
    for convention in training.CONVENTIONS:
        masks = training.training_mask(transcript, convention, tokenizer=CharCounter())
        assert len(masks) == len(transcript.messages)
        for mask, message in zip(masks, transcript.messages, strict=True):
            assistant = canonical_role(message.role) == "assistant"
            assert mask.trained <= assistant
            if convention == training.ALL_ASSISTANT:
                assert mask.trained == assistant
            if spec in formats.TEXT_SPECS:
                assert mask.parts, "a text spec's messages are located in the text"
    out = training.render_training_text(transcript)
    assert out.count("[trained]") == sum(m.trained for m in training.training_mask(transcript))
    rendered = training.render_training(transcript, tokenizer=CharCounter())
    assert rendered["audience"] == "training"
    assert [item["index"] for item in rendered["items"]] == list(range(len(transcript.messages)))
    assert [item["trained"] for item in rendered["items"]] == [
        m.trained for m in training.training_mask(transcript)
    ]
    assert rendered["trained_tokens"] == sum(i["trained_tokens"] for i in rendered["items"])


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


def test_cli_render_training_marks_masked_lines():
    path = TRAINING / "three-turns.harmony"
    code, out, _ = run("render", str(path), "--audience", "training")
    assert code == 0
    assert "assistant/analysis [masked: analysis of an earlier turn" in out
    assert "│ assistant/analysis [masked" in out
    assert "assistant/final [trained]: Goodbye." in out
    assert "\x1b[" not in out  # not a terminal: no ANSI


def test_cli_render_training_convention_and_json():
    path = TRAINING / "two-turns-with-call.harmony"
    code, out, _ = run(
        "render", str(path), "--audience", "training", "--convention", "last_assistant_turn"
    )
    assert code == 0 and out.count("[trained]") == 2
    code, out, _ = run("render", str(path), "--audience", "training", "--json")
    data = json.loads(out)
    assert data["convention"] == "gpt_oss"
    assert [m["index"] for m in data["messages"] if m["trained"]] == [4, 7, 9, 10]
    assert data["messages"][4]["spans"]


def test_cli_convention_needs_training_audience():
    path = TRAINING / "two-turns-with-call.harmony"
    code, _, err = run("render", str(path), "--convention", "gpt_oss")
    assert code == 2 and "--convention" in err


def test_token_mask_flags_the_tokens_of_trained_parts():
    cl100k = tiktoken_encoding("cl100k_base")
    text, transcript, _ = load(TRAINING / "two-turns-with-call.harmony")
    ids, flags = training.token_mask(transcript, "gpt_oss", cl100k, text=text)
    assert ids == cl100k.encode(text) and len(flags) == len(ids)
    masks = training.training_mask(transcript, "gpt_oss", tokenizer=cl100k, text=text)
    assert sum(flags) == training.trained_token_total(masks)
    # Decoded, the trained tokens hold the trained messages and nothing of the masked ones
    # (a token is placed where it starts: cl100k joins "|>" and a body's first character).
    trained = cl100k.encoding.decode([t for t, f in zip(ids, flags, strict=True) if f])
    for kept in ("It is -3 °C in Oslo.<|end|>", "answer from memory.<|end|>", "Rome.<|return|>"):
        assert kept in trained
    for masked in ("Need get_weather", "Minus three", "Weather in Oslo", "<|start|>"):
        assert masked not in trained


def test_token_mask_needs_a_text_spec():
    cl100k = tiktoken_encoding("cl100k_base")
    transcript, _ = formats.parse('{"messages": [{"role": "user", "content": "hi"}]}')
    with pytest.raises(ValueError, match="not a text spec"):
        training.token_mask(transcript, None, cl100k)


def test_masked_blocks_are_dimmed_on_a_terminal_only():
    text, transcript, _ = load(TRAINING / "three-turns.harmony")
    plain = training.render_training_text(transcript, text=text)
    dimmed = training.render_training_text(transcript, terminal=True, text=text)
    assert "\x1b[" not in plain
    assert dimmed.count(training.DIM) == 5  # the five masked messages
    assert "\x1b[2m│ user [masked: not an assistant message]: Hi" in dimmed
