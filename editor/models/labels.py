"""Label schemas (versioned) and the annotations answering them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from editor.models.datasets import Dataset
from editor.models.states import AnnotationState
from editor.models.transcripts import Transcript


class LabelSchemaQuerySet(models.QuerySet):
    def active(self) -> LabelSchemaQuerySet:
        return self.filter(archived_at__isnull=True)

    def archived(self) -> LabelSchemaQuerySet:
        return self.filter(archived_at__isnull=False)

    def with_current_version(self) -> LabelSchemaQuerySet:
        return self.select_related("current_version", "current_version__created_by")


class LabelSchema(models.Model):
    """A named set of questions of a dataset, written by its curators.

    Its content lives in versions (``LabelSchemaVersion``), never rewritten: a change makes a
    new one and becomes ``current_version``; answers keep the version they were given under.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="label_schemas")
    name = models.CharField(max_length=200)
    # Set in the transaction that creates the first version; null only inside it.
    current_version = models.OneToOneField(
        "LabelSchemaVersion", on_delete=models.RESTRICT, null=True, related_name="+"
    )
    archived_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = LabelSchemaQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="label_schema_unique_name")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None


class LabelSchemaVersion(models.Model):
    """One version of a schema: its questions (as ``editor.labels.SchemaDefinition`` checks
    and normalizes them) and its instructions (markdown, rendered by the UI)."""

    schema = models.ForeignKey(LabelSchema, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    instructions = models.TextField(blank=True)
    questions = models.JSONField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["schema", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["schema", "number"], name="label_schema_version_unique_number"
            )
        ]

    def __str__(self) -> str:
        return f"{self.schema_id} v{self.number}"


class AnchorState(models.TextChoices):
    # Where a message or span annotation points after edits (editor.labels.annotations.follow_edit).
    OK = "ok", "Anchored"
    FLAGGED = "flagged", "Flagged for review"  # its text changed: offsets kept, to be checked
    ORPHANED = "orphaned", "Orphaned"  # its message was deleted


class AnnotationQuerySet(models.QuerySet):
    def readable_by(self, user, dataset: Dataset) -> AnnotationQuerySet:
        """Everyone's for reviewers and curators of ``dataset``, one's own for annotators,
        none for anyone else."""
        if dataset.can_review(user):
            return self
        if dataset.can_edit(user):
            return self.filter(annotator=user)
        return self.none()

    def anchored(self) -> AnnotationQuerySet:
        """Annotations that point at a message now (orphans point nowhere)."""
        return self.filter(message_index__isnull=False).exclude(anchor_state=AnchorState.ORPHANED)


class Annotation(models.Model):
    """One annotator's answer to one question of a schema version, about a transcript, one of
    its messages (``message_index``) or a span of that message's logical text
    (``start``/``end``, with the ``text`` they covered when it was given)."""

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="annotations")
    # RESTRICT: no schema change deletes a given answer; only deleting the whole dataset (which
    # takes its transcripts, and so their answers, along) removes a version that has some.
    schema_version = models.ForeignKey(
        LabelSchemaVersion, on_delete=models.RESTRICT, related_name="annotations"
    )
    question = models.CharField(max_length=64)
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotations"
    )
    message_index = models.PositiveIntegerField(null=True, blank=True)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    text = models.TextField(blank=True)
    value = models.JSONField()
    state = models.CharField(
        max_length=16, choices=AnnotationState.choices, default=AnnotationState.DRAFT
    )
    anchor_state = models.CharField(
        max_length=16, choices=AnchorState.choices, default=AnchorState.OK
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    objects = AnnotationQuerySet.as_manager()

    class Meta:
        ordering = ["transcript", "pk"]
        indexes = [
            models.Index(fields=["transcript", "message_index"], name="annotation_message_idx"),
            models.Index(fields=["schema_version", "question"], name="annotation_question_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.question} on {self.transcript_id} by {self.annotator_id}"

    @property
    def target(self) -> str:
        """``transcript``, ``message`` or ``span``: what the annotation is about."""
        if self.start is not None:
            return "span"
        return "message" if self.message_index is not None else "transcript"

    def readable_by(self, user) -> bool:
        """As ``AnnotationQuerySet.readable_by``, for one annotation."""
        dataset = self.transcript.dataset
        return dataset.can_review(user) or (dataset.can_edit(user) and self.annotator_id == user.pk)
