"""What the client raises: the API's refusals, carrying its ``code``, and the failures of the
jobs it waits for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import ImportTask


class ApiError(Exception):
    """The server refused the request: its HTTP ``status`` and the error JSON's ``code``,
    ``message`` and ``details`` (docs/api.md, "Errors")."""

    def __init__(self, status: int | None, code: str, message: str, details: Any = None):
        super().__init__(f"{code}: {message}" if code else message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


class ImportFailed(ApiError):
    """An import ended ``failed``. ``code`` is the first failed item's (``invalid-json``,
    ``line-too-long``…), or ``import-failed`` when the import failed as a whole; ``task`` is
    the import with its report."""

    def __init__(self, task: ImportTask):
        failures = task.failures
        code = next((item["code"] for item in failures if item.get("code")), "import-failed")
        message = task.error or "The import failed."
        super().__init__(None, code, message, {"failures": failures})
        self.task = task


class TaskFailed(ApiError):
    """A background task (a bulk action) ended ``failed``; ``task`` is its last state."""

    def __init__(self, task: Any):
        super().__init__(None, "task-failed", task.error or "The task failed.", None)
        self.task = task


class VersionsUnavailable(ApiError):
    """The server has no dataset versions (its API has no version export route)."""

    def __init__(self):
        super().__init__(
            404, "versions-unavailable", "dataset versions are not available on this server"
        )
