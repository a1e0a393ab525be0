"""The training rendering (``?audience=training``, the API's ``audience=training``): the
annotator's rendering with, per message, what a convention trains on
(``editor.formats.training``) and, when the dataset names a tokenizer that can count on this
machine, the trained tokens.

Who may see it is decided by the caller (``editor.visibility.require_audience``): it shows
hidden channels, so the roles that see the annotator rendering see it too.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from editor import tokens as stored_tokens
from editor.formats import tokens, training
from editor.models import Dataset, DatasetTokenizer, Transcript
from editor.models.tokenizers import TokenizerKind

TRAINING = training.TRAINING
CONVENTION_LABELS = {
    training.ALL_ASSISTANT: "All assistant messages",
    training.LAST_ASSISTANT_TURN: "Last assistant turn",
    training.GPT_OSS: "gpt-oss (earlier analysis dropped)",
}


def convention_of(transcript: Transcript, asked: str | None) -> str:
    """The convention asked for, or the transcript's spec's default when none is."""
    return training.check_convention(asked or training.default_convention(transcript.spec))


def dataset_tokenizer(transcript: Transcript):
    """The transcript's dataset's tokenizer (``tokenizer_of``)."""
    return tokenizer_of(transcript.dataset)


def tokenizer_of(dataset: Dataset):
    """The dataset's tokenizer when it names one that can count on this machine, else None
    (a missing encoding file is the tokenizer page's to explain, not this rendering's)."""
    try:
        named = dataset.tokenizer
    except DatasetTokenizer.DoesNotExist:
        return None
    try:
        if named.kind == TokenizerKind.TIKTOKEN:
            return tokens.tiktoken_encoding(named.encoding)
        return tokens.huggingface_tokenizer(named.tokenizer_json, named.name)
    except tokens.TokenizerUnavailable:
        return None


def training_masks(
    transcript: Transcript, convention: str, *, canonical=None
) -> list[training.MessageMask]:
    """The masks of ``transcript`` under ``convention``, with trained tokens when its
    dataset's tokenizer can count: read from the stored counts while they are current
    (``editor.tokens.trainable_counts``), counted otherwise."""
    canonical = canonical if canonical is not None else transcript.canonical()
    stored = stored_tokens.trainable_counts(transcript)
    if stored is None:
        return training.training_mask(
            canonical, convention, tokenizer=dataset_tokenizer(transcript)
        )
    masks = training.training_mask(canonical, convention)
    return [
        dataclasses.replace(mask, trained_tokens=stored[mask.index] if mask.trained else 0)
        for mask in masks
    ]


def training_rendering(transcript: Transcript, convention: str | None) -> dict[str, Any]:
    """The API's ``audience=training``: the annotator rendering, each item with ``trained``,
    ``trained_reason``, the ``parts`` / ``spans`` of a text spec and ``trained_tokens``;
    the ``convention`` used and the ``trained_tokens`` total (when counted; from the stored
    counts while they are current, as ``training_masks``)."""
    canonical = transcript.canonical()
    convention = convention_of(transcript, convention)
    stored = stored_tokens.trainable_counts(transcript)
    if stored is None:
        return training.render_training(
            canonical, convention, tokenizer=dataset_tokenizer(transcript)
        )
    rendered = training.render_training(canonical, convention)
    for item in rendered["items"]:
        item["trained_tokens"] = stored[item["index"]] if item["trained"] else 0
    rendered["trained_tokens"] = sum(item["trained_tokens"] for item in rendered["items"])
    return rendered
