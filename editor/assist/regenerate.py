"""Regenerate an assistant turn with a model: the conversation before it, converted to OpenAI
chat messages by the spec core, is sent to a dataset's connection; the answer comes back in
the transcript's own spec and is stored as an alternative of the turn (``source="model"``),
for the user to accept (promote), keep (a preference pair candidate) or discard (delete).

The way there and back is the conversion hub's, so every spec is handled the same way: the
prompt is ``map_transcript(prefix, "openai-messages")``; the answer is one more message of
that openai-messages document, parsed and mapped back to the transcript's spec, and the
messages it became are the alternative.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from editor import alternatives, formats
from editor.assist.client import Completion, iter_completion, options_of
from editor.assist.connections import connection_of
from editor.errors import DomainError, InvalidContent, ModelCallFailed, NotAllowed
from editor.formats.convert import map_transcript, map_transcript_traced
from editor.models import Alternative, ModelConnection, Transcript

OPENAI = "openai-messages"


@dataclass
class Regeneration:
    """A regeneration ready to send: the turn, the connection, and the request's content."""

    transcript: Transcript
    index: int
    connection: ModelConnection
    messages: list[dict]
    tools: list[dict] | None
    wrapper: dict  # the openai-messages document's other keys (tools …), to read the answer


def prepare(transcript: Transcript, index: int, connection_id: int, user) -> Regeneration:
    """Check and build the request for regenerating the turn at ``index`` (editors of the
    dataset; ``index`` an assistant message: ``NotATurn`` / ``MessageNotFound`` otherwise;
    the connection one of the dataset's)."""
    dataset = transcript.dataset
    if not dataset.can_edit(user):
        raise NotAllowed(f"Your role in {dataset.name} does not edit transcripts.")
    connection = connection_of(dataset, connection_id)
    canonical = transcript.canonical()
    alternatives.turn_end(canonical.messages, index)  # an assistant message, or refused
    prompt = formats.Transcript(
        spec=canonical.spec, header=dict(canonical.header), messages=canonical.messages[:index]
    )
    messages, wrapper = openai_prompt(prompt)
    return Regeneration(
        transcript=transcript,
        index=index,
        connection=connection,
        messages=messages,
        tools=wrapper.get("tools") or None,
        wrapper=wrapper,
    )


def openai_prompt(prompt: formats.Transcript) -> tuple[list[dict], dict]:
    """``prompt`` as Chat Completions messages, and the document's other keys (``tools``)."""
    mapped, _losses = map_transcript(prompt, OPENAI)
    document = json.loads(formats.serialize(mapped, OPENAI))
    if isinstance(document, list):
        return document, {}
    messages = document.pop("messages", [])
    return messages, document


def answer_messages(regeneration: Regeneration, answer: dict) -> list[formats.Message]:
    """The model's ``answer`` (an OpenAI assistant message) in the transcript's spec: the
    messages it becomes after the prompt, through the conversion hub."""
    if not (answer.get("content") or answer.get("reasoning") or answer.get("tool_calls")):
        raise ModelCallFailed(
            "The model answered nothing (no content, reasoning or tool call).",
            details={"status_code": None, "retryable": True, "retry_after": None},
        )
    message = {"role": "assistant", "content": answer.get("content")}
    if answer.get("reasoning"):
        message["reasoning"] = answer["reasoning"]
    if answer.get("tool_calls"):
        message["tool_calls"] = answer["tool_calls"]
    prompt_count = len(_read_openai(regeneration, regeneration.messages).messages)
    document = _read_openai(regeneration, [*regeneration.messages, message])
    spec = regeneration.transcript.spec
    mapped, losses, origins = map_transcript_traced(document, spec)
    # The answer's messages: those written from the answer's canonical messages (indexes
    # from prompt_count on), and any the conversion generated among or after them.
    first = next(
        (i for i, origin in enumerate(origins) if origin and min(origin) >= prompt_count),
        None,
    )
    if first is None:
        lost = [loss for loss in losses if (loss.message_index or 0) >= prompt_count]
        raise InvalidContent(
            f"The model's answer holds nothing a {spec} transcript can hold ("
            + "; ".join(str(loss) for loss in lost)
            + "): nothing was kept.",
            code="answer-not-representable",
            details={"losses": [loss.to_dict() for loss in lost]},
        )
    return list(mapped.messages[first:])


def _read_openai(regeneration: Regeneration, messages: list[dict]) -> formats.Transcript:
    document = {**regeneration.wrapper, "messages": messages} if regeneration.wrapper else messages
    return formats.parse(json.dumps(document, ensure_ascii=False), spec=OPENAI).transcript


def store(regeneration: Regeneration, completion: Completion, user) -> Alternative:
    """The answer kept as an alternative of the turn, with how it was made."""
    messages = answer_messages(regeneration, completion.message)
    connection = regeneration.connection
    return alternatives.add_alternative(
        regeneration.transcript,
        regeneration.index,
        [m.to_dict() for m in messages],
        source="model",
        author=user,
        generation={
            "model": completion.model or connection.model,
            "connection": connection.pk,
            "options": options_of(connection),
            "usage": {"tokens_in": completion.usage[0], "tokens_out": completion.usage[1]},
            "finish_reason": completion.finish_reason,
            "created_at": datetime.now(UTC).isoformat(),
        },
    )


def regenerate(transcript: Transcript, index: int, connection_id: int, user) -> Alternative:
    """Regenerate the turn at ``index`` with the connection, whole: the new alternative."""
    return run(prepare(transcript, index, connection_id, user), user)


def run(regeneration: Regeneration, user) -> Alternative:
    """Send a prepared regeneration and keep its answer: the new alternative."""
    completion = None
    for item in _ask(regeneration, user):
        if isinstance(item, Completion):
            completion = item
    assert completion is not None
    return store(regeneration, completion, user)


def events(regeneration: Regeneration, user) -> Iterator[str]:
    """Server-sent events while the answer arrives: ``delta`` events (``{"content"}``,
    ``{"reasoning"}`` or ``{"tool_call"}``), then ``done`` with the alternative
    (``{"alternative": {...}}``), or ``error`` with ``{code, message, details}``."""
    try:
        for item in _ask(regeneration, user):
            if isinstance(item, Completion):
                alternative = store(regeneration, item, user)
                shown = alternatives.alternative_dict(
                    alternative, regeneration.transcript.stored_messages()
                )
                yield _event("done", {"alternative": shown})
            else:
                yield _event("delta", item)
    except DomainError as error:
        yield _event(
            "error", {"code": error.code, "message": error.message, "details": error.details}
        )


def _ask(regeneration: Regeneration, user) -> Iterator[dict | Completion]:
    return iter_completion(
        regeneration.connection,
        regeneration.messages,
        tools=regeneration.tools,
        stream=True,
        purpose="regenerate",
        dataset=regeneration.transcript.dataset,
        user=user,
        transcript=regeneration.transcript,
    )


def _event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, default=str, ensure_ascii=False)}\n\n"
