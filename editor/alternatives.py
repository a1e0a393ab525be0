"""Alternatives of an assistant turn: adding, deleting, promoting one, and what a pairwise
question compares.

A *turn* (``editor.turns``) starts at an assistant message and runs over the assistant and
tool messages after it, until the next user, system or developer message (or the end): the
completion a model gave for the prompt before it. An alternative is another completion of that turn, stored as
an immutable snapshot (``editor.models.Alternative``, keyed by the turn's first index).

When a turn gets its first alternative, the turn as the transcript holds it is stored too
(``source="transcript"``), so a pairwise question always compares it with the others.
Promoting an alternative is one revision through ``storage.save_transcript`` (history,
validation, version conflicts); the own turn it replaces stays as an alternative. An edit of
a turn that has alternatives keeps the turn before and after the edit among them
(``editor.pairs.keep_edited_turns``, on the write path).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import F

from editor import formats
from editor.errors import (
    AlternativeIsCurrent,
    AlternativeNotFound,
    InvalidContent,
    MessageNotFound,
    NotAllowed,
    NotATurn,
)
from editor.labels.annotations import my_answers
from editor.models import Alternative, Transcript
from editor.models.pairs import AlternativeSource
from editor.storage.content import check_note, messages_from_input
from editor.storage.save import refusal, save_transcript

# What a turn is lives below the write path, which needs it too; its names stay importable
# from here, where the views and the use cases look for them.
from editor.turns import (
    content_hash,
    keep_alternative,
    turn_end,
    turn_messages,
)
from editor.turns import turn_start_of as turn_start_of
from editor.turns import turn_starts as turn_starts

SOURCES = frozenset(AlternativeSource.values)
# A turn's alternatives a pairwise item shows with keys 1-9.
MAX_CANDIDATES = 9


def alternatives_of(transcript: Transcript, index: int | None = None):
    """The alternatives of ``transcript`` (of the turn at ``index`` only, when given), by turn
    then in the order they were added."""
    found = Alternative.objects.filter(transcript=transcript)
    if index is not None:
        found = found.filter(message_index=index)
    return found.select_related("created_by").order_by("message_index", "pk")


def candidates(transcript: Transcript, index: int) -> list[Alternative]:
    """What a pairwise item about the turn at ``index`` compares: its alternatives (two or
    more make an item)."""
    return list(alternatives_of(transcript, index)[:MAX_CANDIDATES])


def shuffled_order(candidate_ids: Sequence[int], annotator_id: int, item_key: str) -> list[int]:
    """``candidate_ids`` in an order of their own for this annotator and item: random across
    annotators (no side is favoured) but the same on every reload (seeded by a hash)."""
    seed = hashlib.sha256(f"{annotator_id}:{item_key}".encode()).hexdigest()
    order = sorted(candidate_ids)
    random.Random(seed).shuffle(order)
    return order


def add_alternative(
    transcript: Transcript,
    index: int,
    messages: Sequence[formats.Message | dict],
    *,
    source: str,
    author,
    note: str = "",
    generation: dict | None = None,
) -> Alternative:
    """Store ``messages`` as an alternative of the turn at ``index`` (editors only).

    The messages are checked as an edit's are, and must be a turn themselves (an assistant
    message first, no user/system/developer message). The turn's first alternative stores the
    own turn as it stands as well. The same content twice is the row already there.
    """
    _require_editor(transcript, author)
    if source not in SOURCES:
        raise InvalidContent(
            f"source must be one of {', '.join(sorted(SOURCES))}.", code="invalid-source"
        )
    check_note(note)
    if generation is not None and not isinstance(generation, dict):
        raise InvalidContent("generation must be an object.", code="invalid-generation")
    if not isinstance(messages, list | tuple) or not messages:
        raise NotATurn("An alternative needs one or more messages.")
    checked = messages_from_input(messages)
    if checked[0].role != "assistant" or turn_end(checked, 0) != len(checked):
        raise NotATurn(
            "An alternative is one turn: an assistant message first, then assistant or tool "
            "messages only."
        )
    stored = transcript.stored_messages()
    own = turn_messages(stored, index)
    with transaction.atomic():
        if not Alternative.objects.filter(transcript=transcript, message_index=index).exists():
            keep_alternative(transcript, index, own, AlternativeSource.TRANSCRIPT, author)
        return keep_alternative(transcript, index, checked, source, author, note, generation or {})


def alternative_of(transcript: Transcript, alternative_id: int) -> Alternative:
    """One alternative of ``transcript`` (``AlternativeNotFound`` for any other id)."""
    found = Alternative.objects.filter(transcript=transcript, pk=alternative_id).first()
    if found is None:
        raise AlternativeNotFound(f"The transcript has no alternative {alternative_id}.")
    return found


def is_current(alternative: Alternative, messages: Sequence[formats.Message]) -> bool:
    """Whether ``alternative`` is what the transcript holds at its turn now."""
    try:
        own = turn_messages(messages, alternative.message_index)
    except (NotATurn, MessageNotFound):
        return False
    return content_hash(own) == alternative.content_hash


def can_delete(alternative: Alternative, user) -> bool:
    dataset = alternative.transcript.dataset
    return dataset.can_curate(user) or (
        dataset.can_edit(user) and alternative.created_by_id == user.pk
    )


def delete_alternative(alternative: Alternative, *, user) -> None:
    """Delete an alternative (a curator or its creator), unless it is what the transcript
    holds at its turn now, whatever its source (``AlternativeIsCurrent``): the turn's own
    content stays among its comparisons."""
    if not can_delete(alternative, user):
        raise NotAllowed("Only a curator or the one who added it may delete an alternative.")
    if is_current(alternative, alternative.transcript.stored_messages()):
        raise AlternativeIsCurrent(
            "This alternative is the turn as the transcript holds it: promote another first."
        )
    alternative.delete()


def promote(
    transcript: Transcript,
    alternative: Alternative,
    *,
    expected_version: int,
    author,
    note: str = "",
) -> Transcript:
    """Replace the turn's messages with ``alternative``'s: one revision, version-checked
    (a stale ``expected_version`` is a ``ConflictError``, 409). The turn replaced stays as an
    alternative; the alternatives of later turns move with their messages."""
    _require_editor(transcript, author)
    if alternative.transcript_id != transcript.pk:
        raise AlternativeNotFound(f"The transcript has no alternative {alternative.pk}.")
    if transcript.version != expected_version:
        raise refusal(transcript.pk, expected_version)
    index = alternative.message_index
    messages = transcript.stored_messages()
    end = turn_end(messages, index)
    own = messages[index:end]
    chosen = messages_from_input(alternative.messages)
    with transaction.atomic():
        keep_alternative(transcript, index, own, AlternativeSource.TRANSCRIPT, author)
        saved = save_transcript(
            transcript,
            expected_version=expected_version,
            author=author,
            messages=[*messages[:index], *chosen, *messages[end:]],
            note=note or f"promoted alternative {alternative.pk} at message {index}",
        )
        shift = len(chosen) - len(own)
        if shift:
            Alternative.objects.filter(transcript=transcript, message_index__gte=end).update(
                message_index=F("message_index") + shift
            )
    return saved


def alternative_dict(alternative: Alternative, messages: Sequence[formats.Message]) -> dict:
    """An alternative as the API and the pages show it (``messages``: the transcript's now,
    to say whether it is the current turn)."""
    return {
        "id": alternative.pk,
        "message_index": alternative.message_index,
        "messages": alternative.messages,
        "content_hash": alternative.content_hash,
        "source": alternative.source,
        "note": alternative.note,
        "generation": alternative.generation,
        "created_by": alternative.created_by.get_username() if alternative.created_by else None,
        "created_at": alternative.created_at,
        "current": is_current(alternative, messages),
    }


# --- what the transcript page shows ---------------------------------------------------------


def turn_panel(transcript: Transcript, index: int, user, messages=None) -> dict:
    """The turn starting at ``index`` and its alternatives as the transcript page shows them:
    each with its messages, whether it is the turn as it stands, and whether ``user`` may
    delete it."""
    messages = transcript.stored_messages() if messages is None else messages
    end = turn_end(messages, index)
    rows = list(alternatives_of(transcript, index))
    return {
        "index": index,
        "last": end - 1,
        "alternatives": [
            {
                "row": row,
                "messages": [_shown(m) for m in row.messages],
                "current": is_current(row, messages),
                "can_delete": can_delete(row, user),
            }
            for row in rows
        ],
    }


class TurnPanels(dict):
    """Turn panels by the turn's last message; ``covered``: the messages of those turns (their
    menus need not offer a panel: it is shown); ``offered``: whether messages offer one at all
    (not in a queue's workspace, where pairwise items show alternatives blind)."""

    def __init__(self, panels=(), *, offered: bool = True):
        super().__init__(panels)
        self.offered = offered
        self.covered = frozenset(
            i for panel in self.values() for i in range(panel["index"], panel["last"] + 1)
        )


def turn_panels(transcript: Transcript, user) -> TurnPanels:
    """The panels of the turns that have alternatives, by the turn's last message (where the
    page shows them: under the turn); one query when there are none."""
    starts = sorted(
        set(
            Alternative.objects.filter(transcript=transcript).values_list(
                "message_index", flat=True
            )
        )
    )
    if not starts:
        return TurnPanels()
    messages = transcript.stored_messages()
    panels = {}
    for index in starts:
        try:
            panel = turn_panel(transcript, index, user, messages)
        except (NotATurn, MessageNotFound):  # the transcript changed under them
            continue
        panels[panel["last"]] = panel
    return TurnPanels(panels)


# --- what a pairwise item shows ------------------------------------------------------------

# The messages of the prompt shown before "show all".
PROMPT_TAIL = 3
KEYS = "123456789"


def turns_with_candidates(transcript: Transcript) -> dict[int, list[Alternative]]:
    """The turns of ``transcript`` that a pairwise item can compare (two or more
    alternatives, at a message that still starts an assistant turn), by first index."""
    by_turn: dict[int, list[Alternative]] = {}
    for alternative in alternatives_of(transcript):
        by_turn.setdefault(alternative.message_index, []).append(alternative)
    return {index: found[:MAX_CANDIDATES] for index, found in by_turn.items() if len(found) >= 2}


def item_key(transcript: Transcript, index: int) -> str:
    """What seeds the order a pairwise item's candidates are shown in (with the annotator)."""
    return f"{transcript.pk}:{index}"


def pairwise_items(transcript: Transcript, user, questions) -> list[dict]:
    """One pairwise block per (turn with candidates, pairwise question): the prompt (the
    messages before the turn, its last ``PROMPT_TAIL`` apart), the candidates in the order
    this annotator is shown them (the one their answer recorded, else their own shuffled
    order) with their keys, and their answer so far."""
    asked = [(schema, question) for schema, question in questions if question.kind == "pairwise"]
    if not asked:
        return []
    turns = turns_with_candidates(transcript)
    if not turns:
        return []
    messages = transcript.stored_messages()
    mine = my_answers(transcript, user)
    items = []
    for index, found in sorted(turns.items()):
        if index >= len(messages) or messages[index].role != "assistant":
            continue  # the transcript changed under its alternatives: nothing to compare
        by_id = {alternative.pk: alternative for alternative in found}
        prompt = [_shown(m.to_dict()) for m in messages[:index]]
        for schema, question in asked:
            answer = mine.get((index, schema.current_version_id, question.key))
            value = answer.value if answer is not None else None
            recorded = value["order"] if value else []
            order = (
                recorded
                if recorded and set(recorded) <= by_id.keys()
                else shuffled_order(list(by_id), user.pk, item_key(transcript, index))
            )
            items.append(
                {
                    "schema": schema,
                    "question": question,
                    "index": index,
                    "earlier": prompt[:-PROMPT_TAIL] if len(prompt) > PROMPT_TAIL else [],
                    "prompt": prompt[-PROMPT_TAIL:],
                    "candidates": [
                        {
                            "key": KEYS[place],
                            "alternative": by_id[pk],
                            "messages": [_shown(m) for m in by_id[pk].messages],
                            "ratings": _ratings_of(question, value, pk),
                        }
                        for place, pk in enumerate(order)
                    ],
                    "order": order,
                    "choice": str(value["choice"]) if value else "",
                    "reason": value.get("reason", "") if value else "",
                }
            )
    return items


def _shown(message: dict) -> dict:
    return {
        "role": message.get("role", ""),
        "channel": message.get("channel") or "",
        "name": message.get("name") or message.get("recipient") or "",
        "content": message.get("content") or "",
    }


def _ratings_of(question, value: dict | None, pk: int) -> list[dict]:
    """The rubric's criteria for one side, each with its scale and the rating given."""
    given = ((value or {}).get("ratings") or {}).get(str(pk), {})
    return [
        {
            "criterion": criterion,
            "scale": list(range(criterion.min, criterion.max + 1)),
            "value": given.get(criterion.key),
        }
        for criterion in question.rubric
    ]


def parse_messages(text: str, *, channel: str | None = None) -> Any:
    """What a person typed as an alternative: a JSON message or list of messages, or else
    plain text, which is one assistant message with that content (in ``channel``: the one
    the turn's answer is in, so that plain text replaces it in kind)."""
    stripped = text.strip()
    if not stripped:
        raise NotATurn("Type the alternative's text, or its messages as JSON.")
    if stripped[0] in "[{":
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise InvalidContent(
                f"The messages are not valid JSON: {error.msg} (line {error.lineno}).",
                code="invalid-json",
            ) from None
        return [data] if isinstance(data, dict) else data
    message = {"role": "assistant", "content": text, "end": formats.END}
    if channel:
        message["channel"] = channel
    return [message]


def _require_editor(transcript: Transcript, user) -> None:
    if not transcript.dataset.can_edit(user):
        raise NotAllowed("Your role in this dataset does not add or promote alternatives.")
