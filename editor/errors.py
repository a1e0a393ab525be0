"""The domain's refusals: each a ``StorageError`` with a stable ``code``, a human ``message``,
``details`` for clients, and the HTTP ``status`` the API answers with (one handler in
api/errors.py maps them all)."""

from __future__ import annotations

from typing import Any


class StorageError(Exception):
    """A request the storage layer refuses, with a stable code and an HTTP status."""

    code = "storage-error"
    status = 400

    def __init__(self, message: str, *, code: str | None = None, details: Any = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details


class InvalidContent(StorageError):
    code = "invalid-content"
    status = 422


class NotAllowed(StorageError):
    code = "forbidden"
    status = 403


class TranscriptNotFound(StorageError):
    code = "not-found"
    status = 404


class TranscriptDeleted(StorageError):
    code = "transcript-deleted"
    status = 410


class DuplicateExternalId(StorageError):
    code = "duplicate-external-id"
    status = 409

    def __init__(self, external_id: str):
        super().__init__(
            f"The dataset already has a transcript with the id {external_id!r} (perhaps a "
            "deleted one): give another id, or update that transcript.",
            details={"external_id": external_id},
        )


class ExportNotReady(StorageError):
    """A prepared export's file asked for before it exists (running, failed or removed)."""

    code = "export-not-ready"
    status = 409


class ConflictError(StorageError):
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
