"""OpenAI ChatML, text form (docs/formats.md, spec id ``chatml``).

    FormattedRequest  = *Message [CompletionRequest]
    Message           = "<|start|>" RoleName "<|message|>" Text "<|end_message|>"
    CompletionRequest = "<|start|>" RoleName "<|message|>" [Text] / "<|start|>" RoleName

A dialect of the OpenChatML 2.x engine (openchatml2.py) without channels, header or escapes.
Any role is read as written (``system:example_user`` and unknown ones too; the validator
judges them). An open last message is the document's CompletionRequest, a legitimate prompt:
it is reported as I-PARSE-COMPLETION-PROMPT, not as an error (the streaming parser still
reports E-STREAM-TRUNCATED when a stream stops inside a message).
"""

from __future__ import annotations

from ..diagnostics import Diagnostics
from ..model import END, Transcript
from ..specinfo import SpecInfo, Vocabulary
from ..specs import Codec
from ..words import role_and_body_badges
from .openchatml2 import MESSAGE, START, Dialect, parse_document, serialize_document
from .scanner import token

END_MESSAGE = "end_message"

CHATML = Dialect(
    spec="chatml",
    vocabulary=frozenset({START, MESSAGE, END_MESSAGE}),
    terminators={END_MESSAGE: END},
    end_tokens={END: END_MESSAGE},
    channels=False,
    open_body_is_prompt=True,
    head_tokens=frozenset(),
)


def parse(src: str, sink: Diagnostics) -> Transcript:
    """FormattedRequest = *Message [CompletionRequest]"""
    return parse_document(src, sink, CHATML)


def serialize(transcript: Transcript) -> str:
    """Unedited messages as read; edited ones as ``<|start|>ROLE<|message|>TEXT<|end_message|>``."""
    return serialize_document(transcript, CHATML)


# Roles are read as written (the validator judges them); the JSON token list (chatml_json)
# says the same as the text.
INFO = SpecInfo(
    family="chatml",
    text=True,
    fields=("role", "name"),
    vocabulary=Vocabulary(roles=("system", "user", "assistant")),
    part_badges=role_and_body_badges,
)

CODECS = (Codec("chatml", parse, serialize, message_start=token(START), info=INFO),)
