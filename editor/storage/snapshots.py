"""The state a revision records of a transcript (its title, metadata, source text and
canonical form), stored compactly when the text parses back to that form."""

from __future__ import annotations

from editor.models import (
    Transcript,
)


def snapshot(transcript: Transcript) -> dict:
    """Everything needed to show, diff and restore ``transcript`` as it is now."""
    return {
        "title": transcript.title,
        "metadata": transcript.metadata,
        "source_text": transcript.source_text,
        "transcript": transcript.canonical().to_dict(),
    }


def stored_snapshot(transcript: Transcript) -> dict:
    """``snapshot`` as a revision stores it: see ``Revision.full_snapshot``."""
    if transcript.source_is_exact:
        return compact(
            transcript.title, transcript.metadata, transcript.source_text, transcript.spec
        )
    return snapshot(transcript)


def compact(title: str, metadata: dict, source_text: str, spec: str) -> dict:
    # The source text parses to exactly the canonical transcript: storing that too would
    # keep every message twice in every revision (most of a database's size).
    return {"title": title, "metadata": metadata, "source_text": source_text, "spec": spec}
