"""A chat with two assistant turns, for the tests of a turn's alternatives
(tests/editor/test_alternatives.py) and of the edited turns kept among them
(tests/editor/test_preference_edited_turns.py): the messages, the ``chat`` fixture that stores
them, and ``fresh`` to read a transcript again.

tests/editor/conftest.py makes ``chat`` a fixture of every test there."""

from __future__ import annotations

import pytest

from editor import formats
from editor.models import Transcript
from editor.storage.create import create_transcript


def msg(role: str, content: str, **fields) -> formats.Message:
    return formats.Message(role=role, content=content, end=formats.END, **fields)


# Two turns: 2-4 (a call, its reply and the answer) and 6 (one message).
CHAT = [
    msg("system", "Be brief."),
    msg("user", "Weather in Tokyo?"),
    msg("assistant", "Let me check.", channel="commentary"),
    msg("tool", '{"temp": 20}', name="functions.weather"),
    msg("assistant", "20 °C and sunny.", channel="final"),
    msg("user", "Thanks!"),
    msg("assistant", "You're welcome.", channel="final"),
]


@pytest.fixture
def chat(dataset, curator) -> Transcript:
    """``CHAT`` stored in ``dataset`` (OpenChatML 2.2) by its curator."""
    return create_transcript(
        dataset,
        canonical=formats.Transcript(spec="openchatml-2.2", messages=list(CHAT)),
        author=curator,
    )


def fresh(transcript: Transcript) -> Transcript:
    return Transcript.objects.select_related("dataset").get(pk=transcript.pk)
