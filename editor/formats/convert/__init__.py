"""Cross-spec conversion with loss reports (DESIGN §2 guarantee 4).

    convert(transcript, to) = serialize(map_transcript(transcript, to))

``map_transcript`` is canonical → canonical: ``hub.lift`` reads the source into hub
messages (2.2 semantics, logical text), ``lower.lower`` writes them for the target and
lists every loss. The mapping tables live in those two modules' docstrings and in
docs/formats.md. Converting to the transcript's own spec is a
no-op: the same text, no losses.
"""

from __future__ import annotations

from ..model import Transcript
from ..specs import SPEC_IDS, UnknownSpec
from .hub import Loss, lift
from .lower import lower, lower_traced

__all__ = ["Loss", "convert", "map_transcript", "map_transcript_traced"]


def map_transcript(transcript: Transcript, to: str) -> tuple[Transcript, list[Loss]]:
    """``transcript`` as a ``to`` transcript (no layout: written in canonical form) + losses."""
    if to not in SPEC_IDS:
        raise UnknownSpec(to)
    if to == transcript.spec:
        return transcript, []
    return lower(lift(transcript), to)


def map_transcript_traced(
    transcript: Transcript, to: str
) -> tuple[Transcript, list[Loss], list[tuple[int, ...]]]:
    """As ``map_transcript``, plus where each message of the result comes from: the indexes
    of the source messages it was written from (empty for a message the conversion generated,
    several where the target merges messages). Labels follow their messages with it."""
    if to not in SPEC_IDS:
        raise UnknownSpec(to)
    if to == transcript.spec:
        return transcript, [], [(index,) for index in range(len(transcript.messages))]
    return lower_traced(lift(transcript), to)


def convert(transcript: Transcript, to: str) -> tuple[str, list[Loss]]:
    """The ``to`` text of ``transcript`` and what it could not carry."""
    from .. import serialize

    mapped, losses = map_transcript(transcript, to)
    return serialize(mapped, to), losses
