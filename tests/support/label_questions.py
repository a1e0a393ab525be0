"""Label questions the tests share: ``TOPIC``, a choice about the whole transcript, and
``CORRECT``, a choice about each assistant message ("Is this answer correct?", yes / no on
keys 1 and 2), asked on the transcript page
(tests/editor/test_label_views.py) and suggested by a judge (tests/browser/test_suggestions.py,
tests/editor/test_message_judges.py)."""

from __future__ import annotations

from editor.labels import create_label_schema

CORRECT = {
    "key": "correct",
    "kind": "choice",
    "prompt": "Is this answer correct?",
    "applies_to": "message",
    "roles": ["assistant"],
    "options": [
        {"value": "yes", "label": "Correct", "key": "1"},
        {"value": "no", "label": "Wrong", "key": "2"},
    ],
}


# A choice about the whole transcript (keys 1 and 2).
TOPIC = {
    "key": "topic",
    "kind": "choice",
    "prompt": "What is it about?",
    "options": [
        {"value": "billing", "label": "Billing", "key": "1"},
        {"value": "bug", "label": "A bug", "key": "2"},
    ],
}


def message_schema(dataset, author, *more: dict, name: str = "Turns"):
    """A label schema of ``dataset`` asking ``CORRECT`` of each assistant message, then the
    questions ``more``."""
    return create_label_schema(dataset, author=author, name=name, questions=[CORRECT, *more])
