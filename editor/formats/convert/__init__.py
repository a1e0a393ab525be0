"""Cross-spec conversion with loss reports (docs/formats.md, "Conversion").

    convert(transcript, to) = serialize(map_transcript(transcript, to))

``map_transcript`` is canonical → canonical: ``hub.lift`` reads the source into hub
messages (2.2 semantics, logical text), ``lower.lower_traced`` writes them for the target and
lists every loss (``registered.lower_registered`` for a spec registered from outside). The
mapping tables live in those modules' docstrings and in docs/formats.md. Converting to the
transcript's own spec is a no-op: the same text, no losses.
"""

from __future__ import annotations

from ..model import Transcript
from ..parsing import serialize
from ..specs import SPEC_IDS, UnknownSpec, is_spec
from .hub import Hub, Loss, lift
from .lower import lower_traced
from .registered import lower_registered

__all__ = ["Loss", "convert", "map_transcript", "map_transcript_traced"]


def map_transcript(transcript: Transcript, to: str) -> tuple[Transcript, list[Loss]]:
    """``transcript`` as a ``to`` transcript (no layout: written in canonical form) + losses."""
    if not is_spec(to):
        raise UnknownSpec(to)
    if to == transcript.spec:
        return transcript, []
    mapped, losses, _ = _lowered(lift(transcript), to)
    return mapped, losses


def map_transcript_traced(
    transcript: Transcript, to: str
) -> tuple[Transcript, list[Loss], list[tuple[int, ...]]]:
    """As ``map_transcript``, plus where each message of the result comes from: the indexes
    of the source messages it was written from (empty for a message the conversion generated,
    several where the target merges messages). Labels follow their messages with it."""
    if not is_spec(to):
        raise UnknownSpec(to)
    if to == transcript.spec:
        return transcript, [], [(index,) for index in range(len(transcript.messages))]
    return _lowered(lift(transcript), to)


def _lowered(hub: Hub, to: str) -> tuple[Transcript, list[Loss], list[tuple[int, ...]]]:
    return lower_traced(hub, to) if to in SPEC_IDS else lower_registered(hub, to)


def convert(transcript: Transcript, to: str) -> tuple[str, list[Loss]]:
    """The ``to`` text of ``transcript`` and what it could not carry."""
    mapped, losses = map_transcript(transcript, to)
    return serialize(mapped, to), losses
