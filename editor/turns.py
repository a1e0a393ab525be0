"""Assistant turns: where one starts and ends, what its content hash is, and keeping a turn as
an ``Alternative`` (once per content).

A *turn* starts at an assistant message and runs over the assistant and tool messages after
it, until the next user, system or developer message (or the end): the completion a model
gave for the prompt before it.

This sits in the domain-rules layer, below the write path, because the write path needs it:
an edit of a turn that has alternatives keeps the turn before and after the edit among them
(``editor.pairs.keep_edited_turns``, called by ``storage.save._write``), as well as
``editor.alternatives`` (adding, promoting) and the preference import.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from django.db import IntegrityError, transaction

from editor import formats
from editor.errors import MessageNotFound, NotATurn
from editor.models import Alternative, Transcript

# Roles that end a turn; any other message after the assistant's belongs to it (tool results,
# more assistant messages).
TURN_BREAKERS = frozenset({"user", "system", "developer"})


def turn_end(messages: Sequence[formats.Message], index: int) -> int:
    """The index just past the turn starting at ``index`` (``NotATurn`` unless message
    ``index`` is an assistant message; ``MessageNotFound`` when there is no such message)."""
    if not 0 <= index < len(messages):
        raise MessageNotFound(
            f"No message {index}: the transcript has {len(messages)} messages (indexes from 0)."
        )
    if messages[index].role != "assistant":
        raise NotATurn(
            f"Message {index} is a {messages[index].role!r} message: a turn starts at an "
            "assistant message.",
            details={"message_index": index},
        )
    end = index + 1
    while end < len(messages) and messages[end].role not in TURN_BREAKERS:
        end += 1
    return end


def turn_messages(messages: Sequence[formats.Message], index: int) -> list[formats.Message]:
    """The messages of the turn starting at ``index``."""
    return list(messages[index : turn_end(messages, index)])


def turn_starts(messages: Sequence[formats.Message]) -> list[int]:
    """The first index of every turn of ``messages``."""
    return [
        i
        for i, message in enumerate(messages)
        if message.role == "assistant" and (i == 0 or messages[i - 1].role in TURN_BREAKERS)
    ]


def turn_start_of(messages: Sequence[formats.Message], index: int) -> int:
    """The first index of the turn holding message ``index`` (``NotATurn`` when it is in
    none: a user, system or developer message, or tool results with no assistant before)."""
    if not 0 <= index < len(messages):
        raise MessageNotFound(
            f"No message {index}: the transcript has {len(messages)} messages (indexes from 0)."
        )
    start = index
    while start > 0 and messages[start - 1].role not in TURN_BREAKERS:
        start -= 1
    while start <= index and messages[start].role != "assistant":
        start += 1
    if start > index:
        raise NotATurn(
            f"Message {index} is in no assistant turn.", details={"message_index": index}
        )
    return start


def as_dicts(messages: Sequence[formats.Message]) -> list[dict]:
    return [message.to_dict() for message in messages]


def content_hash(messages: Sequence[formats.Message | dict]) -> str:
    """SHA-256 of the compact canonical JSON of ``messages`` (keys sorted)."""
    dicts = [m.to_dict() if isinstance(m, formats.Message) else m for m in messages]
    text = json.dumps(dicts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def keep_alternative(
    transcript: Transcript,
    index: int,
    messages: Sequence[formats.Message],
    source: str,
    author,
    note: str = "",
    generation: dict | None = None,
) -> Alternative:
    """The alternative holding ``messages`` at ``index``: the existing one (same content
    hash), else a new row."""
    digest = content_hash(messages)
    existing = Alternative.objects.filter(
        transcript=transcript, message_index=index, content_hash=digest
    ).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return Alternative.objects.create(
                transcript=transcript,
                message_index=index,
                messages=as_dicts(messages),
                content_hash=digest,
                source=source,
                note=note,
                generation=generation or {},
                created_by=author,
            )
    except IntegrityError:  # added at the same moment by someone else: that one stands
        return Alternative.objects.get(
            transcript=transcript, message_index=index, content_hash=digest
        )
