"""Preference data: alternatives of an assistant turn and (chosen, rejected) pairs.

An *alternative* is one completion of a turn: the messages that could stand at
``message_index`` and after it, until the turn ends, given the messages before it as the
prompt. A turn's alternatives are immutable snapshots (their messages never change; a new
completion is a new row): the transcript's own turn as it stood when the turn got
alternatives (``source="transcript"``), imported ones, ones added by hand and ones a model
wrote (``generation`` says which model, with which options and usage). Pairwise questions
compare them by id.

A *preference pair* records a judgement that one completion beats another for the same
prompt, as it was: each edit of an assistant message (``source="edit"``: the message
before is rejected, the one after chosen), and each pair imported from a preference data
set (``source="import"``). Pairs from pairwise answers are not stored: they are read from
the answers when exported or listed (``editor.pairs``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from editor.db.compressed import CompressedJSONField
from editor.models.revisions import Revision
from editor.models.transcripts import Transcript


class AlternativeSource(models.TextChoices):
    TRANSCRIPT = "transcript", "The transcript's own turn"
    IMPORT = "import", "Imported"
    HAND = "hand", "Added by hand"
    MODEL = "model", "Written by a model"


class Alternative(models.Model):
    """One completion of the turn starting at ``message_index`` (``messages``: canonical
    message dicts, ``formats.canonical`` form). ``content_hash`` (SHA-256 of the compact
    canonical JSON of ``messages``) keeps a turn from holding the same completion twice."""

    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="alternatives", db_index=False
    )
    message_index = models.PositiveIntegerField()
    messages = CompressedJSONField()
    content_hash = models.CharField(max_length=64)
    source = models.CharField(max_length=16, choices=AlternativeSource.choices)
    note = models.CharField(max_length=500, blank=True)
    # For source="model": {"model", "options", "usage", "connection"} (the model-assisted
    # annotation issue); empty otherwise.
    generation = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "message_index", "content_hash"],
                name="alternative_unique_content",
            )
        ]

    def __str__(self) -> str:
        return f"alternative {self.pk} of message {self.message_index} of {self.transcript_id}"


class PairSource(models.TextChoices):
    EDIT = "edit", "An edit"
    IMPORT = "import", "Imported"


class PreferencePairQuerySet(models.QuerySet):
    def included(self) -> PreferencePairQuerySet:
        return self.filter(excluded_at__isnull=True)


class PreferencePair(models.Model):
    """A (prompt, chosen, rejected) triple as it was when recorded: message lists in the
    canonical dict form, the prompt being every message before ``message_index``.

    ``revision`` is the revision an edit made (None for imports). ``excluded_at`` set: left
    out of exports (one by one, by a curator or the pair's author), kept for the record.
    """

    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="preference_pairs", db_index=False
    )
    message_index = models.PositiveIntegerField()
    source = models.CharField(max_length=16, choices=PairSource.choices)
    prompt = CompressedJSONField()
    chosen = CompressedJSONField()
    rejected = CompressedJSONField()
    revision = models.ForeignKey(
        Revision, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    excluded_at = models.DateTimeField(null=True, blank=True)
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    objects = PreferencePairQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["transcript", "created_at"], name="pair_transcript_idx"),
        ]

    def __str__(self) -> str:
        return f"pair {self.pk} at message {self.message_index} of {self.transcript_id}"
