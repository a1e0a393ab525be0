"""Writing transcripts: the one path every change takes (editor, API, import, restore).

* ``save_transcript`` changes a transcript: compare-and-swap on ``version`` (a stale
  version gets ``ConflictError``, never a silent overwrite), messages replaced, diagnostics
  refreshed, a revision written, all in one transaction.
* ``create_transcripts`` adds new ones in bulk (the importer), ``create_transcript`` one.
* ``delete_transcript`` / ``undelete_transcript`` hide and bring back (soft delete), with a
  revision each.

Errors are ``DomainError`` subclasses carrying a stable ``code``, a human ``message`` and the
HTTP ``status`` the API answers with.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from editor import formats, tokens
from editor.errors import (
    ConflictError,
    DomainError,
    InvalidContent,
    NotAllowed,
    TranscriptDeleted,
    TranscriptNotFound,
)
from editor.labels.annotations import follow_edit
from editor.models import (
    Revision,
    RevisionKind,
    Transcript,
    contains_values,
)
from editor.models.revisions import snapshot, stored_snapshot
from editor.pairs import record_edit_pairs
from editor.storage.content import (
    TranscriptContent,
    canonical_from_input,
    check_note,
    check_storable,
    messages_from_input,
)
from editor.storage.message_rows import replace_messages
from editor.workflow import status_after_edit


def content_fields(content: TranscriptContent) -> dict:
    return {
        "spec": content.spec,
        "header": content.canonical.header,
        "attrs": content.canonical.attrs,
        "source_text": content.source_text,
        "source_is_exact": content.source_is_exact,
        "diagnostics": content.diagnostics,
        "error_count": content.error_count,
        "warning_count": content.warning_count,
        "message_count": len(content.canonical.messages),
        **contains_values(content.canonical.messages),
    }


def save_transcript(
    transcript: Transcript,
    *,
    expected_version: int,
    author,
    text: str | None = None,
    spec: str | None = None,
    canonical: formats.Transcript | dict | None = None,
    messages: Sequence[formats.Message | dict] | None = None,
    title: str | None = None,
    metadata: dict | None = None,
    note: str = "",
    kind: str = RevisionKind.EDIT,
    status: str | None = None,
) -> Transcript:
    """Change a transcript, if it is still at ``expected_version``; return it as saved.

    Give at most one of ``text`` (parsed in ``spec``, the transcript's own by default; the
    text is kept byte for byte), ``canonical`` (a whole canonical transcript) or
    ``messages`` (new messages, header kept); ``title`` / ``metadata`` replace theirs when
    given; so does ``status``. Only the bytes of edited messages change in the stored source
    text.

    Raises ``ConflictError`` when someone saved in between, ``TranscriptDeleted`` for a
    deleted transcript, ``NotAllowed`` when ``author`` may not edit the dataset (``None`` is
    the system: management commands), ``InvalidContent`` for bad input. Saving what is
    already stored writes nothing and returns the transcript unchanged.
    """
    if sum(x is not None for x in (text, canonical, messages)) > 1:
        raise InvalidContent(
            "Give at most one of text, canonical and messages.", code="invalid-request"
        )
    check_note(note)
    if author is not None:
        require(
            transcript.dataset.can_edit(author), "You may not edit transcripts of this dataset."
        )
    with transaction.atomic():
        current = _claim(transcript.pk, expected_version)
        if text is not None:
            content = TranscriptContent.from_text(text, spec or current.spec)
        elif canonical is not None or messages is not None:
            wanted = (
                canonical_from_input(canonical, spec=current.spec)
                if canonical is not None
                else formats.Transcript(
                    spec=current.spec,
                    header=current.header,
                    messages=messages_from_input(messages),
                    attrs=current.attrs,
                )
            )
            content = TranscriptContent.from_canonical(
                wanted, previous_text=current.source_text, previous_spec=current.spec
            )
        else:
            content = None
        new_title = current.title if title is None else title
        new_metadata = current.metadata if metadata is None else metadata
        stored = current.messages_at(expected_version) if content is not None else None
        content_changed = content is not None and not content.same_as(current, stored)
        if status is not None:
            new_status = status
        else:
            new_status = status_after_edit(current.status) if content_changed else current.status
        if (
            not content_changed
            and new_title == current.title
            and new_metadata == current.metadata
            and new_status == current.status
        ):
            transaction.set_rollback(True)  # give the claimed version back: nothing happened
            current.version = expected_version
            return current
        content = content if content_changed else None
        check_storable(
            content, title=new_title, metadata=new_metadata, external_id=current.external_id
        )
        return _write(
            current,
            content,
            title=new_title,
            metadata=new_metadata,
            author=author,
            note=note,
            kind=kind,
            status=new_status,
            stored=stored,
        )


def _claim(pk: int, expected_version: int) -> Transcript:
    """Move the row from ``expected_version`` to the next one, or raise: the compare-and-swap.

    The conditional UPDATE is atomic in the database (and holds the row lock until the
    transaction ends), so two saves from the same version cannot both pass.
    """
    claimed = Transcript.all_objects.filter(
        pk=pk, version=expected_version, deleted_at__isnull=True
    ).update(version=F("version") + 1)  # not expected_version + 1: that may overflow the column
    if not claimed:
        raise refusal(pk, expected_version)
    return Transcript.all_objects.select_related("dataset").get(pk=pk)


def refusal(pk: int, expected_version: int) -> DomainError:
    """Why transcript ``pk`` cannot be changed from ``expected_version``: gone, deleted, or
    changed since (a conflict carrying the current state)."""
    current = Transcript.all_objects.with_messages().filter(pk=pk).first()
    if current is None:
        return TranscriptNotFound("The transcript does not exist.")
    if current.is_deleted:
        return TranscriptDeleted("The transcript was deleted; undelete it first.")
    return ConflictError(
        expected_version=expected_version,
        current_version=current.version,
        current=snapshot(current),
    )


def _write(
    current: Transcript,
    content: TranscriptContent | None,
    *,
    title: str,
    metadata: dict,
    author,
    note: str,
    kind: str,
    deleted: bool | None = None,
    status: str | None = None,
    stored: Sequence[formats.Message] | None = None,
) -> Transcript:
    """Store the new state of a claimed transcript (``content`` None: messages unchanged;
    ``stored``: its messages as they are now, when the caller read them)."""
    # The revision that said "the transcript as it is now" gets its copy before anything
    # changes; the new one says it from here on (``Revision.CURRENT``).
    Revision.objects.filter(
        transcript_id=current.pk, number=current.version - 1, snapshot=Revision.CURRENT
    ).update(snapshot=stored_snapshot(current))
    now = timezone.now()
    changed = ["title", "metadata", "updated_at", "updated_by"]
    if status is not None:
        current.status = status
        changed.append("status")
    current.title = title
    current.metadata = metadata
    current.updated_by = author
    current.updated_at = now
    if deleted is not None:
        current.deleted_at = now if deleted else None
        current.deleted_by = author if deleted else None
        changed += ["deleted_at", "deleted_by"]
    if content is not None:
        # What the end user sees of a message depends on the spec: a new spec rewrites them all.
        respec = content.spec != current.spec
        old_source = current.source_text  # where the rows say their contents are, until now
        for name, value in content_fields(content).items():
            setattr(current, name, value)
        changed += list(content_fields(content))
        old_messages = current.stored_messages() if stored is None else stored
        replace_messages(
            current.pk,
            content.spec,
            old_messages,
            content.canonical.messages,
            respec=respec,
            old_source=old_source,
            new_source=content.source_text,
        )
        # Message and span annotations follow their messages (or are flagged, never lost).
        follow_edit(current.pk, old_messages, content.canonical.messages, content.spec)
        # Drop any prefetched rows so that canonical() reads the new ones.
        getattr(current, "_prefetched_objects_cache", {}).pop("messages", None)
        current.wrote_messages(content.canonical.messages)
    # Token counts follow the content, and stay current with the new version (editor.tokens).
    changed += tokens.keep_counts(current, content.canonical if content is not None else None)
    current.save(update_fields=changed)
    revision = Revision.objects.create(
        transcript=current,
        number=current.version,
        kind=kind,
        author=author,
        note=note,
        snapshot=Revision.CURRENT,
    )
    if content is not None:
        # An edit of an assistant message is a (rejected, chosen) pair (editor.pairs decides
        # which kinds of save are corrections).
        record_edit_pairs(
            current, old_messages, content.canonical.messages, revision, author, respec=respec
        )
    return current


def delete_transcript(
    transcript: Transcript, *, author, expected_version: int | None = None, note: str = ""
) -> Transcript:
    """Hide a transcript (reversible: ``undelete_transcript``); writes a revision.

    Editors of the dataset may delete; ``expected_version`` guards against deleting a
    version the user has not seen.
    """
    if author is not None:
        require(
            transcript.dataset.can_edit(author), "You may not delete transcripts of this dataset."
        )
    check_note(note)
    with transaction.atomic():
        current = _claim(
            transcript.pk, transcript.version if expected_version is None else expected_version
        )
        return _write(
            current,
            None,
            title=current.title,
            metadata=current.metadata,
            author=author,
            note=note,
            kind=RevisionKind.DELETE,
            deleted=True,
        )


def undelete_transcript(transcript: Transcript, *, author, note: str = "") -> Transcript:
    """Bring a deleted transcript back; only a curator of its dataset may."""
    if author is not None:
        require(transcript.dataset.can_curate(author), "Only a curator may undelete transcripts.")
    check_note(note)
    with transaction.atomic():
        # The same compare-and-swap as _claim, on a deleted row.
        claimed = Transcript.all_objects.filter(pk=transcript.pk, deleted_at__isnull=False).update(
            version=F("version") + 1
        )
        if not claimed:
            raise DomainError("The transcript is not deleted.", code="not-deleted")
        current = Transcript.all_objects.with_messages().get(pk=transcript.pk)
        return _write(
            current,
            None,
            title=current.title,
            metadata=current.metadata,
            author=author,
            note=note,
            kind=RevisionKind.UNDELETE,
            deleted=False,
        )


def require(allowed: bool, message: str) -> None:
    if not allowed:
        raise NotAllowed(message)
