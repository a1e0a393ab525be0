"""The states a transcript and an annotation can be in (the moves between a transcript's
states are ``editor.workflow``'s)."""

from __future__ import annotations

from django.db import models


class Status(models.TextChoices):
    # The transitions between these belong to the review workflow (editor/workflow.py).
    DRAFT = "draft", "Draft"
    IN_REVIEW = "in_review", "In review"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class AnnotationState(models.TextChoices):
    DRAFT = "draft", "Draft"
    SUBMITTED = "submitted", "Submitted"
