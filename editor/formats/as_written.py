"""A transcript as its file writes it: what each spec calls a message and its fields.

The canonical model is 2.2-shaped, so a Chat Completions assistant message with reasoning and
tool calls is three canonical messages on ``analysis``/``commentary`` channels. A person who
opened an OpenAI file expects one message with ``reasoning_content`` and ``tool_calls[0]``,
not Harmony's channels. This module answers, for a transcript of any registered spec:

* ``file_messages``: which canonical messages one message of the file holds;
* ``role_as_written``: the role as the file spells it (ShareGPT ``human``, legacy ``function``);
* ``part_badges``: each field of a canonical message as ``(label, value)`` in the spec's words.

What differs between specs is the registry's to say (``formats.spec_info``); nothing here
names a spec.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import Message, Transcript
from .parsing import parse
from .specs import spec_info
from .words import Badge, PartContext

if TYPE_CHECKING:
    from .render import RenderedItem


# --- grouping ------------------------------------------------------------------------------


def reread(transcript: Transcript, source_text: str | None) -> Transcript:
    """``transcript`` with the reader's record of the file (each message's ``source``),
    parsed from ``source_text`` when the transcript came from storage without it.

    Only for specs whose reader splits a file message (elsewhere a file message is a canonical
    message), and only when the text still says exactly what ``transcript`` says.
    """
    if (
        not spec_info(transcript.spec).splits_messages
        or not source_text
        or _has_sources(transcript)
    ):
        return transcript
    parsed = parse(source_text, transcript.spec).transcript
    return parsed if parsed.messages == transcript.messages else transcript


def _has_sources(transcript: Transcript) -> bool:
    """Every message is as the reader made it: its ``source`` describes it. (An edited message
    may carry a neighbour's source for layout, which says nothing about its own grouping.)"""
    return all(m.is_unchanged_from(transcript.spec) for m in transcript.messages)


def file_messages(transcript: Transcript) -> list[list[int]]:
    """The canonical message indices of each message of the file, in file order.

    The reader stamps every canonical message with where its file message starts, so
    messages read from one file message share ``source.start``: that record is used when the
    transcript carries it. Without it (a stored transcript whose text was not re-read), the
    messages are grouped as the spec's writer groups them (``SpecInfo.file_groups``), which is
    how the file reads after any edit; a spec without one has one canonical message per file
    message.
    """
    messages = transcript.messages
    if messages and _has_sources(transcript):
        groups: list[list[int]] = []
        for index, message in enumerate(messages):
            if groups and messages[groups[-1][0]].source.start == message.source.start:
                groups[-1].append(index)
            else:
                groups.append([index])
        return groups
    writer_groups = spec_info(transcript.spec).file_groups
    if writer_groups is None:
        return [[index] for index in range(len(messages))]
    groups, start = [], 0
    for run in writer_groups(messages):
        groups.append(list(range(start, start + len(run))))
        start += len(run)
    return groups


def role_as_written(transcript: Transcript, message: Message) -> str:
    """The role of the file message that starts with ``message``, spelled as in the file."""
    return spec_info(transcript.spec).role_as_written(message)


# --- field labels --------------------------------------------------------------------------


def part_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """``message``'s fields in its spec's words. Values come from ``item`` (the rendering for
    the audience, which leaves out what that audience may not see); labels and the ways the
    file wrote them come from ``message``."""
    return spec_info(context.transcript.spec).part_badges(message, item, context)
