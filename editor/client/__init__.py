"""A Python client of the workbench's HTTP API, for pipelines (docs/client.md).

    from editor.client import Client

    with Client("https://ocm.example.org", token) as ocm:
        ocm.push("support-chats", "batch.jsonl")
        ocm.pull("support-chats", "train.jsonl", spec="openai-messages", status=["approved"])

Needs httpx and ``editor.formats``, never Django: it runs where the server does not.
"""

from .client import Client
from .errors import ApiError, ImportFailed, TaskFailed, VersionsUnavailable
from .results import (
    Annotation,
    Assignment,
    BulkResult,
    BulkTask,
    Dataset,
    DatasetVersion,
    ImportTask,
    LabelSchema,
    PulledTranscript,
    PullSummary,
    Queue,
    Transcript,
    TranscriptSummary,
)

__all__ = [
    "Annotation",
    "ApiError",
    "Assignment",
    "BulkResult",
    "BulkTask",
    "Client",
    "Dataset",
    "DatasetVersion",
    "ImportFailed",
    "ImportTask",
    "LabelSchema",
    "PullSummary",
    "PulledTranscript",
    "Queue",
    "TaskFailed",
    "Transcript",
    "TranscriptSummary",
    "VersionsUnavailable",
]
