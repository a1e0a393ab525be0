"""Model assistance: a dataset's connections to OpenAI-compatible servers, judges attached to
label questions, their runs and suggestions, and every request made (tokens and outcome).

An API key is never stored: a connection names the environment variable that holds it
(``api_key_env``), read by the process that makes the request.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from editor.models.datasets import Dataset
from editor.models.labels import LabelSchema, LabelSchemaVersion
from editor.models.tasks import TrackedTask
from editor.models.transcripts import Transcript


class ModelConnection(models.Model):
    """An OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp's
    server, LiteLLM). ``options``: request options sent with every call (temperature,
    max_tokens, reasoning_effort, top_p …). ``max_concurrency`` requests at once at most, and
    ``requests_per_minute`` when set, across a run."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="model_connections")
    name = models.CharField(max_length=100)
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(max_length=100, blank=True)
    options = models.JSONField(default=dict, blank=True)
    timeout_seconds = models.FloatField(default=60)
    max_concurrency = models.PositiveSmallIntegerField(default=4)
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="model_connection_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model} at {self.base_url})"


class Judge(models.Model):
    """A model that answers one question of a label schema: ``prompt_template`` is filled with
    the transcript, the question and its options; answers are suggestions, never a person's."""

    schema = models.ForeignKey(LabelSchema, on_delete=models.CASCADE, related_name="judges")
    question = models.CharField(max_length=64)
    connection = models.ForeignKey(ModelConnection, on_delete=models.PROTECT, related_name="judges")
    prompt_template = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["schema", "question"], name="judge_unique_question")
        ]

    def __str__(self) -> str:
        return f"judge of {self.question} in schema {self.schema_id}"


class JudgeRun(TrackedTask):
    """A judge run over a selection of transcripts fixed when it starts (``transcript_ids``),
    asked at ``schema_version``. Resuming a stopped run asks only what has no suggestion yet.
    ``progress``: {"done", "total", "failed"}; ``failures``: [{"transcript", "error",
    "attempts"}]."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="judge_runs")
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    schema_version = models.ForeignKey(
        LabelSchemaVersion, on_delete=models.CASCADE, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    filters = models.JSONField(default=dict, blank=True)
    transcript_ids = models.JSONField(default=list, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    failures = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"judge run {self.pk} of {self.judge}"


class Suggestion(models.Model):
    """A model's answer to a question about a transcript (or one of its messages): shown
    pre-selected and marked as the model's, accepted by a person into their own answer
    (``accepted_by``), never counted or exported as a person's answer."""

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="suggestions")
    schema_version = models.ForeignKey(
        LabelSchemaVersion, on_delete=models.CASCADE, related_name="+"
    )
    question = models.CharField(max_length=64)
    message_index = models.PositiveIntegerField(null=True, blank=True)
    value = models.JSONField()
    rationale = models.TextField(blank=True)
    run = models.ForeignKey(
        JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="suggestions"
    )
    model = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # A run suggests at most once per target, however often it is resumed.
            models.UniqueConstraint(
                fields=["run", "transcript", "question"],
                condition=Q(message_index__isnull=True),
                name="suggestion_once_per_transcript",
            ),
            models.UniqueConstraint(
                fields=["run", "transcript", "question", "message_index"],
                condition=Q(message_index__isnull=False),
                name="suggestion_once_per_message",
            ),
        ]
        indexes = [
            models.Index(fields=["transcript", "question"], name="suggestion_target_idx"),
        ]

    def __str__(self) -> str:
        return f"suggestion for {self.question} on {self.transcript_id}"


class ModelRequestPurpose(models.TextChoices):
    TEST = "test", "Test connection"
    REGENERATE = "regenerate", "Regenerate a turn"
    JUDGE = "judge", "Judge"


class ModelRequest(models.Model):
    """One request to a model, as it went: tokens in and out from the response's usage, how
    long it took, and the error when it failed. Costs per run and per dataset add these up."""

    connection = models.ForeignKey(
        ModelConnection, on_delete=models.CASCADE, related_name="requests"
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    purpose = models.CharField(max_length=16, choices=ModelRequestPurpose.choices)
    run = models.ForeignKey(
        JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="requests"
    )
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    ok = models.BooleanField(default=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["dataset", "created_at"], name="model_request_dataset_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.purpose} request to {self.connection_id}"
