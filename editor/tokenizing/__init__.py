"""Setting a dataset's tokenizer (curators only): a tiktoken encoding by name or an
uploaded Hugging Face tokenizer.json, and the context length the transcript page measures
against. A change queues a recount of the whole dataset (``editor.tokenizing.tasks``).

An encoding whose rank file is not on this machine may still be named (the file can be
provided later, docs/tokens.md): ``editor.tokens.availability`` says why it cannot count,
and counts stay empty until it can.
"""

from __future__ import annotations

import hashlib

from django.db import transaction

from editor.errors import InvalidTokenizer, NotAllowed, TokenizerNotSet
from editor.formats import tokens as core
from editor.models import Dataset, DatasetTokenizer
from editor.models.tokenizers import TokenizerKind

MAX_TOKENIZER_JSON_BYTES = 50 * 1024 * 1024
MAX_CONTEXT_LENGTH = 100_000_000


def _require_curator(dataset: Dataset, user) -> None:
    if not dataset.can_curate(user):
        raise NotAllowed("Only the dataset's curators may change its tokenizer.")


def _checked_context_length(context_length) -> int | None:
    if context_length is None or context_length == "":
        return None
    if isinstance(context_length, bool) or not isinstance(context_length, int | str):
        raise InvalidTokenizer("The context length must be a whole number of tokens.")
    try:
        value = int(context_length)
    except ValueError:
        raise InvalidTokenizer("The context length must be a whole number of tokens.") from None
    if not 1 <= value <= MAX_CONTEXT_LENGTH:
        raise InvalidTokenizer(
            f"The context length must be between 1 and {MAX_CONTEXT_LENGTH:,} tokens.",
            details={"context_length": value},
        )
    return value


def set_encoding(dataset: Dataset, user, *, encoding: str, context_length=None) -> DatasetTokenizer:
    """Name a tiktoken encoding (one of ``ENCODINGS``) as the dataset's tokenizer."""
    _require_curator(dataset, user)
    if encoding not in core.ENCODINGS:
        raise InvalidTokenizer(
            f"Unknown tiktoken encoding {encoding!r}; expected one of {', '.join(core.ENCODINGS)}.",
            details={"encoding": encoding, "expected": list(core.ENCODINGS)},
        )
    return _store(
        dataset,
        user,
        kind=TokenizerKind.TIKTOKEN,
        encoding=encoding,
        tokenizer_json="",
        digest="",
        name=encoding,
        context_length=_checked_context_length(context_length),
    )


def set_tokenizer_json(
    dataset: Dataset, user, *, data: bytes, name: str = "tokenizer.json", context_length=None
) -> DatasetTokenizer:
    """Use an uploaded Hugging Face tokenizer.json (checked: at most 50 MB, UTF-8, read by
    ``tokenizers.Tokenizer.from_str``)."""
    _require_curator(dataset, user)
    if len(data) > MAX_TOKENIZER_JSON_BYTES:
        raise InvalidTokenizer(
            f"The tokenizer.json is {len(data):,} bytes; at most "
            f"{MAX_TOKENIZER_JSON_BYTES:,} are accepted.",
            details={"size": len(data), "limit": MAX_TOKENIZER_JSON_BYTES},
        )
    if not data.strip():
        raise InvalidTokenizer("The tokenizer.json is empty.")
    try:
        core.huggingface_tokenizer(data)
    except core.TokenizerUnavailable as problem:
        raise InvalidTokenizer(str(problem)) from None
    return _store(
        dataset,
        user,
        kind=TokenizerKind.HUGGINGFACE,
        encoding="",
        tokenizer_json=data.decode("utf-8"),
        digest=hashlib.sha256(data).hexdigest(),
        name=(name or "tokenizer.json")[:200],
        context_length=_checked_context_length(context_length),
    )


def set_context_length(dataset: Dataset, user, context_length) -> DatasetTokenizer:
    """Change only the context length of the dataset's tokenizer (no recount)."""
    _require_curator(dataset, user)
    setting = DatasetTokenizer.objects.filter(dataset=dataset).first()
    if setting is None:
        raise TokenizerNotSet("The dataset names no tokenizer.")
    setting.context_length = _checked_context_length(context_length)
    setting.updated_by = user
    setting.save(update_fields=["context_length", "updated_by", "updated_at"])
    return setting


def clear_tokenizer(dataset: Dataset, user) -> None:
    """Name no tokenizer: the counts are cleared (in the background)."""
    _require_curator(dataset, user)
    deleted, _ = DatasetTokenizer.objects.filter(dataset=dataset).delete()
    if not deleted:
        raise TokenizerNotSet("The dataset names no tokenizer.")
    _queue_recount(dataset)


def _store(dataset: Dataset, user, **fields) -> DatasetTokenizer:
    with transaction.atomic():
        previous = DatasetTokenizer.objects.select_for_update().filter(dataset=dataset).first()
        old_key = previous.key if previous else None
        setting, _ = DatasetTokenizer.objects.update_or_create(
            dataset=dataset, defaults={**fields, "updated_by": user}
        )
        if setting.key != old_key:
            _queue_recount(dataset)
    return setting


def _queue_recount(dataset: Dataset) -> None:
    from editor.tokenizing.tasks import recount_tokens

    dataset_id = dataset.pk
    transaction.on_commit(lambda: recount_tokens.enqueue(dataset_id))
