"""What each spec calls a message and its fields, for showing a transcript in its own words.

The canonical model is 2.2-shaped, so a Chat Completions assistant message with reasoning and
tool calls is three canonical messages on ``analysis``/``commentary`` channels. A person who
opened an OpenAI file expects one message with ``reasoning_content`` and ``tool_calls[0]``,
not Harmony's channels. This module answers, per spec:

* ``file_messages``: which canonical messages one message of the file holds;
* ``role_as_written``: the role as the file spells it (ShareGPT ``human``, legacy ``function``);
* ``part_badges``: each field of a canonical message as ``(label, value)`` in the spec's words.

The parts of ``editor.formats`` it reads (some private to their module) are imported here and
nowhere else in the app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from editor import formats
from editor.formats import CALL, END, RETURN, Message, Transcript
from editor.formats.codecs.jsonformats import (
    LEGACY_FUNCTION_ROLE,
    LEGACY_FUNCTION_ROLE_ATTR,
    OPENAI,
    REASONING_KEYS,
    SHAREGPT,
    function_name,
    group_turns,
    sharegpt_from,
    slot,
)
from editor.formats.codecs.mms import format_of
from editor.formats.codecs.ocm_json import SPEC as OCM_JSON
from editor.formats.codecs.ocm_json import V20, _plain_analysis
from editor.formats.codecs.v01body import TEXT, THOUGHT, parts

if TYPE_CHECKING:
    from editor.formats.render import RenderedItem

HARMONY_FAMILY = frozenset({"harmony", "openchatml-2.0", "openchatml-2.2"})
CHATML_FAMILY = frozenset({"chatml", "chatml-json"})
MMS_FAMILY = frozenset({"mms", "mms-tokens"})
V01 = "openchatml-0.1"
# Specs whose reader makes several canonical messages of one message of the file.
SPLITTING_SPECS = frozenset({OPENAI, OCM_JSON})

TERMINATOR_TOKENS = {CALL: "<|call|>", RETURN: "<|return|>", END: "<|end|>"}
TRUNCATED = "truncated"  # no terminator: the text stopped inside the message


class Badge(NamedTuple):
    label: str  # the spec's word for the field
    value: str | None = None  # None: the label says it all (e.g. "content")


class PartContext(NamedTuple):
    """What ``part_badges`` needs besides the message and its rendering."""

    transcript: Transcript  # as read: carries layout (the openchatml-json variant) when known
    group: list[Message]  # the canonical messages of the same file message, in order
    end_user: bool  # rendered for end users: end markers are not known, show none


# --- grouping ------------------------------------------------------------------------------


def reread(transcript: Transcript, source_text: str | None) -> Transcript:
    """``transcript`` with the reader's record of the file (each message's ``source``),
    parsed from ``source_text`` when the transcript came from storage without it.

    Only for specs whose reader splits a file message (elsewhere a file message is a canonical
    message), and only when the text still says exactly what ``transcript`` says.
    """
    if transcript.spec not in SPLITTING_SPECS or not source_text or _has_sources(transcript):
        return transcript
    parsed = formats.parse(source_text, transcript.spec).transcript
    return parsed if parsed.messages == transcript.messages else transcript


def _has_sources(transcript: Transcript) -> bool:
    """Every message is as the reader made it: its ``source`` describes it. (An edited message
    may carry a neighbour's source for layout, which says nothing about its own grouping.)"""
    return all(m.is_unchanged_from(transcript.spec) for m in transcript.messages)


def file_messages(transcript: Transcript) -> list[list[int]]:
    """The canonical message indices of each message of the file, in file order.

    The reader stamps every canonical message with where its file message starts, so
    messages read from one file message share ``source.start``: that record is used when the
    transcript carries it. Without it (a stored transcript whose text was not re-read), an
    OpenAI transcript is grouped as its serializer writes it (``jsonformats.group_turns``),
    which is how the file reads after any edit; every other spec has one canonical message
    per file message.
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
    if transcript.spec == OPENAI:
        groups, start = [], 0
        for run in group_turns(messages):
            groups.append(list(range(start, start + len(run))))
            start += len(run)
        return groups
    return [[index] for index in range(len(messages))]


def role_as_written(transcript: Transcript, message: Message) -> str:
    """The role of the file message that starts with ``message``, spelled as in the file."""
    if transcript.spec == SHAREGPT:
        return sharegpt_from(message)
    if transcript.spec == OPENAI and message.attrs.get(LEGACY_FUNCTION_ROLE_ATTR):
        return LEGACY_FUNCTION_ROLE
    return message.role


# --- field labels --------------------------------------------------------------------------


def part_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """``message``'s fields in its spec's words. Values come from ``item`` (the rendering for
    the audience, which leaves out what that audience may not see); labels and the ways the
    file wrote them come from ``message``."""
    words = WORDS.get(context.transcript.spec, _chatml_words)
    return words(message, item, context)


def _openai_words(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    first = message is context.group[0]
    kind = slot(message)
    if kind == 0:
        badges = [Badge(message.attrs.get("reasoning_key", REASONING_KEYS[0]))]
    elif kind == 1:
        badges = [Badge("content")]
    elif message.attrs.get("legacy_function_call"):
        badges = [Badge("function_call", function_name(item.recipient))]
    else:
        calls = [m for m in context.group if slot(m) == 2]
        position = next(i for i, m in enumerate(calls) if m is message)
        badges = [Badge(f"tool_calls[{position}]", function_name(item.recipient))]
        badges += _optional(("id", item.call_id), ("type", message.attrs.get("type")))
    if (
        first
        and item.name is not None
        and (item.role != "tool" or message.attrs.get("name_written"))
    ):
        badges.append(Badge("name", function_name(item.name) if item.role == "tool" else item.name))
    if first and item.role == "tool":
        badges += _optional(("tool_call_id", item.call_id))
    return badges


def _sharegpt_words(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    return [Badge("value")]


def _ocm_json_words(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """The 2.2 §10 keys, or the 2.0 ones when the document is 2.0. The variant is the reader's
    (``layout``); a transcript read without its text is taken as 2.2, as the writer does."""
    if context.transcript.layout.get("variant") == V20:
        return _ocm_json_20_words(message, item, context)
    if _plain_analysis(message) and len(context.group) > 1 and message is context.group[0]:
        return [Badge("thinking")]
    call = message.end == CALL
    badges = [Badge("tool_call", item.recipient) if call else Badge("content")]
    badges += _optional(
        ("channel", item.channel),
        ("name", item.name),
        ("intent", item.intent),
        ("recipient", None if call else item.recipient),
        ("id" if call else "call_id", item.call_id),
        ("content_type", item.constrain if call else item.content_type),
    )
    if not context.end_user and not call and item.end != END:
        badges.append(Badge("end", item.end or "null"))
    return badges


def _ocm_json_20_words(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    if message.end == CALL:
        calls = [m for m in context.group if m.end == CALL]
        position = next(i for i, m in enumerate(calls) if m is message)
        name = function_name(item.recipient)
        return [Badge(f"tool_calls[{position}]", name), *_optional(("id", item.call_id))]
    if message.channel == "analysis" and message.role == "assistant":
        return [Badge("thinking")]
    return [Badge("content"), *_optional(("name", item.name), ("tool_call_id", item.call_id))]


def _harmony_words(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    badges = _optional(
        ("channel", item.channel),
        ("to=", item.recipient),
        ("<|constrain|>", item.constrain),
        ("name", item.name),
        ("call_id", item.call_id),
        ("intent", item.intent),
        ("content_type", item.content_type),
    )
    if not context.end_user and item.end != END:
        badges.append(Badge(TERMINATOR_TOKENS.get(item.end, TRUNCATED)))
    return badges


def _chatml_words(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    # ChatML has a role and a body; the only other thing to say is an open last message.
    if not context.end_user and item.end is None:
        return [Badge(TRUNCATED)]
    return []


def _v01_words(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    badges = _optional(("name", item.name))
    badges += [Badge(key, str(value)) for key, value in message.attrs.items() if key != "file"]
    # The structured parts of the body the audience sees (thought blocks are not in an end
    # user's text), named by the tokens that write them.
    for part in parts(item.content):
        if part.kind == THOUGHT:
            badges.append(Badge(f"<|start_{part.detail}|>"))
        elif part.kind != TEXT:
            called = part.value.get("name") if isinstance(part.value, dict) else None
            badges.append(Badge(f"<|{part.detail or part.kind}|>", called))
    if not context.end_user and item.end is None:
        badges.append(Badge(TRUNCATED))
    return list(dict.fromkeys(badges))  # a system prompt may show the same token many times


def _mms_words(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    # `format` says how the body is written (markdown, json, `tool:json` for a call): a label,
    # not hidden content, so end users see it on the messages they see.
    badges = _optional(("name", item.name), ("format", format_of(message)))
    if not context.end_user and item.end == RETURN:
        badges.append(Badge("end_turn"))
    return badges


def _optional(*pairs: tuple[str, str | None]) -> list[Badge]:
    return [Badge(label, value) for label, value in pairs if value is not None]


WORDS: dict[str, Callable[[Message, RenderedItem, PartContext], list[Badge]]] = {
    OPENAI: _openai_words,
    SHAREGPT: _sharegpt_words,
    OCM_JSON: _ocm_json_words,
    V01: _v01_words,
    **dict.fromkeys(HARMONY_FAMILY, _harmony_words),
    **dict.fromkeys(CHATML_FAMILY, _chatml_words),
    **dict.fromkeys(MMS_FAMILY, _mms_words),
}
