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
from .lower import lower

__all__ = ["Loss", "convert", "map_transcript"]


def map_transcript(transcript: Transcript, to: str) -> tuple[Transcript, list[Loss]]:
    """``transcript`` as a ``to`` transcript (no layout: written in canonical form) + losses."""
    if to not in SPEC_IDS:
        raise UnknownSpec(to)
    if to == transcript.spec:
        return transcript, []
    return lower(lift(transcript), to)


def convert(transcript: Transcript, to: str) -> tuple[str, list[Loss]]:
    """The ``to`` text of ``transcript`` and what it could not carry."""
    from .. import serialize

    mapped, losses = map_transcript(transcript, to)
    return serialize(mapped, to), losses
