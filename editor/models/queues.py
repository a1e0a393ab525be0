"""Review queues: their items and who is assigned which item."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import (
    Count,
    F,
    OuterRef,
    Q,
    Subquery,
)
from django.db.models.functions import Coalesce

from editor.models.datasets import Dataset
from editor.models.labels import LabelSchema
from editor.models.transcripts import Transcript


class ReviewQueueQuerySet(models.QuerySet):
    def with_progress(self) -> ReviewQueueQuerySet:
        """Each queue with ``item_count``, ``answers_needed`` (items times overlap) and
        ``answers_done`` (assignments submitted or approved), one subquery each."""

        items = (
            QueueItem.objects.filter(queue=OuterRef("pk"))
            .order_by()
            .values("queue")
            .annotate(n=Count("pk"))
            .values("n")
        )
        done = (
            QueueAssignment.objects.filter(
                item__queue=OuterRef("pk"),
                state__in=(AssignmentState.SUBMITTED, AssignmentState.APPROVED),
            )
            .order_by()
            .values("item__queue")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return self.annotate(
            item_count=Coalesce(Subquery(items), 0), answers_done=Coalesce(Subquery(done), 0)
        ).annotate(answers_needed=F("item_count") * F("overlap"))


class ReviewQueue(models.Model):
    """Work for annotators over a dataset filter: each item is done by ``overlap`` distinct
    annotators (each holds one of the item's places while working on it), then reviewed."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="queues")
    name = models.CharField(max_length=200)
    instructions = models.TextField(blank=True)
    # The filter the items were drawn with (status, spec, has_errors, text), kept to show it.
    filters = models.JSONField(default=dict, blank=True)
    overlap = models.PositiveSmallIntegerField(default=1)
    reservation_minutes = models.PositiveIntegerField(default=30)
    # Empty: every annotator of the dataset may work in the queue.
    assignees = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="assigned_queues"
    )
    # The schemas whose questions the queue asks, each at its current version (the version
    # every answer is given under: ``labels.annotations.create_annotation``). Empty: every
    # active schema of the dataset, as before queues could choose (``queues.queue_questions``).
    schemas = models.ManyToManyField(LabelSchema, blank=True, related_name="queues")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReviewQueueQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="queue_overlap_positive"),
            models.CheckConstraint(
                condition=Q(reservation_minutes__gte=1), name="queue_reservation_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def may_work(self, user) -> bool:
        """May ``user`` take items from this queue? Editors of the dataset, and only the
        assignees when the queue names some."""
        if not self.dataset.can_edit(user):
            return False
        assignees = self.assignees.all()
        return not assignees.exists() or assignees.filter(pk=user.pk).exists()


class QueueItem(models.Model):
    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="items")
    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="queue_items")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["queue", "position"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "transcript"], name="queue_item_unique"),
        ]
        # A claim walks a queue's items in order until one has a free place
        # (``queues._first_open_item``).
        indexes = [models.Index(fields=["queue", "position"], name="queue_item_position_idx")]

    def __str__(self) -> str:
        return f"{self.queue} #{self.position}"


class AssignmentState(models.TextChoices):
    # The moves between these are in editor/workflow.py (ASSIGNMENT_TRANSITIONS).
    CLAIMED = "claimed", "Claimed"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Expired"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class QueueAssignment(models.Model):
    """One annotator's turn at one item.

    ``slot`` is the place the assignment holds among the item's ``overlap`` places, 0 to
    overlap - 1, while it counts (claimed, submitted, approved, rejected); NULL once skipped or
    expired. The unique (item, slot) constraint is what keeps an item from going to more
    annotators than its overlap, on every database, however many claim at once.
    """

    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="queue_assignments"
    )
    state = models.CharField(
        max_length=16, choices=AssignmentState.choices, default=AssignmentState.CLAIMED
    )
    slot = models.PositiveSmallIntegerField(null=True, blank=True)
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    review_comment = models.TextField(blank=True)

    class Meta:
        ordering = ["item", "claimed_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "slot"], name="assignment_unique_slot"),
            models.UniqueConstraint(
                fields=["item", "annotator"], name="assignment_unique_annotator"
            ),
        ]
        indexes = [models.Index(fields=["annotator", "state"], name="assignment_annotator_idx")]

    def __str__(self) -> str:
        return f"{self.item} for {self.annotator} ({self.state})"
