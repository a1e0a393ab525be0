"""Background tasks the app tracks (imports, exports, bulk actions) and the workers running them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from editor.models.datasets import Dataset
from editor.models.fields import SPEC_CHOICES

# How often a page showing an unfinished task asks for it again (seconds): see
# ``TrackedTask.seconds_to_next_look``.
LOOK_FIRST = 0.2
LOOK_LONGEST = 1.0
LOOK_SHORTEST = 0.1


class TaskStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class TrackedTask(models.Model):
    """What the app knows of one background task, readable from every web worker.

    The task itself runs on django-tasks (``tasks.py`` beside the code it runs); this row holds its progress,
    which a heartbeat thread of the worker running it writes every few seconds, and its
    outcome. ``editor.background`` recovers the rows whose worker died (queued again, then
    failed).
    """

    status = models.CharField(
        max_length=16, choices=TaskStatus.choices, default=TaskStatus.QUEUED, db_index=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # "host:pid" of the worker process running it, so that a dead one can be told.
    worker = models.CharField(max_length=128, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    progress = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED)

    def seconds_to_next_look(self, progress: dict | None = None, now=None) -> float:
        """How long a page showing this unfinished task waits before asking for it again.

        Soon at first, then less and less often, up to once a second for a task of minutes
        (every page polled once a second: a 3 s import was seen ended up to a second late).
        A task whose ``progress`` tells how far it is (``percent``, and ``seconds_left`` where
        the task can tell it) is asked for around its expected end, and often once it has
        read everything (100 % but not ended: its last writes)."""
        since = self.started_at or self.created_at
        elapsed = max(0.0, ((now or timezone.now()) - since).total_seconds()) if since else 0.0
        backoff = min(LOOK_LONGEST, LOOK_FIRST + elapsed / 8)
        percent = (progress or {}).get("percent")
        if self.status != TaskStatus.RUNNING or not percent:
            return backoff
        if percent >= 100:
            return LOOK_FIRST
        remaining = progress.get("seconds_left")
        if remaining is None:
            remaining = elapsed * (100 - percent) / percent
        return max(LOOK_SHORTEST, min(backoff, remaining))


class ImportTask(TrackedTask):
    """One import started from the UI or the API, run by a task worker.

    The uploaded file waits in the uploads storage (``editor.filestore``; ``upload_path`` is
    its storage name) until the task ends; the final report is stored here.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="import_tasks")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    source_name = models.CharField(max_length=255)
    spec = models.CharField(max_length=32, choices=SPEC_CHOICES, blank=True)
    on_conflict = models.CharField(max_length=16, default="update")
    partial = models.BooleanField(default=False)
    # How rows are read ("" lets the importer decide; "preference" or "hh": every row a
    # transcript with its chosen and rejected answers, editor/importing/preference.py)
    shape = models.CharField(max_length=16, blank=True)
    upload_path = models.CharField(max_length=1024, blank=True)
    report = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import of {self.source_name} into {self.dataset}"


class ExportTask(TrackedTask):
    """An export of a dataset prepared as a file by a task worker, to download when done.

    ``options`` are those of ``editor.exporting.export_dataset`` (spec, format, statuses,
    audience, with_annotations); the file waits in the exports storage (``editor.filestore``;
    ``file_path`` is its storage name).
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="export_tasks")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    options = models.JSONField(default=dict, blank=True)
    file_name = models.CharField(max_length=255)
    file_path = models.CharField(max_length=1024, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    transcript_count = models.PositiveIntegerField(default=0)
    # {"loss_count": N, "summary": {field: {"transcripts": n, "example": detail}},
    #  "losses": [the first MAX_KEPT_LOSSES losses, each naming its transcript]}
    losses = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"export of {self.dataset} as {self.file_name}"


class BulkTask(TrackedTask):
    """A bulk action on a large selection of a dataset's transcripts, run by a task worker
    (``editor.bulk``): the same one transaction as a small selection's, outside the request.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="bulk_tasks")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    action = models.CharField(max_length=32)
    params = models.JSONField(default=dict, blank=True)
    transcript_ids = models.JSONField(default=list, blank=True)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.action} on {len(self.transcript_ids)} transcripts of {self.dataset}"


class TaskWorker(models.Model):
    """A task worker process, as last seen: what ``/healthz`` checks the queue by."""

    worker_id = models.CharField(max_length=128, primary_key=True)
    started_at = models.DateTimeField(auto_now_add=True)
    seen_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.worker_id
