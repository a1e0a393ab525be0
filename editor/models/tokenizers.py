"""The tokenizer a dataset counts tokens with, and its context length."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from editor.db.compressed import CompressedTextField
from editor.models.datasets import Dataset


class TokenizerKind(models.TextChoices):
    TIKTOKEN = "tiktoken", "A tiktoken encoding"
    HUGGINGFACE = "huggingface", "A Hugging Face tokenizer.json"


class DatasetTokenizer(models.Model):
    """One per dataset that names a tokenizer: a ``tiktoken`` encoding by name
    (``encoding``) or an uploaded Hugging Face ``tokenizer.json`` (``tokenizer_json``, with
    its SHA-256 in ``digest``). ``key`` names the tokenizer in the counts stored on
    transcripts (``Transcript.token_counts["tokenizer"]``): counts under another key are
    stale and recounted."""

    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, related_name="tokenizer")
    kind = models.CharField(max_length=16, choices=TokenizerKind.choices)
    encoding = models.CharField(max_length=64, blank=True)
    tokenizer_json = CompressedTextField(blank=True, default="")
    digest = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=200, blank=True)
    context_length = models.PositiveIntegerField(null=True, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"tokenizer of {self.dataset_id}: {self.key}"

    @property
    def key(self) -> str:
        if self.kind == TokenizerKind.TIKTOKEN:
            return f"tiktoken:{self.encoding}"
        return f"huggingface:{self.digest[:16]}"
