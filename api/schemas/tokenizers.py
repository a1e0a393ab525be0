"""A dataset's tokenizer (``editor.tokenizing``, docs/tokens.md)."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from editor import tokens
from editor.formats.tokens import ENCODINGS

EncodingName = Literal[ENCODINGS]


class TokenizerIn(Schema):
    """A tiktoken encoding by name (a tokenizer.json is uploaded with POST, multipart)."""

    kind: Literal["tiktoken"] = Field(
        "tiktoken", description="tiktoken; upload a Hugging Face tokenizer.json with POST."
    )
    encoding: EncodingName
    context_length: int | None = Field(None, ge=1, le=100_000_000)


class TokenizerUploadIn(Schema):
    context_length: int | None = Field(None, ge=1, le=100_000_000)


class TokenizerOut(Schema):
    kind: str = Field(description="tiktoken or huggingface")
    encoding: str = Field(description="The tiktoken encoding (empty for huggingface).")
    name: str = Field(description="The encoding, or the uploaded file's name.")
    digest: str = Field(description="SHA-256 of the uploaded tokenizer.json (huggingface).")
    key: str = Field(description="Names the tokenizer in `token_counts.tokenizer`.")
    context_length: int | None
    available: bool = Field(description="Whether it can count on this server.")
    problem: str | None = Field(
        description="Why it cannot count here (e.g. the encoding's rank file is missing, and "
        "how to provide it)."
    )
    updated_at: datetime

    @classmethod
    def of(cls, setting) -> "TokenizerOut":
        problem = tokens.availability(setting)
        return cls(
            kind=setting.kind,
            encoding=setting.encoding,
            name=setting.name,
            digest=setting.digest,
            key=setting.key,
            context_length=setting.context_length,
            available=problem is None,
            problem=problem,
            updated_at=setting.updated_at,
        )
