"""The domain's refusals: each a ``DomainError`` with a stable ``code``, a human ``message``,
``details`` for clients, and the HTTP ``status`` the API answers with (one handler in
api/errors.py maps them all)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for the annotation only: errors import nothing of the domain
    from editor.importing import ImportReport


class DomainError(Exception):
    """A request the domain refuses (any area: content, permissions, workflow, queues,
    imports…), with a stable code and the HTTP status the API answers with."""

    code = "storage-error"
    status = 400

    def __init__(self, message: str, *, code: str | None = None, details: Any = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details


class InvalidContent(DomainError):
    code = "invalid-content"
    status = 422


class TranscriptTooLarge(InvalidContent):
    """More bytes or messages than one transcript may hold (``OCM_MAX_TRANSCRIPT_BYTES``,
    ``OCM_MAX_TRANSCRIPT_MESSAGES``): refused before it is parsed or stored, wherever it comes
    from (create, save, raw mode, import)."""

    code = "transcript-too-large"


class NotAllowed(DomainError):
    code = "forbidden"
    status = 403


class TranscriptNotFound(DomainError):
    code = "not-found"
    status = 404


class TranscriptDeleted(DomainError):
    code = "transcript-deleted"
    status = 410


class DuplicateExternalId(DomainError):
    code = "duplicate-external-id"
    status = 409

    def __init__(self, external_id: str):
        super().__init__(
            f"The dataset already has a transcript with the id {external_id!r} (perhaps a "
            "deleted one): give another id, or update that transcript.",
            details={"external_id": external_id},
        )


class ExportNotReady(DomainError):
    """A prepared export's file asked for before it exists (running, failed or removed)."""

    code = "export-not-ready"
    status = 409


class ConflictError(DomainError):
    """The transcript changed since ``expected_version`` was read.

    Carries the current version and the current snapshot so that a UI can show the other
    editor's version next to the user's own (which the caller still has): nothing is lost.
    """

    code = "version-conflict"
    status = 409

    def __init__(self, *, expected_version: int, current_version: int, current: dict):
        super().__init__(
            f"The transcript was changed by someone else (you edited version "
            f"{expected_version}, it is now at version {current_version}).",
            details={
                "expected_version": expected_version,
                "current_version": current_version,
                "current": current,
            },
        )
        self.expected_version = expected_version
        self.current_version = current_version
        self.current = current


# --- Labels and answers -------------------------------------------------------


class InvalidLabelSchema(InvalidContent):
    """A schema definition that does not hold; ``details`` lists each problem as
    ``{question, field, message}`` (question: its key, or ``#n`` when it has none)."""

    code = "invalid-label-schema"


class LabelSchemaExists(DomainError):
    code = "label-schema-exists"
    status = 409


class LabelSchemaChanged(DomainError):
    """A new version was asked for on top of a version that is no longer the current one."""

    code = "version-conflict"
    status = 409


class InvalidAnswer(InvalidContent):
    code = "invalid-annotation"


class LabelSchemaArchived(DomainError):
    code = "label-schema-archived"
    status = 409


class AnnotationExists(DomainError):
    """The annotator answered this question about this target already (update that one)."""

    code = "annotation-exists"
    status = 409


class AnnotationLocked(DomainError):
    """A write the annotation's state does not allow (deleting a submitted one, moving an
    orphan)."""

    code = "annotation-locked"
    status = 409


class MissingAnswers(InvalidContent):
    """Required questions left unanswered when handing an item in."""

    code = "answers-missing"


# --- Workflow -----------------------------------------------------------------


class TransitionRefused(DomainError):
    """A move the workflow does not allow from the transcript's status."""

    code = "transition-refused"
    status = 409


# --- Editing ------------------------------------------------------------------


class MessageNotFound(DomainError):
    code = "message-not-found"
    status = 404


class FixNotFound(DomainError):
    """The quick fix asked for is not offered by the transcript as it is now."""

    code = "fix-not-found"
    status = 409


class HasErrors(InvalidContent):
    """Raw-mode text with errors, saved without asking for a draft."""

    code = "has-errors"


# --- Imports ------------------------------------------------------------------


class ImportRejected(DomainError):
    """An all-or-nothing import found unreadable items and wrote nothing."""

    code = "import-rejected"
    status = 422

    def __init__(self, report: ImportReport):
        failures = report.failures
        first = failures[0]
        super().__init__(
            f"Nothing was imported: {len(failures)} item(s) could not be read; "
            f"first: {first.location}: {first.message}",
            details=report.to_dict(),
        )
        self.report = report


# --- Queues -------------------------------------------------------------------


class NoSuchAssignment(DomainError):
    code = "not-found"
    status = 404


# --- Datasets and members -----------------------------------------------------


class InvalidDataset(DomainError):
    code = "invalid-dataset"
    status = 422


class SlugTaken(DomainError):
    code = "slug-taken"
    status = 409


class UnknownUser(DomainError):
    code = "unknown-user"
    status = 422


class FilterNotAllowed(DomainError):
    """A list filtered by what the caller's role may not see (hidden parts, diagnostic codes,
    label answers): its answer would tell what the role is not shown."""

    code = "filter-not-allowed"
    status = 403


class InvalidUsername(DomainError):
    code = "invalid-username"
    status = 422


class NoSuchInvitation(DomainError):
    code = "not-found"
    status = 404


class AlreadyMember(DomainError):
    code = "already-member"
    status = 409


class NotAMember(DomainError):
    code = "not-a-member"
    status = 404


class InvalidRole(DomainError):
    code = "invalid-role"
    status = 422


class LastCurator(DomainError):
    code = "last-curator"
    status = 409


class NotATurn(InvalidContent):
    """An alternative or pairwise answer about a message that does not start an assistant
    turn (or a turn given as messages that are not one)."""

    code = "not-a-turn"


class AlternativeNotFound(DomainError):
    code = "not-found"
    status = 404


class AlternativeIsCurrent(DomainError):
    """Deleting the snapshot of a turn as the transcript holds it now: it would leave the
    turn's own content out of its comparisons."""

    code = "alternative-is-current"
    status = 409


class WebhookUrlRefused(InvalidContent):
    """A webhook URL that is not http(s), does not resolve, or resolves to an address the
    server must not call (loopback, private, link-local…: ``editor.webhooks.addresses``)."""

    code = "webhook-url-refused"


class WebhookNotFound(DomainError):
    code = "not-found"
    status = 404


class VersionNotFound(DomainError):
    code = "not-found"
    status = 404


class VersionNameTaken(DomainError):
    code = "version-name-taken"
    status = 409


class ModelCallFailed(DomainError):
    """A model server refused, failed or did not answer in time. ``details``: ``status_code``
    (the server's, None when it never answered), ``retryable`` (429, 5xx, timeouts, refused
    connections) and ``retry_after`` (seconds, from the server's Retry-After). The message
    says what the server answered, never the API key."""

    code = "model-call-failed"
    status = 502


class ModelConnectionNotFound(DomainError):
    code = "not-found"
    status = 404


class InvalidModelConnection(InvalidContent):
    """A model connection's fields refused (a base URL that is not http(s), an env var name
    that is not one, a key's value given instead of its variable's name …)."""

    code = "invalid-model-connection"


class ModelConnectionNameTaken(DomainError):
    code = "model-connection-name-taken"
    status = 409


class ModelConnectionInUse(DomainError):
    """A connection a judge still uses cannot be deleted."""

    code = "model-connection-in-use"
    status = 409


class InvalidTokenizer(InvalidContent):
    """A dataset tokenizer that cannot be set: an unknown kind or encoding, a tokenizer.json
    that the ``tokenizers`` library cannot read or that is too large, a bad context length."""

    code = "invalid-tokenizer"


class TokenizerNotSet(DomainError):
    code = "not-found"
    status = 404


class InvalidJudge(InvalidContent):
    """A judge that cannot be attached: an unknown question, a kind a model cannot answer here
    (span, pairwise), a question about each message, a prompt template without its
    placeholders, a connection of another dataset."""

    code = "invalid-judge"


class JudgeNotFound(DomainError):
    code = "not-found"
    status = 404


class JudgeRunNotFound(DomainError):
    code = "not-found"
    status = 404


class JudgeRunNotResumable(DomainError):
    """Only an ended run (failed, cancelled or finished with failures) is resumed; a running
    or queued one is left to finish."""

    code = "judge-run-not-resumable"
    status = 409


class SuggestionNotFound(DomainError):
    code = "not-found"
    status = 404


class UnreadableAnswer(DomainError):
    """A model's answer that names no value the question takes: a failure of that item."""

    code = "unreadable-answer"
    status = 502


class FileStoreUnavailable(DomainError):
    """The storage of uploads and prepared exports (a bucket: editor/filestore.py) could not
    be reached or refused the request: nothing was stored; the client may try again."""

    code = "file-storage-unavailable"
    status = 503
