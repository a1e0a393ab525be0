"""Adding transcripts: one (``create_transcript``) or many in a few statements
(``create_transcripts``, the importer's path), each with its first revision."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from editor import formats, tokens
from editor.db.bulk_insert import (
    NewRows,
    insert_new_rows,
    insert_rows,
    new_rows,
    saved_instances,
)
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
from editor.storage.message_rows import (
    message_values,
    rows_point_into_source,
    write_message_rows,
)
from editor.storage.save import content_fields, require

BATCH_SIZE = 500
FIRST_VERSION = Transcript._meta.get_field("version").default  # a new transcript's


@dataclass
class StoredRows:
    """A new transcript's content as the rows ``create_transcripts`` writes: the Transcript
    columns it fills (``content_fields``) and its Message rows (``message_values``). Plain
    values, made before the writing, possibly by another process (``editor.importing.
    preparing``) which sends them instead of the parse, whose objects cost more to send than
    to make again."""

    fields: dict
    messages: list[tuple]
    texts: list[tuple[str, str | None]]

    @classmethod
    def of(cls, content: TranscriptContent, spans: bool) -> StoredRows:
        """``spans``: the rows point into the source text (``message_values``)."""
        messages, texts = message_values(
            content.spec, content.canonical.messages, content.source_text, spans
        )
        return cls(content_fields(content), messages, texts)


@dataclass
class NewTranscript:
    """A transcript to create: its content parsed here, or only its ``stored`` rows (made
    elsewhere; the content is parsed again from their source text if anyone asks for it:
    ``parsed``)."""

    content: TranscriptContent | None
    title: str = ""
    metadata: dict = field(default_factory=dict)
    external_id: str = ""
    status: str = Status.DRAFT
    stored: StoredRows | None = None

    def parsed(self) -> TranscriptContent:
        if self.content is None:
            fields = self.stored.fields
            self.content = TranscriptContent.from_text(fields["source_text"], fields["spec"])
        return self.content

    def rows(self, spans: bool) -> StoredRows:
        if self.stored is None:
            self.stored = StoredRows.of(self.content, spans)
        return self.stored


def create_transcripts(
    dataset: Dataset, new: Sequence[NewTranscript], **options
) -> list[Transcript]:
    """Add transcripts in bulk: rows, messages and first revisions, a few queries per batch
    (``options``: those of ``transcripts_to_create``)."""
    return transcripts_to_create(dataset, new, **options).write()


@dataclass
class TranscriptsToCreate:
    """What ``create_transcripts`` writes, made and prepared for the database before it is
    written (``transcripts_to_create``): a caller that writes in short transactions (a staged
    import) makes the next batch while no write lock is held."""

    transcripts: NewRows
    stored: list[StoredRows]
    author_id: int | None
    kind: str
    note: str
    snapshot = Revision._meta.get_field("snapshot").packed(Revision.CURRENT)  # a first one's

    def write(self) -> list[Transcript]:
        """The rows inserted, in one transaction: the transcripts as saved instances."""
        return saved_instances(self.transcripts, self.write_rows())

    def write_rows(self) -> list[int]:
        """The rows inserted, in one transaction: the transcripts' pks, in order (no
        instances made: an import of 10,000 has no use for them)."""
        with transaction.atomic():
            pks = insert_new_rows(self.transcripts)
            write_message_rows(
                (pk, rows.messages, rows.texts) for pk, rows in zip(pks, self.stored, strict=True)
            )
            first = (self.kind, self.author_id, self.note, self.snapshot, timezone.now())
            insert_rows(
                Revision,
                ("transcript", "number", "kind", "author", "note", "snapshot", "created_at"),
                ((pk, FIRST_VERSION, *first) for pk in pks),
            )
        return pks


def transcripts_to_create(
    dataset: Dataset,
    new: Sequence[NewTranscript],
    *,
    author,
    kind: str = RevisionKind.CREATE,
    note: str = "",
    checked: bool = False,
    into: Dataset | None = None,
) -> TranscriptsToCreate:
    """The rows ``create_transcripts`` writes, checked, made and prepared, not written yet.

    ``checked``: the caller already ran ``check_storable`` on every item (the importer does,
    to report each item), so it is not run twice. ``into``: the rows go into this dataset
    instead (an import's staging dataset, moved into ``dataset`` once everything is written:
    ``editor.importing.staging``), counted under ``dataset``'s tokenizer all the same.
    """
    check_note(note)
    if not checked:
        for item in new:
            check_storable(
                item.parsed(),
                title=item.title,
                metadata=item.metadata,
                external_id=item.external_id,
            )
    # Counted in one batch (on the task worker, for an import): editor.tokens.
    tokenizer = tokens.setting_of(dataset.pk)
    counts = (
        tokens.counts_for(dataset.pk, [(item.parsed().canonical, 1) for item in new], tokenizer)
        if tokenizer is not None
        else [(None, None)] * len(new)
    )
    spans = rows_point_into_source()
    stored = [item.rows(spans) for item in new]
    transcripts = new_rows(
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
                **rows.fields,
            }
            for item, rows, (token_count, token_counts) in zip(new, stored, counts, strict=True)
        ],
    )
    author_id = None if author is None else author.pk
    return TranscriptsToCreate(transcripts, stored, author_id, kind, note)


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
