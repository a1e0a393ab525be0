"""Sample transcripts for the storage tests: the demo set, one per spec id."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from editor import formats

DEMO = Path(__file__).resolve().parents[2] / "editor" / "demo"


@cache
def demo_texts() -> dict[str, str]:
    """Spec id -> the demo sample's exact text (newlines as written)."""
    manifest = json.loads((DEMO / "manifest.json").read_text("utf-8"))
    texts = {}
    for entry in manifest["transcripts"]:
        with (DEMO / entry["file"]).open(encoding="utf-8", newline="") as fh:
            texts[entry["spec"]] = fh.read()
    return texts


def readable_specs() -> list[str]:
    """Spec ids whose codec exists and reads its demo sample into messages."""
    specs = []
    for spec, text in demo_texts().items():
        try:
            result = formats.parse(text, spec)
        except (ImportError, KeyError):  # the codec has not landed yet
            continue
        if result.transcript.messages:
            specs.append(spec)
    return specs


def conversation(spec: str = "openchatml-2.2", turns: int = 2) -> str:
    """A small transcript text in ``spec`` with ``turns`` user/assistant exchanges."""
    messages = []
    for turn in range(turns):
        messages.append(formats.Message(role="user", content=f"Question {turn}?"))
        messages.append(
            formats.Message(role="assistant", channel="final", content=f"Answer {turn}.")
        )
    return formats.serialize(formats.Transcript(spec=spec, messages=messages))
