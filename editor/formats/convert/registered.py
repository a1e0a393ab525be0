"""Writing hub messages for a spec registered from outside the package (``formats.register``).

``lower`` knows each shipped spec from its tables; a registered spec has none there. Its
codec is given the hub messages as they are, and what its text cannot say is found by
reading that text back: every field that does not come back is a loss, as ``lower`` reports
its own, so nothing is dropped silently.
"""

from __future__ import annotations

from ..diagnostics import Diagnostics
from ..model import SEMANTIC_FIELDS, Transcript
from ..specs import get_codec
from .hub import ADD_GENERATION_PROMPT, Hub, Loss


def lower_registered(hub: Hub, to: str) -> tuple[Transcript, list[Loss], list[tuple[int, ...]]]:
    """As ``lower.lower_traced``, for a registered spec ``to``."""
    written = Transcript(
        spec=to, header=hub.header, messages=[m for m, _ in hub.messages], attrs=hub.attrs
    )
    codec = get_codec(to)
    text = codec.serialize(written)
    said = codec.parse(text, Diagnostics(text))
    losses = [
        Loss(None, name, f"{name} dropped ({to} cannot write it)")
        for name in ("header", "attrs")
        if getattr(said, name) != getattr(written, name)
    ]
    if hub.tools:
        losses.append(Loss(None, "tools", f"tool declarations dropped ({to} cannot write them)"))
    if hub.generation_prompt is False:
        losses.append(
            Loss(None, f"attrs.{ADD_GENERATION_PROMPT}", "add_generation_prompt=false dropped")
        )
    if len(said.messages) != len(written.messages):
        detail = f"{len(written.messages)} messages read back as {len(said.messages)}"
        losses.append(Loss(None, "messages", detail))
    else:
        for (message, index), back in zip(hub.messages, said.messages, strict=True):
            losses.extend(
                Loss(
                    index, name, f"{name}={getattr(message, name)!r} dropped ({to} cannot write it)"
                )
                for name in SEMANTIC_FIELDS
                if getattr(back, name) != getattr(message, name)
            )
    return written, losses, [(index,) for _, index in hub.messages]
