"""Token counts of stored transcripts under their dataset's tokenizer (docs/tokens.md).

A dataset names its tokenizer in a ``DatasetTokenizer`` row; the counts live on the
transcript: ``Transcript.token_count`` (the total, for the list's sort and "over N tokens"
filter) and ``Transcript.token_counts``::

    {"tokenizer": key, "version": n, "total": t, "framing": f,
     "messages": [tokens of message 0, …], "channels": {"analysis": …, "": no channel},
     "trainable": [tokens message 0 trains on when trained, …]}

``trainable`` is what the training view (``editor.presentation.training``) shows as a trained
message's tokens (``editor.formats.tokens``, "Counts"), read from here while the counts are
current instead of counted on every request (``trainable_counts``).

Counts under another tokenizer key or version are stale (``is_current``). The write path
(``editor.storage``) calls ``counts_for`` with what it is about to store, so counts are
current on every save and import (the importer's batches run on the task worker); a
change of tokenizer recounts the dataset in the background (``editor.tokenizing.tasks``).

Domain layer (below the write path, which calls it): loads tokenizers and counts, never
decides who may change a tokenizer (``editor.tokenizing``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from editor import formats
from editor.formats import tokens as core
from editor.models import DatasetTokenizer, Transcript
from editor.models.tokenizers import TokenizerKind

logger = logging.getLogger(__name__)

# Loaded tokenizers by ``DatasetTokenizer.key``, for the life of the process: loading one
# reads and builds a vocabulary of up to 200k entries (tenths of a second).
_loaded: dict[str, core.Tokenizer] = {}
_lock = threading.Lock()
RECOUNT_BATCH = 200


def load(setting: DatasetTokenizer) -> core.Tokenizer:
    """The tokenizer ``setting`` names (``core.TokenizerUnavailable`` when it cannot be
    loaded on this machine)."""
    key = setting.key
    with _lock:
        found = _loaded.get(key)
    if found is not None:
        return found
    if setting.kind == TokenizerKind.TIKTOKEN:
        tokenizer: core.Tokenizer = core.tiktoken_encoding(setting.encoding)
    else:
        tokenizer = core.huggingface_tokenizer(setting.tokenizer_json, name=setting.name)
    with _lock:
        return _loaded.setdefault(key, tokenizer)


def setting_of(dataset_id: int) -> DatasetTokenizer | None:
    return DatasetTokenizer.objects.filter(dataset_id=dataset_id).first()


def availability(setting: DatasetTokenizer | None) -> str | None:
    """Why ``setting``'s tokenizer cannot be used here (None: it can, or there is none)."""
    if setting is None:
        return None
    try:
        load(setting)
    except core.TokenizerUnavailable as problem:
        return str(problem)
    return None


def record(counts: core.Counts, key: str, version: int) -> dict[str, Any]:
    """What ``Transcript.token_counts`` stores of ``counts``."""
    return {
        "tokenizer": key,
        "version": version,
        "total": counts.total,
        "framing": counts.framing,
        "messages": [m.tokens for m in counts.messages],
        "channels": dict(counts.channels),
        "trainable": list(counts.trainable),
    }


def is_current(transcript: Transcript, key: str | None) -> bool:
    stored = transcript.token_counts
    return (
        key is not None
        and isinstance(stored, dict)
        and stored.get("tokenizer") == key
        and stored.get("version") == transcript.version
    )


def trainable_counts(transcript: Transcript) -> list[int] | None:
    """Per message, the tokens it trains on when trained, from the stored counts; None when
    they are not current (another tokenizer, an older version, counted before ``trainable``
    was stored, or no tokenizer): the caller counts then."""
    setting = setting_of(transcript.dataset_id)
    if setting is None or not is_current(transcript, setting.key):
        return None
    found = transcript.token_counts.get("trainable")
    if not isinstance(found, list) or len(found) != transcript.message_count:
        return None
    return found


def counts_for(
    dataset_id: int,
    contents: Sequence[tuple[formats.Transcript, int]],
    setting: DatasetTokenizer | None = None,
) -> list[tuple[int | None, dict | None]]:
    """``(token_count, token_counts)`` for each ``(canonical transcript, version)`` about to
    be stored in the dataset: (None, None) each when the dataset names no tokenizer or its
    tokenizer cannot be loaded here (logged: a save never fails for want of a count)."""
    if setting is None:
        setting = setting_of(dataset_id)
    if setting is None or not contents:
        return [(None, None)] * len(contents)
    try:
        tokenizer = load(setting)
    except core.TokenizerUnavailable as problem:
        logger.warning("Dataset %s: tokens not counted: %s", dataset_id, problem)
        return [(None, None)] * len(contents)
    counted = core.token_counts_batch([canonical for canonical, _ in contents], tokenizer)
    key = setting.key
    return [
        (counts.total, record(counts, key, version))
        for counts, (_, version) in zip(counted, contents, strict=True)
    ]


def as_rendered(transcript: Transcript) -> formats.Transcript:
    """The stored transcript as its spec renders it: its source text parsed (layout and
    message spans kept) when that text is exact, else its canonical rows."""
    if transcript.source_is_exact and transcript.source_text:
        return formats.parse(transcript.source_text, spec=transcript.spec).transcript
    return transcript.canonical()


def count_transcript(transcript: Transcript, setting: DatasetTokenizer | None = None) -> None:
    """Count ``transcript`` as stored now and store its counts (no revision: counts are
    derived data, not content)."""
    ((total, counts),) = counts_for(
        transcript.dataset_id, [(as_rendered(transcript), transcript.version)], setting
    )
    transcript.token_count, transcript.token_counts = total, counts
    Transcript.all_objects.filter(pk=transcript.pk, version=transcript.version).update(
        token_count=total, token_counts=counts
    )


def recount_dataset(dataset_id: int, batch: int = RECOUNT_BATCH) -> int:
    """Bring every transcript of the dataset (deleted ones too) to its tokenizer's counts,
    in batches; clears them when it names none. Returns how many were written. A transcript
    saved meanwhile is skipped (its save counted it)."""
    setting = setting_of(dataset_id)
    rows = Transcript.all_objects.filter(dataset_id=dataset_id).order_by("pk")
    if setting is None:
        return rows.exclude(token_counts=None).update(token_count=None, token_counts=None)
    written, after = 0, 0
    while True:
        chunk = list(rows.filter(pk__gt=after)[:batch])
        if not chunk:
            return written
        after = chunk[-1].pk
        stale = [t for t in chunk if not is_current(t, setting.key)]
        written += _store(stale, setting)


def _store(transcripts: Iterable[Transcript], setting: DatasetTokenizer) -> int:
    transcripts = list(transcripts)
    counted = counts_for(
        setting.dataset_id, [(as_rendered(t), t.version) for t in transcripts], setting
    )
    written = 0
    for transcript, (total, counts) in zip(transcripts, counted, strict=True):
        written += Transcript.all_objects.filter(
            pk=transcript.pk, version=transcript.version
        ).update(token_count=total, token_counts=counts)
    return written


def keep_counts(transcript: Transcript, canonical: formats.Transcript | None) -> list[str]:
    """On a save (``editor.storage``): count ``canonical``, the new content, or, when the
    content did not change (None), carry the stored counts over to the new version. Sets
    the fields on ``transcript`` and returns their names, to be saved with it."""
    if canonical is None:
        stored = transcript.token_counts
        if not isinstance(stored, dict):
            return []
        transcript.token_counts = {**stored, "version": transcript.version}
        return ["token_counts"]
    ((total, counts),) = counts_for(transcript.dataset_id, [(canonical, transcript.version)])
    transcript.token_count, transcript.token_counts = total, counts
    return ["token_count", "token_counts"]


@dataclass(frozen=True)
class Budget:
    """What the transcript page shows of a transcript's tokens: each message's count (by
    index), the total, and the dataset's context length (``over``: the total exceeds it)."""

    tokenizer: str
    total: int
    messages: dict[int, int]
    channels: dict[str, int]
    context_length: int | None

    @property
    def over(self) -> bool:
        return self.context_length is not None and self.total > self.context_length

    @property
    def label(self) -> str:
        """ "3,120 / 4,096 tokens" (or "3,120 tokens" with no context length)."""
        if self.context_length is None:
            return f"{self.total:,} tokens"
        return f"{self.total:,} / {self.context_length:,} tokens"


def budget(transcript: Transcript) -> Budget | None:
    """The transcript's current counts (None when the dataset names no tokenizer or they
    are not counted, or stale, yet)."""
    setting = setting_of(transcript.dataset_id)
    if setting is None or not is_current(transcript, setting.key):
        return None
    stored = transcript.token_counts
    return Budget(
        tokenizer=setting.name or setting.key,
        total=stored["total"],
        messages=dict(enumerate(stored["messages"])),
        channels=stored.get("channels", {}),
        context_length=setting.context_length,
    )
