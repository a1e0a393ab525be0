"""The JSON message formats: OpenAI Chat Completions ``messages`` and ShareGPT.

    openai   = "[" *message "]"  /  {"messages": [...], "tools"?: [...], …}
    message  = {"role", "content"?: string | null | [part…], "name"?, "tool_calls"?,
                "tool_call_id"?, "reasoning" | "reasoning_content"?, …}
    sharegpt = "[" *turn "]"  /  {"conversations": [...], …};  turn = {"from", "value", …}

One JSON message may become several canonical ones (reasoning → an ``analysis`` message,
each tool call → a ``commentary`` call message); the serializer groups them back. Mapping
tables and decisions: docs/formats.md. The token-list and OpenChatML JSON
projections live in ``chatml_json`` and ``ocm_json``; this module exposes all their codecs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostics
from ..model import CALL, Message, Transcript, is_builtin
from ..specinfo import SpecInfo, Vocabulary
from ..specs import Codec
from ..words import Badge, PartContext, optional_badges
from . import json_depth
from . import json_support as js
from .chatml_json import CODECS as CHATML_JSON_CODECS
from .ocm_json import CODECS as OCM_JSON_CODECS

if TYPE_CHECKING:
    from ..render import RenderedItem

OPENAI = "openai-messages"
SHAREGPT = "sharegpt"

FUNCTIONS = "functions."
ANALYSIS, COMMENTARY = "analysis", "commentary"
# "thinking": gpt-oss's chat template, Hugging Face datasets and ollama write reasoning so.
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
OPENAI_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call", *REASONING_KEYS}
)
LEGACY_FUNCTION_ROLE, LEGACY_FUNCTION_ROLE_ATTR = "function", "legacy_function_role"
PROSE_KEYS = frozenset({"role", "content"})
PAIRED_ROLES = frozenset({"tool", LEGACY_FUNCTION_ROLE})  # replies: named after their call
EXTRA = "json"  # attrs key: a JSON message's keys this mapping does not read, kept verbatim
# attrs mark: the message ends its JSON message, what follows starts another (a conversion's
# answer before a call of a later turn, which no position in a document tells apart)
ENDS_MESSAGE = "ends_message"


def recipient_for(name: str) -> str:
    """A function name as a canonical recipient: ``get_weather`` → ``functions.get_weather``."""
    return name if name.startswith(FUNCTIONS) else FUNCTIONS + name


def tool_recipient(name: str, functions: frozenset[str]) -> str:
    """An OpenAI tool call's name as a recipient: a gpt-oss built-in (``python``,
    ``browser.search``) keeps its own namespace unless ``tools`` declares a function of that
    name; any other name is ``functions.NAME``."""
    return name if is_builtin(name) and name not in functions else recipient_for(name)


def declared_functions(attrs: dict[str, Any]) -> frozenset[str]:
    """The function names a Chat Completions document's ``tools`` declares."""
    tools = attrs.get("tools")
    names = set()
    for tool in tools if isinstance(tools, list) else ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return frozenset(names)


def function_name(recipient: str | None) -> str:
    recipient = recipient or ""
    return recipient[len(FUNCTIONS) :] if recipient.startswith(FUNCTIONS) else recipient


# --- OpenAI Chat Completions ---------------------------------------------------------------


def parse_openai(text: str, sink: Diagnostics) -> Transcript:
    return read_openai(text, js.load(text, sink), sink)


def read_openai(text: str, nodes: list[js.Node] | None, sink: Diagnostics) -> Transcript:
    """The transcript of a document ``js.load`` has read."""
    transcript = Transcript(spec=OPENAI)
    if nodes is None:
        return transcript
    array, others, key = js.message_list(nodes[0], ("messages",), sink, "Chat Completions messages")
    transcript.attrs = others
    calls = js.Calls()
    functions = declared_functions(others)
    messages = transcript.messages
    for index, item in enumerate(array.items if array is not None else ()):
        read = openai_messages(item, index, calls, sink, functions)
        messages += [js.stamped(m, OPENAI, text, item) for m in read] if item.located else read
    js.remember(transcript, text, nodes[0].located, array, sink, key=key)
    return transcript


def openai_messages(
    node: js.Node,
    index: int,
    calls_read: js.Calls,
    sink: Diagnostics,
    functions: frozenset[str],
) -> list[Message]:
    """message = {"role", "content"?, "name"?, "tool_calls"?, "tool_call_id"?,
    "reasoning_content" | "reasoning" | "thinking"?}"""
    data = node.value
    if type(data) is dict and data.keys() == PROSE_KEYS:
        # Most messages of a dataset are prose, {"role", "content": "…"}: one message, as
        # the general reading gives it, without its questions.
        role, content = data["role"], data["content"]
        if type(role) is str and type(content) is str and role not in PAIRED_ROLES:
            return [Message(role=role, content=content)]
    return _message_fields(node, index, calls_read, sink, functions)


def _message_fields(
    node: js.Node,
    index: int,
    calls_read: js.Calls,
    sink: Diagnostics,
    functions: frozenset[str],
) -> list[Message]:
    """``openai_messages``, every field looked at."""
    data = node.value
    if not js.has_string_key(node, "role", "A message", index, sink):
        return []
    role = data["role"]
    # The legacy reply to a `function_call` ({"role": "function", "name"}) is a tool reply.
    legacy_reply = role == LEGACY_FUNCTION_ROLE
    if legacy_reply:
        role = "tool"
    out: list[Message] = []
    extra = (
        {}
        if data.keys() <= OPENAI_KEYS
        else {k: v for k, v in data.items() if k not in OPENAI_KEYS}
    )
    reasoning = _reasoning_key(data)
    if reasoning is not None:
        attrs = {} if reasoning == REASONING_KEYS[0] else {"reasoning_key": reasoning}
        out.append(Message(role=role, content=data[reasoning], channel=ANALYSIS, attrs=attrs))
        for key in REASONING_KEYS:
            if key != reasoning and data.get(key):
                # A second, non-empty reasoning key has no message of its own: it stays as
                # written.
                extra[key] = data[key]
    calls = data.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        js.shape_error(sink, node.at("tool_calls"), '"tool_calls" must be an array', index)
        calls = None
    content = data.get("content")
    if not (calls or "function_call" in data) or content not in (None, ""):
        body = content_message(node, content, role, index, sink)
        if body is not None:
            out.append(body)
    for call in calls or ():
        message = tool_call_message(call, role, node, index, sink, functions)
        if message is not None:
            out.append(message)
            calls_read.called(message)
    legacy = data.get("function_call")
    if isinstance(legacy, dict):
        out.append(
            Message(
                role=role,
                content=str(legacy.get("arguments", "")),
                channel=COMMENTARY,
                recipient=recipient_for(str(legacy.get("name", ""))),
                end=CALL,
                attrs={"legacy_function_call": True},
            )
        )
    if not out:
        out.append(Message(role=role, content="", attrs={"content": None}))
    first = out[0]
    if legacy_reply:
        first.attrs[LEGACY_FUNCTION_ROLE_ATTR] = True
    if "name" in data and role == "tool":
        first.name = tool_recipient(str(data["name"]), functions)
        first.attrs["name_written"] = True
    elif "name" in data:
        first.name = data["name"]
    if "tool_call_id" in data:
        first.call_id = data["tool_call_id"]
    if role == "tool":
        call_id = first.call_id if isinstance(first.call_id, str) else None
        answered = calls_read.answered(call_id)
        if first.name is None and answered:
            first.name = answered
    if extra:
        first.attrs[EXTRA] = extra
    return out


def _reasoning_key(data: dict[str, Any]) -> str | None:
    """The key holding a message's reasoning: the first with text, else the first string."""
    if data.keys().isdisjoint(REASONING_KEYS):  # most messages: no reasoning at all
        return None
    first_string = None
    for key in REASONING_KEYS:
        value = data.get(key)
        if isinstance(value, str):
            if value:
                return key
            first_string = first_string or key
    return first_string


def content_message(
    node: js.Node, content: Any, role: str, index: int, sink: Diagnostics
) -> Message | None:
    """content = string / null / [part…]   (parts kept; their text parts joined as the content)"""
    if isinstance(content, str):
        return Message(role=role, content=content)
    if content is None:
        return Message(role=role, content="", attrs={"content": None})
    if isinstance(content, list):
        texts = [
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        ]
        return Message(role=role, content="".join(texts), attrs={"content_parts": content})
    js.shape_error(
        sink, node.at("content"), '"content" must be a string, null or an array of parts', index
    )
    return None


def tool_call_message(
    call: Any,
    role: str,
    node: js.Node,
    index: int,
    sink: Diagnostics,
    functions: frozenset[str],
) -> Message | None:
    """tool_call = {"id", "type": "function", "function": {"name", "arguments"}}

    A function's arguments are a JSON object by contract (``<|constrain|>json``, so bad JSON is
    reported); a built-in's are what the tool reads (Python code for ``python``), unconstrained
    as gpt-oss writes them."""
    function = js.tool_call_function(call, node, index, sink)
    if function is None:
        return None
    arguments = function.get("arguments", "")
    attrs: dict[str, Any] = {}
    if not isinstance(arguments, str):
        attrs["arguments_json"] = True  # written as a JSON value rather than a string
        arguments = js.json.dumps(arguments, ensure_ascii=False)
    if call.get("type", "function") != "function":
        attrs["type"] = call.get("type")
    recipient = tool_recipient(function["name"], functions)
    return Message(
        role=role,
        content=arguments,
        channel=COMMENTARY,
        recipient=recipient,
        call_id=call.get("id"),
        constrain="json" if recipient.startswith(FUNCTIONS) else None,
        end=CALL,
        attrs=attrs,
    )


def serialize_openai(transcript: Transcript) -> str:
    source = js.unchanged_source(transcript, OPENAI)
    if source is not None:
        return source
    groups = group_turns(transcript.messages)
    objects = [openai_object(group) for group in groups]
    spliced = js.spliced(transcript, OPENAI, list(zip(objects, groups, strict=True)))
    if spliced is not None:
        return spliced
    return js.dumps(js.wrap(objects, transcript, "messages"), transcript)


def slot(message: Message) -> int:
    """Order of the parts of one JSON assistant message: reasoning, content, tool calls."""
    if message.end == CALL and message.channel == COMMENTARY:
        return 2
    return 0 if message.channel == ANALYSIS else 1


def group_turns(messages: list[Message]) -> list[list[Message]]:
    """Runs of same-role messages that one JSON message holds (slots in increasing order).
    Messages read from two JSON messages stay in two, unless the first holds reasoning alone:
    written alone, it would read back with an empty content message. A message marked
    ``ENDS_MESSAGE`` is the last of its group."""
    groups: list[list[Message]] = []
    for message in messages:
        if groups:
            last = groups[-1][-1]
            if (
                not last.attrs.get(ENDS_MESSAGE)
                and last.role == message.role
                and (slot(last) < slot(message) or slot(last) == slot(message) == 2)
                and (slot(last) == 0 or js.same_item(last, message, OPENAI))
            ):
                groups[-1].append(message)
                continue
        groups.append([message])
    return groups


def openai_object(group: list[Message]) -> dict[str, Any]:
    first = group[0]
    legacy_reply = first.role == "tool" and first.attrs.get(LEGACY_FUNCTION_ROLE_ATTR)
    out: dict[str, Any] = {"role": LEGACY_FUNCTION_ROLE if legacy_reply else first.role}
    calls = []
    has_content = False
    for message in group:
        kind = slot(message)
        if kind == 0:
            out[message.attrs.get("reasoning_key", REASONING_KEYS[0])] = message.content
        elif kind == 1:
            has_content = True
            out["content"] = content_value(message)
        elif message.attrs.get("legacy_function_call"):
            out["function_call"] = {
                "name": function_name(message.recipient),
                "arguments": message.content,
            }
        else:
            calls.append(tool_call_object(message))
    if not has_content and not _read_without_content(group):
        out["content"] = None
    if calls:
        out["tool_calls"] = calls
    # A tool reply is named by its call id; without one, its name is all that says which
    # tool answered.
    named = first.attrs.get("name_written") or first.call_id is None
    if first.name is not None and (first.role != "tool" or named):
        out["name"] = function_name(first.name) if first.role == "tool" else first.name
    if first.call_id is not None and first.role == "tool":
        out["tool_call_id"] = first.call_id
    for key, value in (first.attrs.get(EXTRA) or {}).items():
        out.setdefault(key, value)
    return out


def _read_without_content(group: list[Message]) -> bool:
    """True when ``group`` was read from a JSON message with no "content" key (tool calls
    alone, as OpenAI's fine-tuning examples write them), which it is then written back as."""
    read = next((m for m in group if m.source is not None and m.source.spec == OPENAI), None)
    item = None if read is None else js.item_read(read, OPENAI)
    return isinstance(item, dict) and "content" not in item


def content_value(message: Message) -> Any:
    parts = message.attrs.get("content_parts")
    if parts is not None:
        texts = [p for p in parts if isinstance(p, dict) and p.get("type") == "text"]
        if "".join(p.get("text", "") for p in texts) == message.content:
            return parts
        # Edited: the new text replaces the text parts, the other parts (images…) stay.
        others = [p for p in parts if p not in texts]
        return [{"type": "text", "text": message.content}, *others]
    if message.content == "" and "content" in message.attrs and message.attrs["content"] is None:
        return None
    return message.content


def tool_call_object(message: Message) -> dict[str, Any]:
    arguments: Any = message.content
    if message.attrs.get("arguments_json"):
        try:
            arguments = json_depth.loads(message.content)
        except ValueError:
            arguments = message.content
    call: dict[str, Any] = {}
    if message.call_id is not None:
        call["id"] = message.call_id
    call["type"] = message.attrs.get("type", "function")
    call["function"] = {"name": function_name(message.recipient), "arguments": arguments}
    return call


# --- ShareGPT -------------------------------------------------------------------------------

FROM_ROLE = {
    "human": "user",
    "gpt": "assistant",
    "system": "system",
    "observation": "tool",
    "function_call": "assistant",
    "tool": "tool",
}


def sharegpt_from(message: Message) -> str:
    """The ``from`` a canonical message is written with (its kept original wins)."""
    kept = message.attrs.get("from")
    if kept is not None:
        return kept
    if message.role == "assistant":
        return "function_call" if message.end == CALL else "gpt"
    return {"user": "human", "system": "system", "tool": "observation"}.get(
        message.role, message.role
    )


def parse_sharegpt(text: str, sink: Diagnostics) -> Transcript:
    return read_sharegpt(text, js.load(text, sink), sink)


def read_sharegpt(text: str, nodes: list[js.Node] | None, sink: Diagnostics) -> Transcript:
    """The transcript of a document ``js.load`` has read."""
    transcript = Transcript(spec=SHAREGPT)
    if nodes is None:
        return transcript
    array, others, key = js.message_list(
        nodes[0], ("conversations",), sink, "a ShareGPT conversation"
    )
    transcript.attrs = others
    for index, item in enumerate(array.items if array is not None else ()):
        message = sharegpt_message(item, index, sink)
        if message is not None:
            transcript.messages.append(js.stamped(message, SHAREGPT, text, item))
    js.remember(transcript, text, nodes[0].located, array, sink, key=key)
    return transcript


def sharegpt_message(node: js.Node, index: int, sink: Diagnostics) -> Message | None:
    """turn = {"from": string, "value": string, …}"""
    data = node.value
    if not js.has_string_key(node, "from", "A ShareGPT turn", index, sink):
        return None
    value = data.get("value")
    if not isinstance(value, str):
        js.shape_error(sink, node.at("value"), 'A ShareGPT turn needs a string "value"', index)
        value = ""
    source = data["from"]
    message = Message(role=FROM_ROLE.get(source, source), content=value)
    if source == "function_call":
        message.channel, message.end = COMMENTARY, CALL
        name = _call_name(value)
        if name:
            message.recipient = recipient_for(name)
    if sharegpt_from(message) != source:
        message.attrs["from"] = source
    extra = {k: v for k, v in data.items() if k not in ("from", "value")}
    if extra:
        message.attrs[EXTRA] = extra
    return message


def _call_name(value: str) -> str | None:
    try:
        call = json_depth.loads(value)
    except ValueError:
        return None
    name = call.get("name") if isinstance(call, dict) else None
    return name if isinstance(name, str) else None


def serialize_sharegpt(transcript: Transcript) -> str:
    source = js.unchanged_source(transcript, SHAREGPT)
    if source is not None:
        return source
    turns = []
    for message in transcript.messages:
        turn = {"from": sharegpt_from(message), "value": message.content}
        for key, value in (message.attrs.get(EXTRA) or {}).items():
            turn.setdefault(key, value)
        turns.append(turn)
    spliced = js.spliced(
        transcript, SHAREGPT, [(t, [m]) for t, m in zip(turns, transcript.messages, strict=True)]
    )
    if spliced is not None:
        return spliced
    return js.dumps(js.wrap(turns, transcript, "conversations"), transcript)


# --- what the app needs to know of the two specs ---------------------------------------------


def openai_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """The key each part of a JSON message is written under (``reasoning_content``,
    ``content``, ``tool_calls[0]``, legacy ``function_call``) with the function it calls,
    then the keys of the JSON message itself on its first part."""
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
        badges += optional_badges(("id", item.call_id), ("type", message.attrs.get("type")))
    if (
        first
        and item.name is not None
        and (item.role != "tool" or message.attrs.get("name_written"))
    ):
        badges.append(Badge("name", function_name(item.name) if item.role == "tool" else item.name))
    if first and item.role == "tool":
        badges += optional_badges(("tool_call_id", item.call_id))
    return badges


def openai_role(message: Message) -> str:
    """The role as written: a reply read from the legacy ``function`` role says so again."""
    return LEGACY_FUNCTION_ROLE if message.attrs.get(LEGACY_FUNCTION_ROLE_ATTR) else message.role


def sharegpt_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """A turn is its ``from`` (the role shown) and its ``value``."""
    return [Badge("value")]


OPENAI_INFO = SpecInfo(
    family="openai-messages",
    text=False,
    fields=("role", "name", "recipient", "call_id"),
    vocabulary=Vocabulary(roles=("system", "developer", "user", "assistant", "tool")),
    part_badges=openai_badges,
    field_labels={"recipient": "function (tool_calls)", "call_id": "id / tool_call_id"},
    role_as_written=openai_role,
    splits_messages=True,
    file_groups=group_turns,
)
SHAREGPT_INFO = SpecInfo(
    family="sharegpt",
    text=False,
    fields=("role", "name", "recipient"),
    vocabulary=Vocabulary(roles=("system", "user", "assistant", "tool")),
    part_badges=sharegpt_badges,
    field_labels={"role": "from", "recipient": "function"},
    role_as_written=sharegpt_from,
)

CODECS = (
    Codec(OPENAI, parse_openai, serialize_openai, read=read_openai, info=OPENAI_INFO),
    Codec(SHAREGPT, parse_sharegpt, serialize_sharegpt, read=read_sharegpt, info=SHAREGPT_INFO),
    *CHATML_JSON_CODECS,
    *OCM_JSON_CODECS,
)
