"""Preference rows: reading and writing the pair datasets DPO-style trainers read.

Shapes (docs/formats.md, "Preference data"):

* ``conversational`` (TRL): ``{"prompt": [msgs], "chosen": [msgs], "rejected": [msgs],
  "tools"?: [...]}``; the messages are a JSON spec's (``openai-messages`` by default). In a
  text spec, each of the three is a string written in that spec instead.
* ``standard`` (TRL): ``{"prompt": str, "chosen": str, "rejected": str}``: plain text (one
  user message, one assistant message), or text in a text spec when one is given.
* implicit prompt (TRL, either shape): ``{"chosen", "rejected"}`` only, each the whole
  conversation; the prompt is their longest common prefix of messages.
* ``hh`` (Anthropic HH-RLHF): ``{"chosen": "\\n\\nHuman: …\\n\\nAssistant: …", "rejected": …}``,
  split into turns, the common prefix of turns being the prompt.

``read_row`` turns one decoded JSON value into a ``PreferenceRow`` (canonical
``formats.Message`` lists) or says why not with ``Problem``s (a code, the row, the field);
it never raises. ``write_row`` writes message lists in any of the shapes, converting the
messages to the spec asked for and reporting what the conversion lost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .convert import map_transcript_traced
from .model import Message, Transcript
from .parsing import parse, serialize
from .specs import CHAT_DATASET_SPEC, TEXT_SPECS, is_spec

CONVERSATIONAL, STANDARD, HH = "conversational", "standard", "hh"
SHAPES = (CONVERSATIONAL, STANDARD, HH)
# How an import reads its rows (``editor.importing.preference``): every row a transcript, every
# row a preference row, or every row one with HH-RLHF strings read as turns. Declared here so
# the ``ocm push`` command (spec core, no Django) offers the same names as the server.
IMPORT_TRANSCRIPTS, IMPORT_PREFERENCE = "transcripts", "preference"
IMPORT_SHAPES = (IMPORT_TRANSCRIPTS, IMPORT_PREFERENCE, HH)
PAIR_KEYS = ("chosen", "rejected")
USER, ASSISTANT = "user", "assistant"
HH_ROLES = {"Human": USER, "Assistant": ASSISTANT}
HH_MARKERS = {USER: "Human", ASSISTANT: "Assistant"}
HH_TURN = re.compile(r"\n\n(Human|Assistant): ")
# Where a row's messages go when they are plain text (standard, HH): the chat-dataset spec.
PLAIN_SPEC = CHAT_DATASET_SPEC

# Why a row could not be read (every code a reader reports; docs/formats.md lists them).
PROBLEM_CODES = {
    "E-PREF-NOT-OBJECT": "The row is not a JSON object",
    "E-PREF-MISSING": "The row has no chosen or no rejected",
    "E-PREF-TYPE": "A field is neither a list of messages nor a string",
    "E-PREF-MIXED": "prompt, chosen and rejected are not all lists or all strings",
    "E-PREF-SPEC": "The spec cannot hold this row's messages (lists need a JSON spec)",
    "E-PREF-PARSE": "The messages of a field do not parse in the spec",
    "E-PREF-EMPTY": "chosen or rejected holds no message after the prompt",
    "E-PREF-HH-TURNS": "HH text that is not a series of Human: / Assistant: turns",
    "E-PREF-TOOLS": '"tools" is not a list of tool objects',
}


@dataclass(frozen=True)
class Problem:
    """Why row ``row`` (1-based: a line of a JSONL file, an item of an array) was not read:
    ``field`` is where (``chosen``, ``prompt[2]``…); ``detail`` the inner diagnostic's code
    when a field's messages did not parse."""

    code: str
    message: str
    row: int
    field: str | None = None
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class PreferenceRow:
    """One pair: the prompt's messages, the chosen and the rejected completion's, all in
    ``spec``; ``tools`` as the row gave them (OpenAI ``tools`` entries) or None."""

    prompt: list[Message]
    chosen: list[Message]
    rejected: list[Message]
    spec: str
    shape: str
    implicit: bool = False
    tools: list[dict] | None = None


@dataclass
class ReadResult:
    row: PreferenceRow | None
    problems: list[Problem] = field(default_factory=list)


def is_preference_row(value: Any) -> bool:
    """A JSON object with both ``chosen`` and ``rejected``: a preference row, not a
    transcript (no transcript envelope or document has both keys)."""
    return isinstance(value, dict) and all(key in value for key in PAIR_KEYS)


def is_hh_row(value: Any) -> bool:
    """A preference row whose chosen text starts with an HH-RLHF ``Human:`` turn."""
    return (
        is_preference_row(value)
        and "prompt" not in value
        and isinstance(value["chosen"], str)
        and value["chosen"].lstrip("\n").startswith("Human: ")
    )


# --- reading -------------------------------------------------------------------------------


def read_row(
    value: Any, *, row: int = 1, spec: str | None = None, shape: str | None = None
) -> ReadResult:
    """``value`` (one decoded JSON row) as a ``PreferenceRow``, or the problems that stop it.

    ``spec``: the spec of the messages inside (lists: a JSON spec, ``openai-messages`` when
    None; strings: a text spec, plain text when None). ``shape`` ``hh`` reads strings as
    HH-RLHF turns; None recognises them by their first ``Human:`` marker.
    """
    if not isinstance(value, dict):
        return _failed("E-PREF-NOT-OBJECT", "a preference row is a JSON object", row)
    missing = [key for key in PAIR_KEYS if key not in value]
    if missing:
        return _failed("E-PREF-MISSING", f"no {' and no '.join(missing)}", row, missing[0])
    fields = [key for key in ("prompt", *PAIR_KEYS) if key in value]
    kinds = set()
    for key in fields:
        if isinstance(value[key], str):
            kinds.add(str)
        elif isinstance(value[key], list) and all(isinstance(m, dict) for m in value[key]):
            kinds.add(list)
        else:
            return _failed("E-PREF-TYPE", f"{key} is neither a list of messages nor text", row, key)
    if len(kinds) > 1:
        return _failed("E-PREF-MIXED", "prompt, chosen and rejected mix lists and text", row)
    tools = value.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(tool, dict) for tool in tools)
    ):
        return _failed("E-PREF-TOOLS", '"tools" must be a list of objects', row, "tools")
    if spec is not None and not is_spec(spec):
        return _failed("E-PREF-SPEC", f"unknown spec {spec!r}", row)
    if kinds == {list}:
        return _read_lists(value, row, spec or CHAT_DATASET_SPEC, tools)
    if shape == HH or (shape is None and spec is None and is_hh_row(value)):
        return _read_hh(value, row)
    return _read_strings(value, row, spec, tools)


def _failed(code: str, message: str, row: int, where: str | None = None) -> ReadResult:
    return ReadResult(None, [Problem(code, message, row, where)])


def _read_lists(value: dict, row: int, spec: str, tools: list | None) -> ReadResult:
    if spec in TEXT_SPECS:
        return _failed("E-PREF-SPEC", f"lists of messages need a JSON spec, not {spec}", row)
    problems: list[Problem] = []
    parts = {}
    for key in ("prompt", *PAIR_KEYS):
        if key in value:
            parts[key] = _parse_part(json.dumps(value[key], ensure_ascii=False), spec, row, key)
            problems.extend(parts[key][1])
    if problems:
        return ReadResult(None, problems)
    messages = {key: found for key, (found, _) in parts.items()}
    return _assembled(messages, row, spec, CONVERSATIONAL, tools)


def _read_strings(value: dict, row: int, spec: str | None, tools: list | None) -> ReadResult:
    if spec is None:  # plain text: the prompt is what a user said, a completion the answer
        messages = {
            key: [Message(role=USER if key == "prompt" else ASSISTANT, content=value[key])]
            for key in ("prompt", *PAIR_KEYS)
            if key in value
        }
        if "prompt" not in value:
            return _implicit_text(value, row)
        return _assembled(messages, row, PLAIN_SPEC, STANDARD, tools)
    if spec not in TEXT_SPECS:
        return _failed("E-PREF-SPEC", f"text needs a text spec, not {spec}", row)
    prompt_text = value.get("prompt", "")
    problems: list[Problem] = []
    whole = {}
    for key in PAIR_KEYS:
        whole[key], found = _parse_part(prompt_text + value[key], spec, row, key)
        problems.extend(found)
    if problems:
        return ReadResult(None, problems)
    shared = _common_prefix(whole["chosen"], whole["rejected"])
    if prompt_text:
        said = parse(prompt_text, spec).transcript.messages
        shared = min(shared, len(said))
    return _split(whole, shared, row, spec, STANDARD, tools, implicit="prompt" not in value)


def _implicit_text(value: dict, row: int) -> ReadResult:
    """Plain ``{"chosen": str, "rejected": str}``: the common text is the prompt."""
    chosen, rejected = value["chosen"], value["rejected"]
    size = 0
    for a, b in zip(chosen, rejected, strict=False):
        if a != b:
            break
        size += 1
    messages = {
        "prompt": [Message(role=USER, content=chosen[:size])],
        "chosen": [Message(role=ASSISTANT, content=chosen[size:])],
        "rejected": [Message(role=ASSISTANT, content=rejected[size:])],
    }
    result = _assembled(messages, row, PLAIN_SPEC, STANDARD, None)
    if result.row is not None:
        result.row.implicit = True
    return result


def _read_hh(value: dict, row: int) -> ReadResult:
    problems: list[Problem] = []
    whole = {}
    for key in PAIR_KEYS:
        whole[key], found = split_hh(value[key], row, key)
        problems.extend(found)
    if problems:
        return ReadResult(None, problems)
    shared = _common_prefix(whole["chosen"], whole["rejected"])
    # The prompt ends before the last assistant turn the two share: a pair's completions
    # are assistant turns, never part of what the user said.
    while shared and whole["chosen"][shared - 1].role != USER:
        shared -= 1
    return _split(whole, shared, row, PLAIN_SPEC, HH, None, implicit=True)


def split_hh(text: str, row: int = 1, where: str = "chosen") -> tuple[list[Message], list[Problem]]:
    """HH-RLHF text as messages: ``\\n\\nHuman: `` a user turn, ``\\n\\nAssistant: `` an
    assistant turn (the text between markers is the content, as is)."""
    pieces = HH_TURN.split(text)
    if pieces[0].strip() or len(pieces) < 3:
        problem = Problem(
            "E-PREF-HH-TURNS", "HH text starts with \\n\\nHuman: or \\n\\nAssistant:", row, where
        )
        return [], [problem]
    messages = [
        Message(role=HH_ROLES[marker], content=content)
        for marker, content in zip(pieces[1::2], pieces[2::2], strict=True)
    ]
    return messages, []


def _parse_part(text: str, spec: str, row: int, where: str) -> tuple[list[Message], list[Problem]]:
    result = parse(text, spec)
    problems = [
        Problem(
            "E-PREF-PARSE",
            diagnostic.message,
            row,
            where if diagnostic.message_index is None else f"{where}[{diagnostic.message_index}]",
            diagnostic.code,
        )
        for diagnostic in result.diagnostics
        if diagnostic.severity == "error"
    ]
    return result.transcript.messages, problems


def _assembled(
    parts: dict[str, list[Message]], row: int, spec: str, shape: str, tools: list | None
) -> ReadResult:
    if "prompt" in parts:
        result = PreferenceRow(
            parts["prompt"], parts["chosen"], parts["rejected"], spec, shape, tools=tools
        )
        return _checked(result, row)
    shared = _common_prefix(parts["chosen"], parts["rejected"])
    return _split(parts, shared, row, spec, shape, tools, implicit=True)


def _split(
    whole: dict[str, list[Message]],
    shared: int,
    row: int,
    spec: str,
    shape: str,
    tools: list | None,
    *,
    implicit: bool,
) -> ReadResult:
    result = PreferenceRow(
        prompt=whole["chosen"][:shared],
        chosen=whole["chosen"][shared:],
        rejected=whole["rejected"][shared:],
        spec=spec,
        shape=shape,
        implicit=implicit,
        tools=tools,
    )
    return _checked(result, row)


def _checked(result: PreferenceRow, row: int) -> ReadResult:
    empty = [key for key in PAIR_KEYS if not getattr(result, key)]
    if empty:
        return _failed(
            "E-PREF-EMPTY", f"{empty[0]} holds no message after the prompt", row, empty[0]
        )
    for message in (*result.prompt, *result.chosen, *result.rejected):
        message.source = None  # where in the row it was read is no transcript's text
    return ReadResult(result)


def _common_prefix(a: Sequence[Message], b: Sequence[Message]) -> int:
    size = 0
    for left, right in zip(a, b, strict=False):
        if left.fingerprint() != right.fingerprint():
            break
        size += 1
    return size


# --- writing -------------------------------------------------------------------------------


@dataclass
class WrittenRow:
    row: dict[str, Any]
    losses: list[dict] = field(default_factory=list)


def write_row(
    prompt: Sequence[Message],
    chosen: Sequence[Message],
    rejected: Sequence[Message],
    *,
    spec: str,
    shape: str = CONVERSATIONAL,
    target: str | None = None,
    tools: list[dict] | None = None,
) -> WrittenRow:
    """One row of ``shape`` from messages in ``spec``, converted to ``target`` (default: the
    chat-dataset spec for conversational rows, plain text for standard ones), with what the
    conversion lost (``{"field", "detail", "message_index"?}``, indexes in prompt + completion).

    Conversational in a JSON spec: each field is that spec's message list (the document's
    ``messages`` / ``conversations`` list, or its whole value). In a text spec, and for
    standard rows in a text spec: strings, the prompt being the text up to where the
    completion starts (so prompt + chosen is the whole transcript in that spec).
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}")
    if shape == HH:
        return _hh_row(prompt, chosen, rejected)
    if shape == CONVERSATIONAL:
        target = target or CHAT_DATASET_SPEC
    if target is None:
        return _plain_row(prompt, chosen, rejected)
    chosen_parts, chosen_losses = _converted(prompt, chosen, spec, target)
    rejected_parts, rejected_losses = _converted(prompt, rejected, spec, target)
    losses = chosen_losses + [
        loss for loss in rejected_losses if loss.get("message_index", 0) >= len(prompt)
    ]
    if target in TEXT_SPECS:
        prompt_text, chosen_text = _texts(*chosen_parts, target)
        _, rejected_text = _texts(*rejected_parts, target)
        row: dict[str, Any] = {"prompt": prompt_text, "chosen": chosen_text}
        row["rejected"] = rejected_text
    else:
        row = {
            "prompt": _json_messages(chosen_parts[0], target),
            "chosen": _json_messages(chosen_parts[1], target),
            "rejected": _json_messages(rejected_parts[1], target),
        }
    if tools and shape == CONVERSATIONAL:
        row["tools"] = tools
    return WrittenRow(row, losses)


def _converted(
    prompt: Sequence[Message], completion: Sequence[Message], spec: str, target: str
) -> tuple[tuple[Transcript, Transcript], list[dict]]:
    """prompt + completion converted to ``target`` as one transcript (a conversion may need
    the prompt's declarations), then cut where the completion's first message went."""
    whole = Transcript(spec=spec, messages=[*prompt, *completion])
    mapped, losses, origins = map_transcript_traced(whole, target)
    boundary = len(prompt)
    cut = next(
        (i for i, origin in enumerate(origins) if origin and max(origin) >= boundary),
        len(mapped.messages),
    )
    head = Transcript(target, mapped.header, mapped.messages[:cut], mapped.attrs)
    tail = Transcript(target, {}, mapped.messages[cut:], {})
    return (head, tail), [loss.to_dict() for loss in losses]


def _texts(head: Transcript, tail: Transcript, spec: str) -> tuple[str, str]:
    """The prompt's text and the completion's: the whole transcript's text cut where the
    prompt's own text and it part (a spec that closes its documents, [EOS], closes the
    completion, not the prompt)."""
    whole = serialize(
        Transcript(spec, head.header, [*head.messages, *tail.messages], head.attrs), spec
    )
    alone = serialize(head, spec) if head.messages else ""
    size = 0
    for a, b in zip(alone, whole, strict=False):
        if a != b:
            break
        size += 1
    return whole[:size], whole[size:]


def _json_messages(part: Transcript, spec: str) -> Any:
    if not part.messages and not part.attrs:
        return []
    document = json.loads(serialize(part, spec))
    if isinstance(document, dict):
        for key in ("messages", "conversations"):
            if isinstance(document.get(key), list):
                return document[key]
    return document


def _plain_row(
    prompt: Sequence[Message], chosen: Sequence[Message], rejected: Sequence[Message]
) -> WrittenRow:
    losses = []
    if len(prompt) != 1 or prompt[0].role != USER:
        losses.append(
            {"field": "prompt", "detail": "plain text: the prompt's messages joined by blank lines"}
        )
    for key, part in (("chosen", chosen), ("rejected", rejected)):
        if len(part) != 1:
            losses.append({"field": key, "detail": "plain text: the messages' contents joined"})
    row = {
        "prompt": "\n\n".join(m.content for m in prompt),
        "chosen": "".join(m.content for m in chosen),
        "rejected": "".join(m.content for m in rejected),
    }
    return WrittenRow(row, losses)


def _hh_row(
    prompt: Sequence[Message], chosen: Sequence[Message], rejected: Sequence[Message]
) -> WrittenRow:
    losses: list[dict] = []
    row = {
        "chosen": hh_text([*prompt, *chosen], losses),
        "rejected": hh_text([*prompt, *rejected], losses[:0]),
    }
    return WrittenRow(row, losses)


def hh_text(messages: Sequence[Message], losses: list[dict] | None = None) -> str:
    """Messages as HH-RLHF text; a message HH cannot say (system, tool, a tool call) is left
    out and reported in ``losses``."""
    pieces = []
    for index, message in enumerate(messages):
        marker = HH_MARKERS.get(message.role)
        if marker is None or message.recipient:
            if losses is not None:
                losses.append(
                    {
                        "message_index": index,
                        "field": "messages",
                        "detail": f"a {message.role} message has no HH turn: left out",
                    }
                )
            continue
        pieces.append(f"\n\n{marker}: {message.content}")
    return "".join(pieces)
