"""Revisions: every saved change of a transcript, with the state it saved."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.functional import cached_property

from editor import formats
from editor.db.compressed import CompressedJSONField
from editor.db.indexes import _where_set
from editor.models.transcripts import Transcript


class RevisionKind(models.TextChoices):
    CREATE = "create", "Created"
    IMPORT = "import", "Imported"
    EDIT = "edit", "Edited"
    RESTORE = "restore", "Restored"
    DELETE = "delete", "Deleted"
    UNDELETE = "undelete", "Undeleted"


class RevisionQuerySet(models.QuerySet):
    def for_transcript(self, transcript: Transcript) -> RevisionQuerySet:
        """Newest first, with authors; snapshots (the whole state, large on long
        transcripts) are read only when asked for."""
        return (
            self.filter(transcript=transcript)
            .select_related("author")
            .defer("snapshot")
            .order_by("-number")
        )


class HistoryBroken(Exception):
    """A transcript moved on from its newest revision without that revision's copy of the
    state being stored first: a write that bypassed ``editor.storage.save``. Never expected."""


class Revision(models.Model):
    """One saved state of a transcript: enough to show it, diff it and restore it.

    ``snapshot`` = {"transcript": canonical dict, "source_text", "title", "metadata"}, or
    the compact form (``compact``, below), or ``CURRENT`` for the newest revision.
    """

    # What the newest revision of a transcript holds instead of a copy of its state: that
    # state is the transcript's own row and messages until the next write, which stores the
    # copy here first (``editor.storage.save``). An imported dataset keeps its content once, not
    # once more in every first revision.
    CURRENT = {"current": True}

    # Not indexed alone: the unique (transcript, number) index begins with it.
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="revisions", db_index=False
    )
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=RevisionKind.choices, default=RevisionKind.EDIT)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # indexed where set: Meta.indexes
    )
    created_at = models.DateTimeField(auto_now_add=True)
    note = models.CharField(max_length=500, blank=True)
    # Compressed: a revision that is not the newest holds the whole source text it saved.
    snapshot = CompressedJSONField()

    objects = RevisionQuerySet.as_manager()

    class Meta:
        ordering = ["transcript", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["transcript", "number"], name="revision_unique_number")
        ]
        indexes = [*_where_set("revision", "author")]

    def __str__(self) -> str:
        return f"{self.transcript} r{self.number}"

    @cached_property
    def full_snapshot(self) -> dict:
        """``{title, metadata, source_text, transcript}``: the state this revision saved.

        A revision whose source text parsed to exactly its transcript stores the text and
        its spec only (``compact``, below); the transcript is that text parsed again. The
        newest revision (``CURRENT``) is the transcript as it is now.
        """
        stored = self._current_state() if self.snapshot.get("current") else self.snapshot
        if "transcript" in stored:
            return stored
        stored = dict(stored)
        spec = stored.pop("spec")
        parsed = formats.parse(stored["source_text"], spec).transcript
        return {**stored, "transcript": parsed.to_dict()}

    def _current_state(self) -> dict:
        transcript = Transcript.all_objects.get(pk=self.transcript_id)
        if transcript.version == self.number:
            return stored_snapshot(transcript)
        # A save moved the transcript on after this revision was read; it stored the copy.
        stored = Revision.objects.values_list("snapshot", flat=True).get(pk=self.pk)
        if stored.get("current"):
            raise HistoryBroken(
                f"Revision {self.number} of transcript {transcript.pk} lost its state"
            )
        return stored

    def canonical(self) -> formats.Transcript:
        return formats.Transcript.from_dict(self.full_snapshot["transcript"])


# The state a revision records of a transcript (its title, metadata, source text and
# canonical form), stored compactly when the text parses back to that form.


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
