"""A transcript's messages: one row each, every field of the canonical message."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.db import models

from editor import formats, search
from editor.db.compact_json import OrderedJSONField
from editor.db.message_text import content_at
from editor.formats.model import SCALAR_FIELDS, SEMANTIC_FIELDS
from editor.formats.render.visibility import visibility as end_user_visibility
from editor.models.fields import SHORT_FIELD_LENGTH

if TYPE_CHECKING:
    from editor.models.transcripts import Transcript

_EMPTY_TRANSCRIPTS = {spec: formats.Transcript(spec=spec) for spec in formats.SPEC_IDS}


class MessageQuerySet(models.QuerySet):
    """Search goes through ``editor.search``: the backend of the database these rows are in."""

    def containing(self, query: str, search_hidden: bool) -> MessageQuerySet:
        """Messages whose text has every word of ``query`` (case-insensitive). Without
        ``search_hidden``, only what the end user sees of each message is searched
        (``end_user_text``)."""
        return search.backend(self.db).containing(self, query, search_hidden)

    def probed_for(self, query: str, search_hidden: bool) -> MessageQuerySet:
        """The same messages as ``containing``, each one looked up in the search index: for
        a few messages (a transcript's, a page's)."""
        return search.backend(self.db).probed_for(self, query, search_hidden)

    def transcript_ids(self):
        """The transcripts of these messages, for ``pk__in``, found from the whole set of
        them first."""
        return search.backend(self.db).transcript_ids(self)


class Message(models.Model):
    """One message of a transcript: every field of the canonical ``formats.Message``.

    Optional fields are NULL when absent: the canonical model tells ``None`` from ``""``
    (an empty channel is not a missing one) and storage must not merge them.
    """

    # No index of its own: message_unique_index (transcript, index) starts with it.
    transcript = models.ForeignKey(
        "Transcript", on_delete=models.CASCADE, related_name="messages", db_index=False
    )
    index = models.PositiveIntegerField()
    role = models.CharField(max_length=SHORT_FIELD_LENGTH)
    # The content, or "" where the row says where it is in the transcript's source text
    # instead (``content_start`` … ``content_end``: ``editor.db.message_text``; on SQLite only,
    # PostgreSQL's search indexes read this column). Read ``content``: the text either way.
    stored_content = models.TextField(blank=True, db_column="content")
    content_start = models.PositiveIntegerField(null=True, blank=True)
    content_end = models.PositiveIntegerField(null=True, blank=True)
    content_escaped = models.BooleanField(null=True, blank=True)
    channel = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    recipient = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    name = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    call_id = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    intent = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    content_type = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    constrain = models.CharField(max_length=SHORT_FIELD_LENGTH, null=True, blank=True)  # noqa: DJ001
    end = models.CharField(max_length=16, null=True, blank=True)  # noqa: DJ001
    attrs = OrderedJSONField(default=dict, blank=True)
    # What the end user sees of ``content`` (editor.formats.render's end-user rendering),
    # kept by editor.storage for the text search of viewers: NULL when it is the whole
    # content (most messages: no second copy), "" when the message is hidden from end users.
    end_user_text = models.TextField(null=True, blank=True)  # noqa: DJ001

    CANONICAL_FIELDS = SEMANTIC_FIELDS
    # The columns ``canonical_of`` reads a message from: the canonical fields, the content
    # as stored (the text or where it is), attrs last.
    STORED_COLUMNS = (
        "role",
        "stored_content",
        "content_start",
        "content_end",
        "content_escaped",
        *SCALAR_FIELDS,
    )
    STORED_FIELDS = (*STORED_COLUMNS, "attrs")

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["transcript", "index"], name="message_unique_index")
        ]

    def __str__(self) -> str:
        return f"#{self.index} {self.role}"

    @property
    def content(self) -> str:
        if self.content_start is None:
            return self.stored_content
        return content_at(
            self.transcript.source_text, self.content_start, self.content_end, self.content_escaped
        )

    @content.setter
    def content(self, value: str) -> None:
        self.stored_content = value
        self.content_start = self.content_end = self.content_escaped = None

    @classmethod
    def from_canonical(cls, message: formats.Message, *, index: int, **kwargs) -> Message:
        values = {name: getattr(message, name) for name in cls.CANONICAL_FIELDS}
        values["content"] = values["content"] or ""
        values["attrs"] = dict(values["attrs"] or {})
        return cls(index=index, **values, **kwargs)

    @staticmethod
    def end_user_text_of(spec: str, message: formats.Message) -> str | None:
        """The ``end_user_text`` column of ``message`` in a transcript of ``spec``."""
        # visibility() reads only the transcript's spec: one empty transcript per spec, shared,
        # rather than one made per message (a tenth of an import's message rows).
        of_spec = _EMPTY_TRANSCRIPTS.get(spec) or formats.Transcript(spec=spec)
        seen = end_user_visibility(of_spec, message)
        if not seen.visible:
            return ""
        return None if seen.end_user_text == (message.content or "") else seen.end_user_text

    @staticmethod
    def canonical_of(
        values: Sequence, transcript: Transcript, *, attrs_as_text: bool = False
    ) -> formats.Message:
        """The canonical message of a row read as ``STORED_FIELDS`` (``attrs_as_text``: attrs
        as the column's JSON text, decoded only when it holds something, which is cheaper
        than the JSON field's converter on thousands of empty objects)."""
        role, stored, start, end, escaped = values[:5]
        content = (
            stored if start is None else content_at(transcript.source_text, start, end, escaped)
        )
        attrs = values[-1]
        if attrs_as_text:
            attrs = json.loads(attrs) if attrs and attrs != "{}" else {}
        # Positional: a message's fields start with SEMANTIC_FIELDS, in their order (built from
        # keywords, this was about a twentieth of a converted export's CPU).
        return formats.Message(role, content, *values[5:-1], attrs)

    def to_canonical(self) -> formats.Message:
        return formats.Message(**{name: getattr(self, name) for name in self.CANONICAL_FIELDS})


# The canonical fields between content and attrs (``Message.canonical_of``).
