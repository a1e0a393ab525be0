"""OpenChatML's JSON interchange projections (``openchatml-json``).

    document = "[" *object "]"  /  JSON Lines of objects  /  {"messages": [...]}
    2.2 §10:  {"role", "channel"?, "content"?, "tool_call"?: {"id", "recipient", "content_type",
               "arguments"}, "thinking"?, "intent"?, "name"?, "recipient"?, "call_id"?,
               "content_type"?, "end"?}
    2.0 §10:  {"role", "thinking"?, "content"?, "tool_calls"?: [{"id", "type", "function":
               {"name", "arguments"}}]}

A 2.2 object is one message (its ``thinking`` an ``analysis`` message before it); a 2.0
assistant object expands into ``analysis`` (thinking), ``final`` (content) and one
``commentary`` call per tool call, and a 2.0 tool reply without a name is named after the
call it answers (``_pair``). The variant is read from the document (any
``tool_calls`` array, or ``thinking`` with no ``channel`` anywhere, means 2.0) and written
back the same way; new documents are 2.2. ``end`` is an extension: the text form has
``<|return|>`` and the projection must not lose it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostics
from ..model import CALL, END, TERMINATORS, Message, Transcript, stamp
from ..specinfo import SpecInfo
from ..specs import Codec
from ..words import Badge, PartContext, optional_badges
from . import json_support as js
from .openchatml2 import NAMES, NEW_ASSISTANT_CHANNEL, OCM22_FORM_FIELDS, TOKEN_LABELS

if TYPE_CHECKING:
    from ..render import RenderedItem

SPEC = "openchatml-json"
V20, V22 = "2.0", "2.2"
ANALYSIS, COMMENTARY, FINAL = "analysis", "commentary", "final"
FUNCTIONS = "functions."
HEADER_FIELDS = ("name", "channel", "intent", "recipient", "call_id", "content_type")
KNOWN_KEYS = frozenset(
    {
        "role",
        "content",
        "thinking",
        "tool_call",
        "tool_calls",
        "tool_call_id",
        "to",
        "end",
        *HEADER_FIELDS,
    }
)
EXTRA = "json"


def parse(text: str, sink: Diagnostics) -> Transcript:
    transcript = Transcript(spec=SPEC)
    nodes = js.load(text, sink, lines=True)
    if nodes is None:
        return transcript
    lines = len(nodes) > 1 or (isinstance(nodes[0].value, dict) and "role" in nodes[0].value)
    array = None
    if lines:
        items, key = nodes, None
    else:
        array, transcript.attrs, key = js.message_list(
            nodes[0], ("messages",), sink, "OpenChatML JSON"
        )
        items = array.items if array is not None else []
    variant = _variant([n.value for n in items])
    calls = js.Calls()
    for index, node in enumerate(items):
        raw = text[node.start : node.end]
        for message in object_messages(node, index, variant, sink):
            if variant == V20:
                _pair(message, calls)
            transcript.messages.append(stamp(message, SPEC, node.start, raw))
    js.remember(
        transcript,
        text,
        array=array,
        sink=sink,
        json_lines=items if lines else None,
        key=key,
        variant=variant,
        lines=lines,
    )
    return transcript


def _variant(objects: list[Any]) -> str:
    dicts = [o for o in objects if isinstance(o, dict)]
    if any("tool_calls" in o for o in dicts):
        return V20
    if any("thinking" in o for o in dicts) and not any(
        "channel" in o or "tool_call" in o for o in dicts
    ):
        return V20
    return V22


def object_messages(node: js.Node, index: int, variant: str, sink: Diagnostics) -> list[Message]:
    """object = {"role", …}   (see the module docstring for both variants)"""
    data = node.value
    if not js.has_string_key(node, "role", "A message", index, sink):
        return []
    role = data["role"]
    out: list[Message] = []
    if isinstance(data.get("thinking"), str):
        out.append(Message(role=role, content=data["thinking"], channel=ANALYSIS))
    fields = {k: data[k] for k in HEADER_FIELDS if isinstance(data.get(k), str)}
    if "to" in data and "recipient" not in fields:
        fields["recipient"] = data["to"]
    if "tool_call_id" in data:
        fields["call_id"] = data["tool_call_id"]
    end = data.get("end", END)
    if end not in TERMINATORS and end is not None:
        js.shape_error(sink, node.at("end"), '"end" must be "end", "call", "return" or null', index)
        end = END
    content = data.get("content")
    if content is not None and not isinstance(content, str):
        js.shape_error(sink, node.at("content"), '"content" must be a string', index)
        content = None
    calls = _calls(data, variant, node, index, sink)
    # `"content": ""` beside a call (as the §10 example writes content with tool_call) is no
    # message of its own, as in Chat Completions.
    if (content is not None and not (calls and content == "")) or not (calls or out):
        channel = fields.get("channel", FINAL if variant == V20 and role == "assistant" else None)
        out.append(
            Message(role=role, content=content or "", end=end, **{**fields, "channel": channel})
        )
    for call in calls:
        if variant == V22:
            call.channel = fields.get("channel", COMMENTARY)
            call.intent, call.name = fields.get("intent"), fields.get("name")
            call.content_type = fields.get("content_type")
        out.append(call)
    extra = {k: v for k, v in data.items() if k not in KNOWN_KEYS}
    if extra:
        out[0].attrs[EXTRA] = extra
    return out


def _pair(message: Message, calls: js.Calls) -> None:
    """2.0 §10 is Chat Completions' shape plus ``thinking``, and says nothing of tool replies:
    they are read as Chat Completions' are (``jsonformats``). A reply with neither ``name``
    nor a known ``tool_call_id`` answers the first call still unanswered, as gpt-oss's chat
    template, Hugging Face datasets and ollama pair them, and is named after its tool."""
    if message.end == CALL and message.recipient:
        calls.called(message)
    elif message.role == "tool":
        answered = calls.answered(message.call_id if isinstance(message.call_id, str) else None)
        if message.name is None and answered:
            message.name = answered


def _calls(data: dict, variant: str, node: js.Node, index: int, sink: Diagnostics) -> list[Message]:
    role = data["role"]
    if variant == V22:
        call = data.get("tool_call")
        if call is None:
            return []
        if not isinstance(call, dict) or not isinstance(call.get("arguments", ""), str):
            js.shape_error(
                sink,
                node.at("tool_call"),
                '"tool_call" must be {"id", "recipient", "arguments"}',
                index,
            )
            return []
        return [
            Message(
                role=role,
                content=call.get("arguments", ""),
                recipient=call.get("recipient"),
                call_id=call.get("id"),
                constrain=call.get("content_type"),
                end=CALL,
            )
        ]
    out = []
    for call in data.get("tool_calls") or ():
        function = js.tool_call_function(call, node, index, sink)
        if function is None:
            continue
        name = function["name"]
        out.append(
            Message(
                role=role,
                content=str(function.get("arguments", "")),
                channel=COMMENTARY,
                recipient=name if name.startswith(FUNCTIONS) else FUNCTIONS + name,
                call_id=call.get("id"),
                constrain="json",
                end=CALL,
            )
        )
    return out


# --- writing -------------------------------------------------------------------------------


def _plain_analysis(message: Message) -> bool:
    """An analysis message that fits in the ``thinking`` of the next object."""
    return (
        message.channel == ANALYSIS
        and message.end == END
        and not message.attrs
        and all(
            getattr(message, f) is None
            for f in ("name", "intent", "recipient", "call_id", "content_type")
        )
    )


Written = list[tuple[dict[str, Any], list[Message]]]  # each object with the messages it holds


def objects_22(messages: list[Message]) -> Written:
    out: Written = []
    thinking: Message | None = None
    for message in messages:
        # A channel-less object with "thinking" would read back as the 2.0 shape (content
        # as final), so thinking only folds into an object that states its channel.
        if thinking is not None and (
            message.role != thinking.role
            or message.channel in (ANALYSIS, None)
            or not js.same_item(thinking, message, SPEC)
        ):
            out.append((object_22(thinking, None), [thinking]))
            thinking = None
        if _plain_analysis(message) and thinking is None:
            thinking = message
            continue
        out.append((object_22(message, thinking), [thinking, message] if thinking else [message]))
        thinking = None
    if thinking is not None:
        out.append((object_22(thinking, None), [thinking]))
    return out


def object_22(message: Message, thinking: Message | None) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role}
    call = message.end == CALL
    for name in HEADER_FIELDS:
        value = getattr(message, name)
        if value is None or (call and name in ("recipient", "call_id")):
            continue
        out[name] = value
    if call:
        if _read_beside_empty_content(message):
            out["content"] = ""  # as the §10 example writes it, and as it was read
        tool_call: dict[str, Any] = {}
        if message.call_id is not None:
            tool_call["id"] = message.call_id
        if message.recipient is not None:
            tool_call["recipient"] = message.recipient
        if message.constrain is not None:
            tool_call["content_type"] = message.constrain
        tool_call["arguments"] = message.content
        out["tool_call"] = tool_call
    else:
        out["content"] = message.content
        if message.end != END:
            out["end"] = message.end
    if thinking is not None:
        out["thinking"] = thinking.content
    for key, value in (message.attrs.get(EXTRA) or {}).items():
        out.setdefault(key, value)
    return out


def _read_beside_empty_content(call: Message) -> bool:
    """True when ``call`` was read from an object that wrote ``"content": ""`` beside its
    ``tool_call`` (no message of its own), which it is then written back with."""
    item = js.item_read(call, SPEC)
    return isinstance(item, dict) and item.get("content") == "" and "tool_call" in item


def _slot(message: Message) -> int:
    if message.end == CALL:
        return 2
    return 0 if message.channel == ANALYSIS else 1


def objects_20(messages: list[Message]) -> Written:
    groups: list[list[Message]] = []
    for message in messages:
        if groups and groups[-1][-1].role == message.role == "assistant":
            last = _slot(groups[-1][-1])
            # As in Chat Completions: two objects stay two, unless the first thinks only.
            apart = last != 0 and not js.same_item(groups[-1][-1], message, SPEC)
            if (last < _slot(message) or last == _slot(message) == 2) and not apart:
                groups[-1].append(message)
                continue
        groups.append([message])
    out = []
    for group in groups:
        obj: dict[str, Any] = {"role": group[0].role}
        for message in group:
            kind = _slot(message)
            if kind == 0 and group[0].role == "assistant":
                obj["thinking"] = message.content
            elif kind == 2:
                function = {
                    "name": _function_name(message.recipient),
                    "arguments": message.content,
                }
                obj.setdefault("tool_calls", []).append(
                    {"id": message.call_id, "type": "function", "function": function}
                )
            else:
                obj["content"] = message.content
                if message.name is not None:
                    obj["name"] = message.name
                if message.call_id is not None:
                    obj["tool_call_id"] = message.call_id
        for key, value in (group[0].attrs.get(EXTRA) or {}).items():
            obj.setdefault(key, value)
        out.append((obj, group))
    return out


def _function_name(recipient: str | None) -> str:
    """A 2.0 ``tool_calls`` function name: the recipient without ``functions.``."""
    recipient = recipient or ""
    return recipient[len(FUNCTIONS) :] if recipient.startswith(FUNCTIONS) else recipient


def serialize(transcript: Transcript) -> str:
    source = js.unchanged_source(transcript, SPEC)
    if source is not None:
        return source
    layout = transcript.layout or {}
    variant = layout.get("variant", V22)
    written = objects_20(transcript.messages) if variant == V20 else objects_22(transcript.messages)
    spliced = js.spliced(transcript, SPEC, written)
    if spliced is not None:
        return spliced
    objects = [obj for obj, _ in written]
    if layout.get("lines") and objects:
        return "".join(js.json.dumps(o, ensure_ascii=False) + "\n" for o in objects)
    return js.dumps(
        js.wrap(objects, transcript, "messages") if layout.get("key") else objects, transcript
    )


# --- what the app needs to know of the projection ------------------------------------------


def part_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """The 2.2 §10 keys, or the 2.0 ones when the document is 2.0. The variant is the reader's
    (``layout``); a transcript read without its text is taken as 2.2, as the writer does."""
    if context.transcript.layout.get("variant") == V20:
        return _badges_20(message, item, context)
    if _plain_analysis(message) and len(context.group) > 1 and message is context.group[0]:
        return [Badge("thinking")]
    call = message.end == CALL
    badges = [Badge("tool_call", item.recipient) if call else Badge("content")]
    badges += optional_badges(
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


def _badges_20(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    if message.end == CALL:
        calls = [m for m in context.group if m.end == CALL]
        position = next(i for i, m in enumerate(calls) if m is message)
        name = _function_name(item.recipient)
        return [Badge(f"tool_calls[{position}]", name), *optional_badges(("id", item.call_id))]
    if message.channel == ANALYSIS and message.role == "assistant":
        return [Badge("thinking")]
    return [
        Badge("content"),
        *optional_badges(("name", item.name), ("tool_call_id", item.call_id)),
    ]


# OpenChatML 2.x as JSON objects: its fields, words and channels, its own keys for badges.
INFO = SpecInfo(
    family="openchatml-2",
    text=False,
    fields=OCM22_FORM_FIELDS,
    vocabulary=NAMES,
    part_badges=part_badges,
    field_labels=TOKEN_LABELS,
    default_channel=NEW_ASSISTANT_CHANNEL,
    splits_messages=True,
)

CODECS = (Codec(SPEC, parse, serialize, info=INFO),)
