"""Write hub messages (see ``convert.hub``) for a target spec, reporting every loss.

What each target can hold (a field outside its row is dropped and reported):

| target | channels | to= | call_id | intent | content_type | constrain | name | tools | control-token text in a body |
|---|---|---|---|---|---|---|---|---|---|
| openchatml-2.2, openchatml-json | yes | yes | yes (generated when missing) | yes | yes | yes | yes | developer ``namespace functions`` | ``<<|`` escape (2.2); plain (JSON) |
| harmony | yes | yes | no | no | no | yes | no (replies use role ``functions.X``) | developer ``namespace functions`` | rewritten ``<\\|x\\|>`` |
| openchatml-2.0 | yes | yes | no | no | no | no | yes | developer ``namespace functions`` | rewritten |
| openai-messages | analysis → reasoning, final | calls only | yes (generated) | no | no | json | yes | ``tools`` | plain |
| sharegpt | no (analysis dropped) | calls | no | no | no | no | no | ``tools`` (a JSON string) | plain |
| chatml, chatml-json | no (analysis, other commentary, calls, replies dropped) | no | no | no | no | no | no | no | rewritten (chatml); plain (JSON) |
| mms, mms-tokens | no (analysis dropped) | calls as ``tool:fmt`` | no | no | via ``tool:fmt`` | json | named user → context | no | plain (mms); rewritten (tokens) |
| openchatml-0.1 | analysis → thought blocks | calls as ``<|function_call|>`` | no | no | no | no | yes | ``<|function_list|>`` in the system message | rewritten |

"Rewritten" (documented escape for specs without one): ``<|name|>`` in a body becomes
``<\\|name\\|>`` and a loss is reported, so the text can never be read as a token.

Roles: developer → system for chatml, v0.1 (reported); system → platform for MMS; tool
replies → ``functions.X`` role for Harmony and 2.0, ``tool`` elsewhere, ``context`` in MMS.
A commentary message with ``intent=preamble`` becomes a plain assistant message where
channels do not exist (channel and intent reported). Call ids that are exactly the ones the
hub would generate (``call_1``… in order) are not reported when dropped.

Harmony follows gpt-oss's conventions (``harmony_instructions``, ``harmony_system``,
``harmony_ends``; docs/formats.md "Harmony prompt conventions"): a generated system message,
the leading prompt of a spec without Harmony's roles as the developer ``# Instructions``, tool
replies ``to=assistant``, the last final ``<|return|>`` and earlier ones ``<|end|>``, and a
request that awaits the assistant ending with the prompt ``<|start|>assistant``
(``harmony_generation_prompt``; openai-messages' ``add_generation_prompt``). Harmony has
no CoT markers: they leave analysis text, each marked stretch its own message
(``harmony_analysis``); a markerless analysis is a v0.1 reason block (no loss from Harmony).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ..codecs import json_depth
from ..codecs.bodytext import written_text
from ..codecs.jsonformats import ENDS_MESSAGE, declared_functions, tool_recipient
from ..codecs.scanner import TOKEN_RE
from ..codecs.v01body import THOUGHT_KINDS, thought_text
from ..model import CALL, END, RETURN, Message, Transcript, is_builtin
from ..tools.typescript import parse_namespaces
from ..validate.context import is_call, is_reply, reply_tool
from . import harmony_prompt
from .hub import (
    ADD_GENERATION_PROMPT,
    CURRENT_DATE,
    GENERATED_ID,
    REASONING_EFFORT,
    SETTINGS,
    V01_FLAGS,
    V01_LIST_INLINE,
    Hub,
    Loss,
    declares_functions,
    generation_settings,
    qualified,
)

OCM22, OCM20, HARMONY, OCM_JSON = "openchatml-2.2", "openchatml-2.0", "harmony", "openchatml-json"
OPENAI, SHAREGPT, CHATML, CHATML_JSON = "openai-messages", "sharegpt", "chatml", "chatml-json"
MMS, MMS_TOKENS, V01 = "mms", "mms-tokens", "openchatml-0.1"
OCM_FAMILY = frozenset({OCM22, OCM20, HARMONY, OCM_JSON})
TOKEN_2X = frozenset({OCM22, OCM20, HARMONY})
NO_CHANNEL = frozenset({SHAREGPT, CHATML, CHATML_JSON, MMS, MMS_TOKENS})
# The tokens a body of each target cannot contain as text (it would be read as a token).
# Targets not listed can hold any text: JSON strings, or 2.2 with its `<<|` escape.
TARGET_VOCABULARY = {
    HARMONY: frozenset({"start", "channel", "message", "constrain", "call", "return", "end"}),
    OCM20: frozenset({"start", "channel", "message", "call", "return", "end"}),
    CHATML: frozenset({"start", "message", "end_message"}),
    MMS_TOKENS: frozenset({"role", "name", "format", "content", "end_turn"}),
    # v0.1 body markup (flags, thought blocks, function tokens) passes: it is structure.
    V01: frozenset(
        {"im_start", "im_end", "fim_prefix", "fim_middle", "fim_suffix", "file_separator"}
    ),
}
KEEPS = {  # optional fields each target can write
    OCM22: {"recipient", "call_id", "name", "intent", "content_type", "constrain"},
    OCM_JSON: {"recipient", "call_id", "name", "intent", "content_type", "constrain"},
    HARMONY: {"recipient", "constrain"},
    OCM20: {"recipient", "name"},
    OPENAI: {"recipient", "call_id", "name", "constrain"},
    SHAREGPT: {"recipient", "constrain"},
    CHATML: set(),
    CHATML_JSON: set(),
    MMS: {"recipient", "content_type", "name"},
    MMS_TOKENS: {"recipient", "content_type", "name"},
    V01: {"recipient", "name"},
}
OPTIONAL = ("recipient", "call_id", "name", "intent", "content_type", "constrain")
# attrs keys that only record how a source was written: dropped silently when converting.
# 2.x header data the other 2.x specs write too (unknown attributes, a completion prompt).
OCM_HEADER_ATTRS = frozenset({"header_attrs", "header_only"})
LAYOUT_ATTRS = frozenset(
    {
        "name_written", "arguments_json", "reasoning_key", "from", "end_turn", "context", "content",
        "attr_order", "channel_attrs", "bare_content_type",  # 2.x attribute order and placement
        "format",  # MMS: lifted into recipient / content_type, rebuilt from them
        ENDS_MESSAGE,  # openai-messages: where a JSON message ends, rebuilt when written
    }
)  # fmt: skip
VERSION = {OCM22: "2.2", OCM20: "2.0"}
PROMPT_SETTINGS = (REASONING_EFFORT, CURRENT_DATE)  # what gpt-oss's system message states
# Sources that tell a final's <|end|> from its <|return|> (MMS: end_turn): changing one is a loss.
ENDS_DISTINGUISHED = frozenset({OCM22, OCM20, HARMONY, OCM_JSON, MMS, MMS_TOKENS})
ONE_TERMINATOR = frozenset({CHATML, CHATML_JSON, OPENAI, SHAREGPT, V01})
# Targets where every message is complete: an open one (a completion prompt, a truncated
# message) cannot be written (v0.1 and mms-tokens read a missing terminator as truncation).
NO_OPEN_MESSAGE = frozenset({OPENAI, SHAREGPT, MMS, MMS_TOKENS, V01})
MMS_DEFAULT_FORMAT = "markdown"
CONTEXT = "context"  # attrs mark of a user message that was an MMS context (convert.hub)
LAST_END_TURN_LOSS = (
    "<|end|> written as <|end_turn|> (mms-tokens has no complete last message without it)"
)
V01_DOCUMENT_ATTRS = frozenset({"bos", "eos"})  # [BOS] … [EOS] around a v0.1 chat
V01_SEGMENT_ROLES = frozenset({"fim_prefix", "fim_middle", "fim_suffix", "file"})
CHATML_ROLES = frozenset({"system", "user", "assistant"})
CHATML_EXAMPLES = frozenset({"example_user", "example_assistant"})  # `system:NAME` roles
V01_ROLES = frozenset(
    {"system", "user", "assistant", "tool", "fim_prefix", "fim_middle", "fim_suffix", "file"}
)
# 2.x §7 CoT markers in an analysis body (no closing token; a v0.1 thought block is lifted as
# one): `split` gives text, kind, text, kind, text…
COT_MARKER_RE = re.compile(r"<\|start_(" + "|".join(THOUGHT_KINDS) + r")\|>")


def _control_names(text: str) -> set[str]:
    return {match.group(2) for match in TOKEN_RE.finditer(text)} if "<|" in text else set()


def rewrite_control_text(text: str, vocabulary: frozenset[str]) -> str:
    """``<|name|>`` (a token of the target) → ``<\\|name\\|>``: readable, never a token."""

    def rewrite(match) -> str:
        return (
            match.group(0).replace("|", "\\|") if match.group(2) in vocabulary else match.group(0)
        )

    return TOKEN_RE.sub(rewrite, text)


class _Lowering:
    def __init__(self, hub: Hub, to: str):
        self.hub = hub
        self.to = to
        self.losses: list[Loss] = []
        self.out: list[Message] = []
        self.call_count = 0
        self.indices: list[int] = []  # source index of each message in ``out``
        # the source index of each message written (by identity: messages the target needs
        # and the source lacks, such as tool declarations, are inserted along the way)
        self.source_of: dict[int, int] = {}
        # hub position → (field, detail) of a loss found before lowering, reported when that
        # message is written so that losses stay in message order
        self.pending: dict[int, tuple[str, str]] = {}
        if to == HARMONY:
            self.harmony_analysis()
        self.recovered = self.prepare()
        self.regenerated = _regenerated_ids(hub)
        self.position = 0

    def loss(self, index: int | None, field: str, detail: str) -> None:
        self.losses.append(Loss(index, field, detail))

    def prepare(self) -> list[dict[str, Any]]:
        """openai-messages: the tools of developer ``# Tools`` sections (returned; the sections
        leave the messages). From Harmony, for a target without its developer role: a leading
        developer message with ``# Instructions`` (after gpt-oss's own system message, if
        kept) is the system prompt (the inverse of ``harmony_instructions``)."""
        if self.to in OCM_FAMILY:
            return []
        at = _prompt_at([m for m, _ in self.hub.messages])
        first = self.hub.messages[at][0] if len(self.hub.messages) > at else None
        instructions = (
            self.hub.source == HARMONY
            and first is not None
            and first.role == "developer"
            and first.content.startswith(INSTRUCTIONS_HEADING)
        )
        # targets that declare tools outside the prompt's text (v0.1: its own function list)
        recover = self.to in (OPENAI, SHAREGPT, V01)
        recovered = _tools_from_developer(self.hub.messages) if recover else []
        if instructions and first.content and TOOLS_HEADING not in first.content:
            first.role, first.content = "system", first.content.removeprefix(INSTRUCTIONS_HEADING)
        return recovered

    def harmony_analysis(self) -> None:
        """Harmony has no CoT markers: its analysis is plain reasoning, which is what a
        ``reason`` block is. Each marker leaves the text and the stretch it opened becomes an
        analysis message of its own (as v0.1's thought blocks lift), so no two kinds run
        together. Silent only for a v0.1 reason block: the way back writes a Harmony analysis
        as one again. A reflect/introspect kind, a split, or a marker a 2.x source wrote as
        text (the way back does not restore it) is reported."""
        out: list[tuple[Message, int]] = []
        for m, index in self.hub.messages:
            if m.role != "assistant" or m.channel != "analysis" or is_call(m):
                out.append((m, index))
                continue
            pieces = COT_MARKER_RE.split(m.content)
            kinds = pieces[1::2]
            if not kinds:
                out.append((m, index))
                continue
            texts = [text for text in [pieces[0], *pieces[2::2]] if text] or [""]
            markers = "".join(f"<|start_{kind}|>" for kind in kinds)
            if len(texts) > 1:
                self.pending[len(out)] = (
                    "message",
                    f"analysis split at its CoT markers {markers} into {len(texts)} messages "
                    "(harmony has no CoT markers)",
                )
            elif kinds != ["reason"] or self.hub.source != V01:
                self.pending[len(out)] = (
                    "content",
                    f"CoT marker {markers} dropped (harmony has none)",
                )
            for k, text in enumerate(texts):
                end = m.end if k == len(texts) - 1 else END  # only the last can be unfinished
                out.append((replace(m, content=text, end=end, attrs=dict(m.attrs)), index))
        self.hub.messages[:] = out

    # --- per message --------------------------------------------------------------------
    def run(self) -> Transcript:
        if self.to == OPENAI and self.hub.source == HARMONY:
            self.harmony_history_end_lost()
        for position, (message, index) in enumerate(self.hub.messages):
            self.position = position
            if position in self.pending:
                self.loss(index, *self.pending.pop(position))
            self.message(message, index)
        self.drop_empty_beside_reasoning()
        if self.to in OCM_FAMILY | {OPENAI}:
            self.number_calls()
        header = self.header()
        attrs = self.document_attrs()
        if self.to == OPENAI:
            attrs.update(self.prompt_settings())
        self.request_end(attrs)
        self.tools(attrs)
        if self.to == HARMONY:
            self.harmony_system()
            self.harmony_generation_prompt()
        messages = self.out
        self.origins = [
            (self.source_of[id(m)],) if id(m) in self.source_of else () for m in messages
        ]
        if self.to == V01:
            messages, self.origins = _merge_v01(messages, self.origins)
        return Transcript(spec=self.to, header=header, messages=messages, attrs=attrs)

    def message(self, m: Message, index: int) -> None:
        to = self.to
        if self.hub.source == OPENAI and m.channel == "analysis" and not m.content:
            return  # `"reasoning": ""`: no reasoning at all, not an empty analysis message
        if m.end is None and to in NO_OPEN_MESSAGE:
            if to == OPENAI and self.is_harmony_generation_prompt(m):
                return  # the end of a request, which openai-messages → harmony writes back
            if not m.content:
                # A bare prompt for the model: an empty complete message would be a turn
                # that said nothing, so it goes, and the report says it was there.
                self.loss(
                    index, "message",
                    f"open message with no text (a completion prompt) dropped ({to} has no "
                    "open message)",
                )  # fmt: skip
                return
            self.loss(
                index, "end", f"unterminated message written as complete ({to} has no open message)"
            )
            m.end = END
        if (
            m.role == "assistant"
            and m.channel == "analysis"
            and to in NO_CHANNEL
            and not is_call(m)
        ):
            self.loss(index, "message", f"analysis message dropped ({to} has no hidden reasoning)")
            return
        if to in (CHATML, CHATML_JSON) and is_call(m):
            self.loss(
                index, "message", f"tool call to {m.recipient} dropped ({to} has no tool calls)"
            )
            return
        if to in (CHATML, CHATML_JSON) and is_reply(m):
            self.loss(index, "message", f"tool reply dropped ({to} has no tool messages)")
            return
        if (
            m.role == "assistant"
            and m.channel == "commentary"
            and not is_call(m)
            and to in NO_CHANNEL
        ) and m.intent != "preamble":
            self.loss(index, "message", f"commentary message dropped ({to} has no channels)")
            return
        reply = is_reply(m)
        answer = self.answers_before_call(m)
        m = self.role(m, index, reply)
        m = self.fields(m, index, reply)
        if answer:
            m.attrs[ENDS_MESSAGE] = True
        if to == V01:
            m.content = self.v01_piece(m, index)
        elif to == SHAREGPT and is_call(m):
            m.content = self.sharegpt_call(m, index)
        else:
            m.content = self.body(m.content, index)
        self.out.append(m)
        self.indices.append(index)
        self.source_of[id(m)] = index

    def drop_empty_beside_reasoning(self) -> None:
        """An openai-messages message that holds reasoning and no text (``"content": ""``,
        null or none) is one message: its reasoning, as the inference engines write it, not an
        analysis message and an empty final. The empty part stays only where its reasoning was
        not written (``"reasoning": ""``, a target without analysis), so that the message is
        never dropped, and where the next message would join that reasoning on the way back
        (an assistant message that is not reasoning): there it is what separates the two."""
        keep: list[int] = []
        for k, m in enumerate(self.out):
            analysis = self.hub.beside_reasoning.get(self.indices[k])
            written = (
                k > 0
                and analysis is not None
                and self.indices[k - 1] == analysis
                and self.out[k - 1].channel == "analysis"
            )
            following = self.out[k + 1] if k + 1 < len(self.out) else None
            joins = (
                following is not None
                and following.role == m.role
                and following.channel != "analysis"
            )
            if written and not joins:
                del self.source_of[id(m)]
            else:
                keep.append(k)
        if len(keep) < len(self.out):
            self.out = [self.out[k] for k in keep]
            self.indices = [self.indices[k] for k in keep]

    def role(self, m: Message, index: int, reply: bool) -> Message:
        to = self.to
        if reply:
            tool = reply_tool(m)
            if to in (HARMONY, OCM20) and tool is not None:
                m.role, m.name = _tool_name(tool), None
            elif to in (MMS, MMS_TOKENS):
                m.role, m.name = "context", None  # the tool is the one the preceding call went to
            elif m.role != "tool":
                m.role, m.name = "tool", _tool_name(tool) if tool else None
            return m
        if m.role == "user" and m.attrs.get(CONTEXT):
            if to in (MMS, MMS_TOKENS):
                m.role = "context"
                return m
            named = f" named {m.name}" if m.name else ""
            self.loss(
                index,
                "role",
                f"MMS context with no call before it written as a user message{named}",
            )
        elif m.role == "user" and m.name is not None and to in (MMS, MMS_TOKENS):
            # MMS user messages have no name; a named context is how MMS names a message, and
            # it is what a context with no call before it was written as elsewhere.
            self.loss(index, "role", f"user message named {m.name} written as a context message")
            m.role = "context"
        elif m.role == "system" and m.name in CHATML_EXAMPLES and to in (CHATML, CHATML_JSON):
            m.role, m.name = f"system:{m.name}", None  # the few-shot roles (convert.hub)
        elif m.role == "developer" and to in (CHATML, CHATML_JSON, V01, SHAREGPT):
            self.loss(index, "role", f"developer written as system ({to} has no developer role)")
            m.role = "system"
        elif m.role == "system" and to in (MMS, MMS_TOKENS):
            m.role = "platform"
        elif m.role in V01_SEGMENT_ROLES and to not in (V01, CHATML, CHATML_JSON):
            # Not a conversational message: the role is kept as written so that nothing is
            # lost, but the target has no such role.
            self.loss(index, "role", f"v0.1 {m.role} segment written as a {m.role!r} message")
        elif (
            to in (CHATML, CHATML_JSON)
            and m.role not in CHATML_ROLES
            and not m.role.startswith("system:")
        ) or (to == V01 and m.role not in V01_ROLES):
            self.loss(index, "role", f"role {m.role!r} written as user")
            m.role = "user"
        return m

    def fields(self, m: Message, index: int, reply: bool) -> Message:
        to = self.to
        keeps = KEEPS[to]
        if to in (MMS, MMS_TOKENS):
            self.mms_format(m)
        for field in OPTIONAL:
            value = getattr(m, field)
            if value is None or field in keeps:
                continue
            if field == "constrain" and to == V01 and value == "json" and is_call(m):
                setattr(m, field, None)  # a <|function_call|> holds its arguments as JSON
                continue
            if field == "call_id" and self.regenerated.get(self.position) == value:
                setattr(m, field, None)
                continue
            if field == "recipient" and (m.role != "assistant" or (reply and to not in OCM_FAMILY)):
                setattr(m, field, None)
                continue
            self.loss(index, field, f"{field}={value} dropped ({to} cannot write it)")
            setattr(m, field, None)
        if to == OPENAI and is_call(m):
            self.openai_call(m, index)
        if to in TOKEN_2X and m.end is None and not m.content and self.is_last():
            # An open, empty last message is a completion prompt (ChatML's `<|start|>assistant
            # <|message|>`): these specs write it as a bare header, an empty body would be
            # a truncated message.
            m.attrs["header_only"] = True
        if to in OCM_FAMILY and m.channel is None and (is_call(m) or reply):
            m.channel = "commentary"  # 2.2 §8.1: calls and replies travel on commentary
        elif (
            to == HARMONY
            and m.channel is None
            and m.role == "assistant"
            and not m.attrs.get("header_only")
        ):
            # HIP-1 §2: Harmony always names the channel; none means final, except text
            # right before a call: gpt-oss writes that preamble on commentary, never final.
            m.channel = "commentary" if self.precedes_call() else "final"
        if to == HARMONY:
            self.harmony_ends(m, index, reply)
        if to not in OCM_FAMILY and m.channel == "analysis" and (reply or is_call(m)):
            # A built-in tool used from analysis (HIP-1 §5): elsewhere analysis is reasoning
            # text, which would swallow the call (its recipient) or the reply.
            kind = "reply" if reply else "call"
            self.loss(index, "channel", f"tool {kind} on analysis written as a plain tool {kind}")
            m.channel = "commentary"
        if to == OPENAI and m.channel is not None and m.channel != "analysis" and not is_call(m):
            # a Harmony preamble (commentary right before a call) shares the call's JSON
            # message, and the way back to Harmony writes it on commentary again
            preamble = (
                self.hub.source == HARMONY and m.channel == "commentary" and self.precedes_call()
            )
            if m.channel != "final" and not reply and not preamble:
                self.loss(index, "channel", f"channel {m.channel} dropped")
            m.channel = None
        if m.channel is not None and to in NO_CHANNEL:
            if m.channel != "final" and not is_call(m) and not reply:
                self.loss(index, "channel", f"channel {m.channel} dropped")
            m.channel = None
        if to in ONE_TERMINATOR and m.end == RETURN:
            # the way back from openai-messages to Harmony ends the last final <|return|> again
            restored = to == OPENAI and self.hub.source == HARMONY and self.is_last()
            if self.hub.source in ENDS_DISTINGUISHED and not restored:
                self.loss(
                    index, "end", f"<|return|> written as a plain end ({to} has no stop token)"
                )
            m.end = END
        for key in list(m.attrs):
            if key in LAYOUT_ATTRS:
                continue
            if to in OCM_FAMILY and key in OCM_HEADER_ATTRS:
                continue
            if key == V01_FLAGS:
                flags = "".join(f"<|{flag}|>" for flag in m.attrs[key])
                self.loss(index, "flags", f"v0.1 thought flags {flags} dropped ({to} has none)")
            elif key == V01_LIST_INLINE:
                self.loss(
                    index, "tools", f"function list taken out of the prompt's text into {to}'s "
                    "tool declarations: the text after it now follows the text before it",
                )  # fmt: skip
            else:
                self.loss(index, f"attrs.{key}", f"{key}={m.attrs[key]!r} dropped")
            del m.attrs[key]
        for key in LAYOUT_ATTRS & set(m.attrs):
            del m.attrs[key]
        return m

    def openai_call(self, m: Message, index: int) -> None:
        """Chat Completions names a tool without its namespace; its reader takes a gpt-oss
        built-in name (``python``, ``browser.*``) for the built-in unless ``tools`` declares a
        function of that name, and constrains only function arguments to JSON."""
        recipient = m.recipient or ""
        name = recipient.removeprefix("functions.")
        functions = declared_functions({"tools": self.hub.tools + self.recovered})
        read_back = tool_recipient(name, functions)
        if read_back != recipient:
            self.loss(
                index, "recipient", f"{recipient} reads back as {read_back} (Chat Completions "
                "names a tool without its namespace)",
            )  # fmt: skip
        if m.constrain is not None and not read_back.startswith("functions."):
            self.loss(
                index, "constrain", f"<|constrain|>{m.constrain} dropped (openai-messages "
                "constrains only function arguments)",
            )  # fmt: skip
            m.constrain = None

    def harmony_ends(self, m: Message, index: int, reply: bool) -> None:
        """gpt-oss writes a reply ``functions.X to=assistant``, ends the last final of a finished
        conversation with ``<|return|>`` (a completed generation) and every earlier final with
        ``<|end|>`` (history, as its chat template renders it)."""
        if reply and m.recipient is None:
            m.recipient = "assistant"
        if (
            m.role != "assistant"
            or m.channel != "final"
            or is_call(m)
            or m.end not in (END, RETURN)
        ):
            return
        end = RETURN if self.is_last() else END
        if m.end != end and self.hub.source in ENDS_DISTINGUISHED:
            self.loss(index, "end", f"<|{m.end}|> written as <|{end}|> (gpt-oss convention)")
        m.end = end

    def mms_format(self, m: Message) -> None:
        if m.role != "assistant":
            m.attrs.pop("format", None)
            return
        if is_call(m):
            tool = (m.recipient or "tool").removeprefix("functions.")
            fmt = m.content_type or m.constrain or "json"
            m.recipient, m.content_type, m.constrain = tool, fmt, None
            m.attrs["format"] = f"{tool}:{fmt}"
            m.end = CALL
        else:
            fmt = m.content_type or m.attrs.get("format") or MMS_DEFAULT_FORMAT
            m.recipient, m.content_type, m.attrs["format"] = None, fmt, fmt
            if self.to == MMS_TOKENS and m.end == END and self.is_last():
                # The token form reads a last assistant message without <|end_turn|> as
                # truncated, so a complete one needs it (read back as <|return|>).
                m.end = RETURN
                self.loss(self.hub.messages[self.position][1], "end", LAST_END_TURN_LOSS)

    def is_harmony_generation_prompt(self, m: Message) -> bool:
        """A Harmony text's last ``<|start|>assistant`` after a message of another role: the
        prompt for the assistant's next message (openai/harmony's
        ``render_conversation_for_completion``)."""
        before = [message for message, _ in self.hub.messages[: self.position]]
        return (
            self.hub.source == HARMONY
            and self.is_last()
            and m.role == "assistant"
            and not m.content
            and _awaits_assistant(before)
        )

    def harmony_history_end_lost(self) -> None:
        """openai-messages has one terminator; the way back to Harmony ends a last final
        with ``<|return|>``, so a last final ending ``<|end|>`` (history) is reported."""
        if not self.hub.messages:
            return
        last = self.hub.messages[-1][0]
        if last.role == "assistant" and last.channel == "final" and last.end == END:
            self.pending[len(self.hub.messages) - 1] = (
                "end", "<|end|> of the last final (the way back writes <|return|>)"
            )  # fmt: skip

    def request_end(self, attrs: dict[str, Any]) -> None:
        """From Harmony to openai-messages: ``add_generation_prompt: false`` when the text
        ends with a message of another role than the assistant's and no prompt after it (the
        prompt itself is left out: ``is_harmony_generation_prompt``)."""
        if self.to == OPENAI and self.hub.source == HARMONY:
            if _awaits_assistant([m for m, _ in self.hub.messages]):
                attrs[ADD_GENERATION_PROMPT] = False
        elif self.to != HARMONY and self.hub.generation_prompt is False:
            self.loss(None, f"attrs.{ADD_GENERATION_PROMPT}", "add_generation_prompt=false dropped")

    def harmony_generation_prompt(self) -> None:
        """openai-messages → Harmony: a request that does not end with the assistant ends with
        the prompt for its next message, ``<|start|>assistant``, as openai/harmony's
        ``render_conversation_for_completion`` writes it (unless ``add_generation_prompt`` is
        false)."""
        if self.hub.generation_prompt and _awaits_assistant(self.out):
            self.out.append(
                Message(role="assistant", content="", end=None, attrs={"header_only": True})
            )

    def answers_before_call(self, m: Message) -> bool:
        """To openai-messages from a token text: an assistant answer (final, or no channel:
        2.x §5 rule 2) right before a call is a message of its own, not the call's preamble
        (commentary), so it is not written into the call's JSON message."""
        return (
            self.to == OPENAI
            and self.hub.source in TOKEN_2X
            and m.role == "assistant"
            and m.channel in (None, "final")
            and not is_call(m)
            and self.precedes_call()
        )

    def precedes_call(self) -> bool:
        """Whether the message being written comes right before a call of its own turn: from
        openai-messages, a call of the same JSON message (text beside ``tool_calls``); an
        assistant message of its own before a call is not that call's preamble."""
        following = self.hub.messages[self.position + 1 : self.position + 2]
        if not following or not is_call(following[0][0]):
            return False
        if self.hub.source != OPENAI:
            return True
        here, there = self.hub.messages[self.position][1], following[0][1]
        return self.hub.json_message[here] == self.hub.json_message[there]

    def is_last(self) -> bool:
        return self.position == len(self.hub.messages) - 1

    def body(self, text: str, index: int) -> str:
        vocabulary = TARGET_VOCABULARY.get(self.to)
        if vocabulary is not None and _control_names(text) & vocabulary:
            self.loss(
                index,
                "content",
                f"control-token text rewritten as <\\|…\\|> ({self.to} cannot escape it)",
            )
            return rewrite_control_text(text, vocabulary)
        return written_text(self.to, text)

    def json_layout(self, text: str, value: Any, index: int) -> None:
        """v0.1 and ShareGPT embed arguments as JSON values: their spacing is not kept."""
        if text != json.dumps(value, ensure_ascii=False, separators=(",", ":")):
            self.loss(
                index, "content", f"JSON body re-formatted ({self.to} embeds it as a JSON value)"
            )

    def sharegpt_call(self, m: Message, index: int) -> str:
        """A ShareGPT ``function_call`` turn's value: ``{"name": …, "arguments": …}``."""
        try:
            arguments = json_depth.loads(m.content)
        except ValueError:
            arguments = m.content
        else:
            self.json_layout(m.content, arguments, index)
        name = (m.recipient or "").removeprefix("functions.")
        return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)

    def v01_piece(self, m: Message, index: int) -> str:
        """A hub message as a v0.1 body part (joined into bodies by ``_merge_v01``)."""
        if m.role == "assistant" and m.channel == "analysis":
            for kind in THOUGHT_KINDS:
                marker = f"<|start_{kind}|>"
                if m.content.startswith(marker):
                    return thought_text(kind, self.body(m.content[len(marker) :], index))
            if self.hub.source != HARMONY:
                # Harmony analysis is plain reasoning, a reason block, and the way back drops
                # the marker again; elsewhere it comes back as text the source did not have.
                self.loss(
                    index,
                    "channel",
                    "analysis without a CoT marker written as a <|start_reason|> block",
                )
            return thought_text("reason", self.body(m.content, index))
        if is_call(m):
            try:
                arguments = json_depth.loads(m.content)
            except ValueError:
                self.loss(index, "content", "call arguments are not JSON; written as a JSON string")
                arguments = m.content
            self.json_layout(m.content, arguments, index)
            call = {"arguments": arguments, "name": (m.recipient or "").removeprefix("functions.")}
            return "<|function_call|>\n" + self.body(json.dumps(call, ensure_ascii=False), index)
        if m.role == "tool" and m.name:
            try:
                content = json_depth.loads(m.content)
            except ValueError:
                content = m.content
            if not isinstance(content, str):
                self.json_layout(m.content, content, index)
            output = {"name": m.name.removeprefix("functions."), "content": content}
            return "<|function_output|>\n" + self.body(
                json.dumps(output, ensure_ascii=False), index
            )
        return self.body(m.content, index)

    # --- document -----------------------------------------------------------------------
    def number_calls(self) -> None:
        """Give every call without an id the next ``call_N`` and its reply the same id."""
        if self.to not in (OCM22, OCM_JSON, OPENAI):
            return
        used = {m.call_id for m in self.out if m.call_id}
        open_calls: list[Message] = []
        for m in self.out:
            if is_call(m):
                if m.call_id is None:
                    self.call_count += 1
                    while GENERATED_ID.format(self.call_count) in used:
                        self.call_count += 1
                    m.call_id = GENERATED_ID.format(self.call_count)
                open_calls.append(m)
            elif is_reply(m) and open_calls:
                tool = reply_tool(m)
                match = next(
                    (
                        c
                        for c in open_calls
                        if tool is None or qualified(c.recipient or "") == qualified(tool)
                    ),
                    None,
                )
                if match is not None:
                    open_calls.remove(match)
                    if m.call_id is None:
                        m.call_id = match.call_id

    def document_attrs(self) -> dict[str, Any]:
        """Document-level attrs of another spec do not carry over; v0.1 chats get [BOS]/[EOS]."""
        for key in sorted(set(self.hub.attrs) - V01_DOCUMENT_ATTRS):
            self.loss(None, f"attrs.{key}", f"document attribute {key} dropped")
        if self.to == V01 and any(
            m.role in ("system", "user", "assistant", "tool") for m in self.out
        ):
            return {key: True for key in V01_DOCUMENT_ATTRS}
        return {}

    def prompt_settings(self) -> dict[str, Any]:
        """The ``generation_settings`` a gpt-oss system message states (see ``convert.hub``)."""
        settings = generation_settings(self.hub.header)
        return {key: settings[key] for key in PROMPT_SETTINGS if key in settings}

    def header(self) -> dict[str, Any]:
        if self.to not in VERSION:
            rest = dict(self.hub.header)
            if self.to in (HARMONY, OPENAI):  # they state the prompt settings elsewhere
                settings = generation_settings(rest)
                settings = {k: v for k, v in settings.items() if k not in PROMPT_SETTINGS}
                rest.pop(SETTINGS, None)
                if settings:
                    rest[SETTINGS] = settings
            if rest:
                self.loss(
                    None, "header", f"document header dropped ({self.to} has none): {sorted(rest)}"
                )
            return {}
        rest = {k: v for k, v in self.hub.header.items() if k != "version"}
        return {"version": VERSION[self.to], **rest}

    def tools(self, attrs: dict[str, Any]) -> None:
        tools = self.hub.tools + [t for t in self.recovered if t not in self.hub.tools]
        if self.to == OPENAI and tools:
            attrs["tools"] = tools
        if self.to == SHAREGPT and tools:
            # a JSON-encoded string, as ShareGPT datasets store it (tools.schemas reads both)
            attrs["tools"] = json.dumps(tools, ensure_ascii=False)
        if self.to in (OPENAI, SHAREGPT):
            return
        if not tools and self.to != HARMONY:
            return
        if self.to == HARMONY:
            self.harmony_instructions(tools)
        elif self.to in (OCM22, OCM20, OCM_JSON):
            _tools_into_developer(self.out, tools)
        elif self.to == V01:
            _tools_into_v01_system(self.out, tools)
        else:
            self.loss(
                None,
                "tools",
                f"{len(tools)} tool declaration(s) dropped ({self.to} cannot declare tools)",
            )

    def harmony_instructions(self, tools: list[dict[str, Any]]) -> None:
        """gpt-oss's developer message: the system (or developer) prompt of a spec without
        Harmony's roles, when it leads the conversation, is its ``# Instructions`` (as gpt-oss's
        chat template reads OpenAI messages); ``tools`` its ``# Tools``. Harmony-family sources
        keep their roles and get the tools in their first developer message. gpt-oss's own
        system message (one declaring built-in tools, which lifting keeps) is no prompt: the
        message after it is."""
        at = _prompt_at(self.out)
        first = self.out[at] if len(self.out) > at else None
        if (
            self.hub.source in OCM_FAMILY
            or first is None
            or first.role not in ("system", "developer")
            or not first.content.strip()
            or (first.role == "developer" and first.content.startswith(DEVELOPER_HEADINGS))
        ):
            if tools:
                _tools_into_developer(self.out, tools)
            return
        if first.role == "developer":
            self.loss(
                self.indices[at], "role", "developer prompt written as the Harmony instructions "
                "(the way back gives a system message)",
            )  # fmt: skip
        instructions = Message(
            role="developer", content=harmony_prompt.developer_message(first.content, tools)
        )
        if id(first) in self.source_of:
            self.source_of[id(instructions)] = self.source_of[id(first)]
        self.out[at] = instructions

    def harmony_system(self) -> None:
        """gpt-oss's system message, generated from ``generation_settings`` (effort: medium
        when none is given; the date line only with a date, so conversion is deterministic)."""
        first = self.out[0] if self.out else None
        if first is not None and first.role == "system" and is_gpt_oss_system(first.content):
            return  # the source's own, kept as written: its settings are in it
        settings = self.prompt_settings()
        effort = settings.get(REASONING_EFFORT, harmony_prompt.DEFAULT_REASONING_EFFORT)
        text = harmony_prompt.system_message(
            reasoning_effort=effort,
            current_date=settings.get(CURRENT_DATE),
            has_functions=declares_functions(self.out, []),
        )
        self.out.insert(0, Message(role="system", content=text))


def _awaits_assistant(messages: list[Message]) -> bool:
    """Whether a conversation ends with a message of another role than the assistant's (a
    Harmony one with nothing but gpt-oss's system message, lifted into settings, included)."""
    return not messages or messages[-1].role != "assistant"


def is_gpt_oss_system(text: str) -> bool:
    """gpt-oss's system message, the default one (``read_system_message``) or any other in
    its format (``is_system_message``)."""
    return harmony_prompt.read_system_message(text) is not None or harmony_prompt.is_system_message(
        text
    )


def _prompt_at(messages: list[Message]) -> int:
    """Where the prompt that leads a conversation sits: after gpt-oss's own system message
    (``harmony_prompt``), which says settings and built-in tools, not instructions."""
    first = messages[0] if messages else None
    gpt_oss = first is not None and first.role == "system" and is_gpt_oss_system(first.content)
    return 1 if gpt_oss else 0


def _tool_name(tool: str) -> str:
    """A reply's tool as a role or ``name=``: built-ins (``browser.search``, ``python``) keep
    their own namespace; a bare function name is ``functions.NAME``."""
    return tool if is_builtin(tool) else qualified(tool)


def _regenerated_ids(hub: Hub) -> dict[int, str]:
    """The id each hub call/reply would get back from ``call_N`` numbering (by hub position):
    dropping an id equal to it loses nothing, since converting back restores it."""
    out: dict[int, str] = {}
    open_calls: list[tuple[str, str | None]] = []
    count = 0
    for position, (m, _) in enumerate(hub.messages):
        if is_call(m):
            count += 1
            out[position] = GENERATED_ID.format(count)
            open_calls.append((out[position], m.recipient))
        elif is_reply(m):
            tool = reply_tool(m)
            for k, (call_id, recipient) in enumerate(open_calls):
                if tool is None or qualified(recipient or "") == qualified(tool):
                    out[position] = call_id
                    del open_calls[k]
                    break
    return out


TOOLS_HEADING = "# Tools"
INSTRUCTIONS_HEADING = "# Instructions\n\n"
# A developer message that opens with one of these is already in gpt-oss's layout.
DEVELOPER_HEADINGS = (INSTRUCTIONS_HEADING, TOOLS_HEADING + "\n")


def _tools_into_developer(messages: list[Message], tools: list[dict[str, Any]]) -> None:
    """OpenAI ``tools`` → the ``# Tools`` section of the first developer message (created after
    the leading system messages when there is none), in Harmony's layout."""
    section = harmony_prompt.developer_message(None, tools)
    for m in messages:
        if m.role == "developer":
            body = m.content if m.content.startswith("#") else INSTRUCTIONS_HEADING + m.content
            m.content = f"{body}\n\n{section}" if m.content else section
            return
    at = next((k for k, m in enumerate(messages) if m.role != "system"), len(messages))
    messages.insert(at, Message(role="developer", content=section))


def _tools_from_developer(messages: list[tuple[Message, int]]) -> list[dict[str, Any]]:
    """The reverse: tools declared in a developer ``# Tools`` section become OpenAI ``tools``;
    the section (and an ``# Instructions`` heading) leaves the message, an empty one goes."""
    found: list[dict[str, Any]] = []
    for pair in list(messages):
        m = pair[0]
        if m.role != "developer" or TOOLS_HEADING not in m.content:
            continue
        at = m.content.find(TOOLS_HEADING)
        signatures = [s for s in parse_namespaces(m.content[at:]) if s.namespace == "functions"]
        if not signatures:
            continue
        found += [s.to_openai_tool() for s in signatures]
        rest = m.content[:at].rstrip("\n").removeprefix(INSTRUCTIONS_HEADING)
        if rest.strip():
            m.content = rest
        else:
            messages.remove(pair)
    return found


def _tools_into_v01_system(messages: list[Message], tools: list[dict[str, Any]]) -> None:
    listing = "\n".join(json.dumps(t, ensure_ascii=False, indent=2) for t in tools)
    section = f"<|function_list|>\n{listing}\n<|function_list|>"
    for m in messages:
        if m.role == "system":
            m.content = f"{m.content}\n{section}"
            return
    messages.insert(0, Message(role="system", content=section))


def _merge_v01(
    messages: list[Message], origins: list[tuple[int, ...]]
) -> tuple[list[Message], list[tuple[int, ...]]]:
    """Assistant parts become v0.1 assistant bodies: thoughts open a body that the next text or
    call joins, and a call joins the body before it; tool replies become ``<|function_output|>``
    bodies (v0.1 §4, §8). Parts are joined with a newline, as in the spec's examples.
    ``origins`` (the source messages of each message) are merged along."""
    out: list[Message] = []
    merged_origins: list[tuple[int, ...]] = []
    open_body = False  # the last assistant body ended in a thought: what follows joins it
    for m, origin in zip(messages, origins, strict=True):
        piece = m.content
        joins = (
            m.role == "assistant"
            and out
            and out[-1].role == "assistant"
            and (open_body or is_call(m))
        )
        if joins:
            out[-1].content = f"{out[-1].content}\n{piece}"
            merged_origins[-1] = (*merged_origins[-1], *origin)
        else:
            # a reply's tool name is inside its <|function_output|> JSON, not in the header
            name = None if m.role == "tool" and piece.startswith("<|function_output|>") else m.name
            out.append(Message(role=m.role, content=piece, name=name, end=END, attrs=dict(m.attrs)))
            merged_origins.append(origin)
        open_body = m.role == "assistant" and m.channel == "analysis"
    for m in out:
        if m.role not in V01_SEGMENT_ROLES:
            m.content += "\n"  # `message_content` LF `<|im_end|>`, as the spec writes it
    return out, merged_origins


def lower_traced(hub: Hub, to: str) -> tuple[Transcript, list[Loss], list[tuple[int, ...]]]:
    """``hub`` written for ``to`` (a shipped spec), every loss, and the source messages each
    written message came from (none for a generated one, several where the target merges
    messages)."""
    lowering = _Lowering(hub, to)
    transcript = lowering.run()
    return transcript, lowering.losses, lowering.origins
