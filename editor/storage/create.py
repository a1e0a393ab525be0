"""Adding transcripts: one (``create_transcript``) or many in a few statements
(``create_transcripts``, the importer's path), each with its first revision."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from editor import formats, tokens
from editor.db.bulk_insert import insert_new, insert_rows
from editor.errors import (
    DuplicateExternalId,
    InvalidContent,
)
from editor.models import (
    Dataset,
    Revision,
    RevisionKind,
    Status,
    Transcript,
)
from editor.storage.content import (
    TranscriptContent,
    canonical_from_input,
    check_note,
    check_storable,
)
from editor.storage.message_rows import insert_messages
from editor.storage.save import content_fields, require

BATCH_SIZE = 500


@dataclass
class NewTranscript:
    content: TranscriptContent
    title: str = ""
    metadata: dict = field(default_factory=dict)
    external_id: str = ""
    status: str = Status.DRAFT


def create_transcripts(
    dataset: Dataset,
    new: Sequence[NewTranscript],
    *,
    author,
    kind: str = RevisionKind.CREATE,
    note: str = "",
    checked: bool = False,
    into: Dataset | None = None,
) -> list[Transcript]:
    """Add transcripts in bulk: rows, messages and first revisions, a few queries per batch.

    ``checked``: the caller already ran ``check_storable`` on every item (the importer does,
    to report each item), so it is not run twice. ``into``: the rows go into this dataset
    instead (an import's staging dataset, moved into ``dataset`` once everything is written:
    ``editor.importing.staging``), counted under ``dataset``'s tokenizer all the same.
    """
    check_note(note)
    if not checked:
        for item in new:
            check_storable(
                item.content,
                title=item.title,
                metadata=item.metadata,
                external_id=item.external_id,
            )
    # Counted in one batch (on the task worker, for an import): editor.tokens.
    counts = tokens.counts_for(dataset.pk, [(item.content.canonical, 1) for item in new])
    with transaction.atomic():
        transcripts = insert_new(
            Transcript,
            [
                {
                    "dataset": into or dataset,
                    "title": item.title,
                    "external_id": item.external_id,
                    "metadata": item.metadata,
                    "status": item.status,
                    "created_by": author,
                    "updated_by": author,
                    "token_count": token_count,
                    "token_counts": token_counts,
                    **content_fields(item.content),
                }
                for item, (token_count, token_counts) in zip(new, counts, strict=True)
            ],
        )
        insert_messages(
            (
                transcript.pk,
                item.content.spec,
                item.content.canonical.messages,
                item.content.source_text,
            )
            for transcript, item in zip(transcripts, new, strict=True)
        )
        now = timezone.now()
        author_id = None if author is None else author.pk
        current = Revision._meta.get_field("snapshot").packed(Revision.CURRENT)
        insert_rows(
            Revision,
            ("transcript", "number", "kind", "author", "note", "snapshot", "created_at"),
            (
                (
                    transcript.pk,
                    transcript.version,
                    kind,
                    author_id,
                    note,
                    current,
                    now,
                )
                for transcript, item in zip(transcripts, new, strict=True)
            ),
        )
    return transcripts


def create_transcript(
    dataset: Dataset,
    *,
    author,
    text: str | None = None,
    canonical: formats.Transcript | dict | None = None,
    spec: str | None = None,
    title: str = "",
    metadata: dict | None = None,
    external_id: str = "",
    note: str = "",
) -> Transcript:
    """Add one transcript from ``text`` (spec detected unless given) or a canonical one."""
    require(
        dataset.can_edit(author) if author is not None else True,
        "You may not add transcripts to this dataset.",
    )
    if (text is None) == (canonical is None):
        raise InvalidContent("Give either text or canonical.", code="invalid-request")
    if text is not None:
        content = TranscriptContent.from_text(text, spec)
    else:
        content = TranscriptContent.from_canonical(canonical_from_input(canonical, spec=spec))
    new = NewTranscript(content, title=title, metadata=metadata or {}, external_id=external_id)
    # Checked before the id is looked up: PostgreSQL cannot even compare an unstorable id.
    check_storable(content, title=new.title, metadata=new.metadata, external_id=external_id)
    if external_id and _has_external_id(dataset, external_id):
        raise DuplicateExternalId(external_id)
    try:
        return create_transcripts(dataset, [new], author=author, note=note, checked=True)[0]
    except IntegrityError:
        # Another request created the same id between the look-up and the insert.
        if external_id and _has_external_id(dataset, external_id):
            raise DuplicateExternalId(external_id) from None
        raise


def _has_external_id(dataset: Dataset, external_id: str) -> bool:
    # Deleted transcripts keep their id (undeleting must not collide), so they count too.
    return Transcript.all_objects.filter(dataset=dataset, external_id=external_id).exists()
