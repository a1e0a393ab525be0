"""Helpers for the judge tests: a schema with a judged choice question, a connection to the
local OpenAI-compatible server, transcripts to judge, and a server answer that tracks how
many requests are in flight at once."""

from __future__ import annotations

import json
import threading
import time

from editor import formats
from editor.assist.judges import attach_judge
from editor.labels import create_label_schema
from editor.models import ModelConnection
from editor.storage.create import create_transcript

QUESTIONS = [
    {
        "key": "helpful",
        "kind": "choice",
        "prompt": "Was the assistant helpful?",
        "applies_to": "transcript",
        "options": [
            {"value": "yes", "label": "Helpful", "key": "1"},
            {"value": "no", "label": "Not helpful", "key": "2"},
        ],
    },
    {
        "key": "quality",
        "kind": "rating",
        "prompt": "How good is the answer?",
        "applies_to": "transcript",
        "scale": 5,
    },
    {
        "key": "topics",
        "kind": "multi_choice",
        "prompt": "Which topics?",
        "applies_to": "transcript",
        "options": [
            {"value": "weather", "label": "Weather"},
            {"value": "travel", "label": "Travel"},
            {"value": "food", "label": "Food"},
        ],
    },
    {
        "key": "harm",
        "kind": "span",
        "prompt": "Mark harmful words",
        "applies_to": "message",
        "tags": [{"value": "harm", "label": "Harmful", "key": "h"}],
    },
]


def make_schema(dataset, curator, name="Quality"):
    return create_label_schema(dataset, author=curator, name=name, questions=QUESTIONS)


def make_connection(dataset, server, curator, **fields):
    fields = {"max_concurrency": 4, "timeout_seconds": 5, **fields}
    return ModelConnection.objects.create(
        dataset=dataset,
        name=fields.pop("name", "local"),
        base_url=server.base_url,
        model="judge-model",
        created_by=curator,
        **fields,
    )


def make_judge(dataset, server, curator, question="helpful", **connection_fields):
    schema = make_schema(dataset, curator)
    connection = make_connection(dataset, server, curator, **connection_fields)
    return attach_judge(schema, question=question, connection=connection, user=curator)


def make_transcripts(dataset, author, count: int, start: int = 0):
    M = formats.Message
    return [
        create_transcript(
            dataset,
            author=author,
            title=f"chat {n}",
            text=formats.serialize(
                formats.Transcript(
                    spec="openchatml-2.2",
                    messages=[
                        M(role="user", content=f"Question number {n}?"),
                        M(role="assistant", channel="final", content=f"Answer number {n}."),
                    ],
                )
            ),
        )
        for n in range(start, start + count)
    ]


class InFlight:
    """A server answer (``respond_with``) that holds each request ``hold`` seconds and
    records the most requests in flight at once."""

    def __init__(self, answer=None, hold: float = 0.01):
        self.answer = answer or (lambda body: {"value": "yes", "rationale": "It answered."})
        self.hold = hold
        self.now = 0
        self.most = 0
        self.lock = threading.Lock()

    def __call__(self, body):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(self.hold)
            return self.answer(body)
        finally:
            with self.lock:
                self.now -= 1


def transcript_number(body) -> int:
    """Which "chat N" a request is about (its prompt holds "Question number N?")."""
    text = body["messages"][-1]["content"]
    return int(text.split("Question number ")[1].split("?")[0])


def as_json(value) -> str:
    return json.dumps(value)
