"""The hub every conversion passes through, and the loss record.

A hub message is a canonical ``Message`` in OpenChatML 2.2 semantics with its *logical*
content (no ``<<|`` escapes), paired with the index of the source message it came from, so
that every loss names the message the user wrote. ``lift`` turns any spec into hub messages
without losing anything but layout; ``convert.lower`` then writes them for the target.

Lifting (source → hub):

| source | hub |
|---|---|
| openchatml-2.2 | content unescaped (``scanner.unescape``) |
| openchatml-0.1 system prompt | ``<|function_list|>`` sections of tool objects → ``Hub.tools``; thought flags → ``attrs["v01_flags"]`` (the rest stays text) |
| openchatml-0.1 body | a final newline (before ``<|im_end|>``) is layout and dropped |
| openchatml-0.1 assistant body | one message per part: thought ``K`` → ``analysis`` with content ``<|start_K|>text``; text → ``final``; ``<|function_call|>`` → commentary call ``to=functions.NAME call_id=call_N <|constrain|>json`` + ``<|call|>`` (arguments as compact JSON) |
| openchatml-0.1 tool body with ``<|function_output|>`` | ``tool name=functions.NAME call_id=call_N`` on commentary (content: the JSON ``content`` value; a string as is) |
| mms platform / developer / user | system / developer / user |
| mms assistant ``tool:fmt`` | commentary call ``to=functions.tool call_id=call_N``, ``<|constrain|>json`` when fmt is json, content_type fmt otherwise |
| mms assistant in any other format | ``final``, content_type = the format unless it is the default ``markdown``; ``end_turn`` → ``<|return|>`` |
| mms-tokens ``<|end_turn|>`` after a non-assistant message | a plain end |
| sharegpt ``function_call`` | its value's ``arguments`` become the body, ``<|constrain|>json`` |
| mms context | ``tool`` reply on commentary to the call just before it (name, call_id); with no call before it, a ``user`` message with ``name=`` the context name (``attrs.context`` marks it; targets other than MMS report the approximation) |
| chatml ``system:NAME`` role | ``system`` with ``name=NAME`` (OpenAI's form of the few-shot examples) |
| everything else | as is |
| openai-messages ``reasoning_effort`` (low/medium/high), ``current_date`` | header ``generation_settings`` of the same names |
| openai-messages ``add_generation_prompt`` (default true) | ``Hub.generation_prompt`` |
| openai-messages message with reasoning and no text | ``Hub.beside_reasoning``: its empty content message, which ``convert.lower`` writes only where the message needs it |
| a first system message that is exactly the gpt-oss one (``harmony_prompt.read_system_message``) | header ``generation_settings`` (``reasoning_effort``, ``current_date``); the message leaves the hub (stays when it declares built-in tools) |

Generated call ids are ``call_1``, ``call_2``, … in call order; replies pair with calls in order.
"""

from __future__ import annotations

import dataclasses
import json
import operator
from dataclasses import dataclass
from typing import Any

from ..codecs import json_depth, v01body
from ..codecs.bodytext import logical_text
from ..codecs.jsonformats import group_turns, slot
from ..model import CALL, END, RETURN, SEMANTIC_FIELDS, Message, Transcript
from ..tools.schemas import declared_tools, function_list_tools
from ..tools.typescript import parse_namespaces
from . import harmony_prompt

FUNCTIONS = "functions."
GENERATED_ID = "call_{}"
V01 = "openchatml-0.1"
SHAREGPT = "sharegpt"
OPENAI = "openai-messages"
SETTINGS = "generation_settings"  # 2.2 §2 header key
REASONING_EFFORT = "reasoning_effort"
CURRENT_DATE = "current_date"  # extension: the date gpt-oss's system message states
# extension (vLLM's Chat Completions parameter, the chat templates' kwarg): whether a request
# that does not end with the assistant asks for its next message (default true)
ADD_GENERATION_PROMPT = "add_generation_prompt"
V01_SEGMENTS = frozenset({"fim_prefix", "fim_middle", "fim_suffix", "file"})
MMS_SPECS = frozenset({"mms", "mms-tokens"})
CHATML_SPECS = frozenset({"chatml", "chatml-json"})
MMS_ROLES = {"platform": "system"}
CONTEXT = "context"
MMS_DEFAULT_FORMAT = "markdown"
COT_MARKER = "<|start_{}|>"
# attrs of a lifted v0.1 system message (convert.lower reports them for every other target)
V01_FLAGS = "v01_flags"  # thought-block flags the prompt carried, e.g. ["reflect", "reason"]
V01_LIST_INLINE = "v01_function_list_inline"  # prose followed the function list


@dataclass(frozen=True)
class Loss:
    """Something the target spec cannot hold: which source message, which field, what happened."""

    message_index: int | None  # index in the source transcript; None for document-level data
    field: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        where = "document" if self.message_index is None else f"message {self.message_index}"
        return f"{where}: {self.field}: {self.detail}"


@dataclass
class Hub:
    messages: list[tuple[Message, int]]  # (hub message, source index)
    header: dict[str, Any]  # 2.2 header; prompt settings in generation_settings
    tools: list[dict[str, Any]]  # OpenAI-style tool declarations carried at document level
    attrs: dict[str, Any]
    source: str = ""  # the source spec id: some conventions depend on where roles came from
    # openai-messages: whether the request asks for the assistant's next message (Harmony
    # writes that as the prompt `<|start|>assistant`); None for sources without the notion
    generation_prompt: bool | None = None
    # openai-messages: the empty content of a JSON message that holds reasoning, by source
    # index, with the index of that reasoning (``empty_beside_reasoning``)
    beside_reasoning: dict[int, int] = dataclasses.field(default_factory=dict)
    # openai-messages: the JSON message (its position) each source message was read from
    json_message: list[int] = dataclasses.field(default_factory=list)


_semantic_values = operator.attrgetter(*SEMANTIC_FIELDS)


def _copy(message: Message, **changes: Any) -> Message:
    """A copy without layout: a converted message is written in its target's canonical form."""
    # Positional: a message's fields start with SEMANTIC_FIELDS, in their order.
    copy = Message(*_semantic_values(message))
    copy.attrs = dict(copy.attrs)
    for name, value in changes.items():
        setattr(copy, name, value)
    return copy


def qualified(name: str) -> str:
    return name if name.startswith(FUNCTIONS) else FUNCTIONS + name


class _Ids:
    """Deterministic call ids, paired in order with the replies that follow."""

    def __init__(self) -> None:
        self.count = 0
        self.open: list[tuple[str, str]] = []  # (call id, recipient) awaiting a reply

    def call(self, recipient: str) -> str:
        self.count += 1
        call_id = GENERATED_ID.format(self.count)
        self.open.append((call_id, recipient))
        return call_id

    def reply(self, tool: str | None) -> tuple[str | None, str | None]:
        for k, (call_id, recipient) in enumerate(self.open):
            if tool is None or recipient == tool:
                del self.open[k]
                return call_id, recipient
        return None, None


def lift(transcript: Transcript) -> Hub:
    tools = declared_tools(transcript)
    attrs = {k: v for k, v in transcript.attrs.items() if k != "tools"}
    hub = Hub([], dict(transcript.header), tools, attrs, transcript.spec)
    if transcript.spec == V01:
        _lift_v01(transcript, hub)
    elif transcript.spec in MMS_SPECS:
        _lift_mms(transcript, hub)
    elif transcript.spec == SHAREGPT:
        _lift_sharegpt(transcript, hub)
    else:
        for i, m in enumerate(transcript.messages):
            out = _copy(m, content=logical_text(transcript.spec, m.content))
            if transcript.spec in CHATML_SPECS:
                _lift_chatml_role(out)
            hub.messages.append((out, i))
    if transcript.spec == OPENAI:
        _lift_request_settings(hub)
        hub.beside_reasoning = empty_beside_reasoning(transcript.messages)
        hub.json_message = [
            position
            for position, group in enumerate(group_turns(transcript.messages))
            for _ in group
        ]
    _lift_gpt_oss_system(hub)
    return hub


def _lift_chatml_role(m: Message) -> None:
    """ChatML's few-shot roles ``system:example_user`` / ``system:example_assistant`` are the
    system messages with ``name`` that OpenAI's Chat Completions uses for the same examples."""
    role, colon, name = m.role.partition(":")
    if colon and role == "system" and name and m.name is None:
        m.role, m.name = role, name


def generation_settings(header: dict[str, Any]) -> dict[str, Any]:
    settings = header.get(SETTINGS)
    return settings if isinstance(settings, dict) else {}


def _set_setting(hub: Hub, key: str, value: str) -> None:
    # a copy: the source transcript's header must not change
    hub.header[SETTINGS] = {**generation_settings(hub.header), key: value}


def _lift_request_settings(hub: Hub) -> None:
    """openai-messages request settings that feed the gpt-oss system message → the header's
    ``generation_settings`` (an effort gpt-oss does not know, e.g. ``minimal``, stays an attr
    and is reported by the target)."""
    effort = hub.attrs.get(REASONING_EFFORT)
    if effort in harmony_prompt.REASONING_EFFORTS:
        _set_setting(hub, REASONING_EFFORT, hub.attrs.pop(REASONING_EFFORT))
    if isinstance(hub.attrs.get(CURRENT_DATE), str) and hub.attrs[CURRENT_DATE]:
        _set_setting(hub, CURRENT_DATE, hub.attrs.pop(CURRENT_DATE))
    hub.generation_prompt = True
    if isinstance(hub.attrs.get(ADD_GENERATION_PROMPT), bool):
        hub.generation_prompt = hub.attrs.pop(ADD_GENERATION_PROMPT)


def empty_beside_reasoning(messages: list[Message]) -> dict[int, int]:
    """The reader makes a content message of every JSON message without tool calls, so
    ``{"reasoning": "…", "content": ""}`` (or null, or no content) is an analysis message and an
    empty one: index of each such empty message → index of its analysis. One JSON message
    is as ``group_turns`` writes it (so an edited transcript's too)."""
    index_of = {id(m): k for k, m in enumerate(messages)}
    found: dict[int, int] = {}
    for group in group_turns(messages):
        reasoning = [m for m in group if slot(m) == 0]
        content = [m for m in group if slot(m) == 1]
        if reasoning and content:
            empty = content[0]
            if not empty.content and "content_parts" not in empty.attrs:
                found[index_of[id(empty)]] = index_of[id(reasoning[0])]
    return found


def declares_functions(messages: list[Message], tools: list[dict[str, Any]]) -> bool:
    """Whether function tools exist (gpt-oss's system message then routes them)."""
    return bool(tools) or any(
        signature.namespace == harmony_prompt.FUNCTIONS_NAMESPACE
        for m in messages
        if m.role in ("system", "developer")
        for signature in parse_namespaces(m.content)
    )


def _lift_gpt_oss_system(hub: Hub) -> None:
    """A first system message that is exactly the gpt-oss one (``harmony_prompt``) is a
    rendering of settings, not content: it becomes ``generation_settings`` (reasoning effort,
    current date) and the Harmony writer generates it again. Kept as a message when it
    disagrees with the header or with the tools actually declared, and when it declares
    built-in tools: their descriptions have no other place, so it stays a system message
    (the Harmony writer keeps it as gpt-oss's own)."""
    if not hub.messages or hub.messages[0][0].role != "system":
        return
    found = harmony_prompt.read_system_message(hub.messages[0][0].content)
    if found is None or found.builtin_tools is not None:
        return
    rest = [m for m, _ in hub.messages[1:]]
    if found.has_functions != declares_functions(rest, hub.tools):
        return
    wanted = {REASONING_EFFORT: found.reasoning_effort, CURRENT_DATE: found.current_date}
    settings = generation_settings(hub.header)
    if any(key in settings and settings[key] != value for key, value in wanted.items()):
        return
    del hub.messages[0]
    for key, value in wanted.items():
        if value is not None:
            _set_setting(hub, key, value)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _lift_v01(transcript: Transcript, hub: Hub) -> None:
    ids = _Ids()
    for i, m in enumerate(transcript.messages):
        parts = v01body.parts(m.content)
        structured = [p for p in parts if p.kind in ("thought", "function_call", "function_output")]
        if m.role == "system":
            hub.messages.append((_lift_v01_system(m, hub.tools), i))
            continue
        if not structured or m.role not in ("assistant", "tool"):
            # v0.1 writes `message_content` LF `<|im_end|>`: that last newline is layout.
            content = m.content.removesuffix("\n") if m.role not in V01_SEGMENTS else m.content
            hub.messages.append((_copy(m, content=content), i))
            continue
        for part in parts:
            out = _v01_part(m, part, ids)
            if out is not None:
                hub.messages.append((out, i))


def _lift_v01_system(m: Message, tools: list[dict[str, Any]]) -> Message:
    """A v0.1 system prompt: each ``<|function_list|>`` section made only of OpenAI tool
    objects becomes document-level tool declarations (added to ``tools``), and thought flags
    (``<|reflect|>``…, v0.1 §4) leave the text for ``attrs[V01_FLAGS]``; the prose and any
    other markup (e.g. the §8.5 call template) stay as written."""
    pieces: list[str] = []
    flags: list[str] = []
    cut = listed = inline = False  # a part was taken out / a list was; prose followed a list
    for part in v01body.parts(m.content):
        entries = function_list_tools(part.text) if part.kind == "function_list" else None
        if entries is not None:
            tools += [entry for entry in entries if entry not in tools]
            cut = listed = True
            continue
        if part.kind == v01body.FLAG:
            flags.append(part.detail)
            cut = True
            continue
        text = m.content[part.start : part.end]
        if cut and pieces and pieces[-1].endswith("\n") and text.startswith("\n"):
            text = text[1:]  # the list sat on lines of its own: one line break stays
        inline = inline or (listed and bool(text.strip()))
        pieces.append(text)
        cut = False
    out = _copy(m, content="".join(pieces).removesuffix("\n"))
    if flags:
        out.attrs[V01_FLAGS] = flags
    if inline:
        out.attrs[V01_LIST_INLINE] = True
    return out


def _v01_part(m: Message, part: v01body.Part, ids: _Ids) -> Message | None:
    base = {"name": m.name}
    if part.kind == v01body.TEXT:
        # One newline on each side separates a part from its neighbours (as the spec lays
        # bodies out); the rest is text.
        text = part.text.removeprefix("\n").removesuffix("\n")
        return _copy(m, content=text, channel="final", **base) if text.strip() else None
    if part.kind == v01body.THOUGHT:
        return _copy(
            m, content=COT_MARKER.format(part.detail) + part.text, channel="analysis", **base
        )
    value = part.value if isinstance(part.value, dict) else None
    if part.kind == "function_call" and value is not None and isinstance(value.get("name"), str):
        recipient = qualified(value["name"])
        return _copy(
            m, content=_compact(value.get("arguments", {})), channel="commentary", recipient=recipient,
            call_id=ids.call(recipient), constrain="json", end=CALL, **base,
        )  # fmt: skip
    if part.kind == "function_output" and value is not None and isinstance(value.get("name"), str):
        tool = qualified(value["name"])
        call_id, _ = ids.reply(tool)
        content = value.get("content")
        body = content if isinstance(content, str) else _compact(content)
        return _copy(m, role="tool", content=body, channel="commentary", name=tool, call_id=call_id)
    # Unreadable function JSON or other tokens: keep the part as text of the message.
    return _copy(
        m,
        content=m.content[part.start : part.end],
        channel="final" if m.role == "assistant" else None,
        **base,
    )


def _lift_sharegpt(transcript: Transcript, hub: Hub) -> None:
    """A ``function_call`` turn's value ``{"name", "arguments"}`` → a call whose body is the
    arguments (as in every other spec)."""
    for i, m in enumerate(transcript.messages):
        out = _copy(m)
        if m.end == CALL:
            try:
                value = json_depth.loads(m.content)
            except ValueError:
                value = None
            if isinstance(value, dict) and "arguments" in value:
                out.content, out.constrain = _compact(value["arguments"]), "json"
        hub.messages.append((out, i))


def _lift_mms(transcript: Transcript, hub: Hub) -> None:
    ids = _Ids()
    last_call: tuple[str, str] | None = None
    for i, m in enumerate(transcript.messages):
        role = MMS_ROLES.get(m.role, m.role)
        if m.role != "assistant" and m.end == RETURN:
            # `<|end_turn|>` closes any message of the token form; only an assistant's ends
            # the turn (2.x `<|return|>`, which elsewhere only a final answer may carry).
            m = _copy(m, end=END)
        if m.role == "assistant" and m.recipient is not None:
            recipient = qualified(m.recipient)
            ctype = m.content_type
            json_body = ctype == "json"
            call_id = ids.call(recipient)
            last_call = (call_id, recipient)
            out = _copy(
                m, channel="commentary", recipient=recipient, call_id=call_id, end=CALL,
                constrain="json" if json_body else None, content_type=None if json_body else ctype,
            )  # fmt: skip
        elif m.role == "assistant":
            # markdown is MMS's default format: it goes without saying elsewhere
            ctype = None if m.content_type == MMS_DEFAULT_FORMAT else m.content_type
            out = _copy(
                m, channel="final", content_type=ctype, end=RETURN if m.end == RETURN else END
            )
        elif m.role == CONTEXT:
            if last_call is not None:
                call_id, recipient = ids.reply(last_call[1])
                out = _copy(m, role="tool", channel="commentary", name=recipient, call_id=call_id)
            else:
                # Nothing to reply to: a tool reply here would answer no call (every target's
                # validator rejects that). The context is information from the developer,
                # below the user in MMS's chain of command: a user message named like it.
                out = _copy(m, role="user", attrs={**m.attrs, CONTEXT: True})
            last_call = None
        else:
            out = _copy(m, role=role)
            last_call = None
        hub.messages.append((out, i))
