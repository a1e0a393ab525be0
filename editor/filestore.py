"""Where task files live: uploads waiting for their import, exports prepared for download.

Both go through Django's storage API, two storages of the ``STORAGES`` setting: ``UPLOADS``
and ``EXPORTS``. By default each is a folder (``OCM_UPLOAD_DIR``, ``OCM_EXPORT_DIR``); when
``OCM_STORAGE_URL`` names a bucket (``s3://bucket/prefix``) both are django-storages' S3
backend, so a web worker and a task worker on different machines share no volume
(docs/deploy.md, "Object storage"). The settings build the two entries
(``ocm_site/storages.py``, which names this module's folder backend and ``editor.bucket``'s).

A task row keeps the storage name of its file (``ImportTask.upload_path``,
``ExportTask.file_path``). Rows written before the storages held absolute paths: an absolute
name is read and removed as a local file, so they still work without a migration.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages
from django.utils.http import content_disposition_header

from editor.errors import FileStoreUnavailable

logger = logging.getLogger(__name__)

# The two storages' names in ``STORAGES`` (ocm_site/storages.py builds them; a test checks
# the names agree).
UPLOADS = "ocm_uploads"
EXPORTS = "ocm_exports"


class SettingFolderStorage(FileSystemStorage):
    """A folder named by a setting, read whenever it is used (not once, as FileSystemStorage
    reads MEDIA_ROOT): tests and tools that change ``OCM_UPLOAD_DIR`` move the folder."""

    def __init__(self, setting: str, **options):
        super().__init__(**options)
        self.setting = setting

    @property
    def base_location(self) -> str:
        return os.fspath(getattr(settings, self.setting))

    @property
    def location(self) -> str:
        return os.path.abspath(self.base_location)


def uploads() -> Storage:
    return storages[UPLOADS]


def exports() -> Storage:
    return storages[EXPORTS]


def is_local(storage: Storage) -> bool:
    return isinstance(storage, FileSystemStorage)


# --- uploads ---------------------------------------------------------------------------------


def save_upload(stream: IO[bytes], name: str) -> str:
    """Store ``stream`` (a binary file named ``name`` by its sender) as a new upload; its
    storage name. Copied a chunk at a time (a multipart upload on S3), never read whole."""
    content = stream if hasattr(stream, "chunks") else File(stream)
    with _reaching("store the upload"):
        return uploads().save(f"import-{uuid.uuid4().hex}{_suffix(name)}", content)


@contextmanager
def open_upload(name: str) -> Iterator[IO[bytes]]:
    """The stored upload ``name``, open for reading and seekable (a zip or Parquet file is read
    from its end): a local file as it is; an object of the bucket downloaded to a spooled
    temporary file by the backend (memory up to ``spool_bytes``, then disk). Raises
    FileNotFoundError when it is gone."""
    with _open(uploads(), name) as file:
        yield file


def remove_upload(name: str) -> None:
    _remove(uploads(), name)


# --- exports ---------------------------------------------------------------------------------


def staging_dir() -> Path:
    """Where an export's file is written before it is stored: the exports folder itself when
    it is local (then stored by a rename), the temporary folder otherwise."""
    storage = exports()
    folder = Path(storage.location if is_local(storage) else _temporary_dir())
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def store_export(path: Path, name: str) -> str:
    """Store the complete file ``path`` (written in ``staging_dir()``) as the export ``name``;
    its storage name. Never visible half-written: renamed into the folder, or one upload to
    the bucket that exists only once complete. ``path`` is gone afterwards."""
    with open(path, "rb") as opened, _reaching("store the export"):
        name = exports().save(name, _LocalFile(opened, path))
    path.unlink(missing_ok=True)  # the rename took it already when local
    return name


def export_exists(name: str) -> bool:
    if os.path.isabs(name):
        return Path(name).is_file()
    with _reaching("find the export"):
        return exports().exists(name)


def open_export(name: str) -> IO[bytes]:
    """The stored export ``name``, open for reading (the caller closes it)."""
    if os.path.isabs(name):
        return open(name, "rb")
    with _reaching("read the export"):
        return exports().open(name, "rb")


def signed_url(name: str, *, filename: str, content_type: str) -> str | None:
    """A short-lived URL (``OCM_STORAGE_URL_EXPIRY`` seconds) that downloads the export
    ``name`` as ``filename``, where the backend signs URLs; None on a local folder (the app
    sends the file itself)."""
    storage = exports()
    if os.path.isabs(name) or not getattr(storage, "querystring_auth", False):
        return None
    with _reaching("sign the download"):
        return storage.url(
            name,
            parameters={
                "ResponseContentDisposition": content_disposition_header(True, filename),
                "ResponseContentType": content_type,
            },
            expire=settings.OCM_STORAGE_URL_EXPIRY,
        )


def remove_export(name: str) -> None:
    _remove(exports(), name)


# --- shared ----------------------------------------------------------------------------------


class _LocalFile(File):
    """A complete local file: FileSystemStorage moves it into place instead of copying it."""

    def __init__(self, opened: IO[bytes], path: Path):
        super().__init__(opened, name=path.name)
        self._path = path

    def temporary_file_path(self) -> str:
        return os.fspath(self._path)


@contextmanager
def _open(storage: Storage, name: str) -> Iterator[IO[bytes]]:
    # An absolute name is a task row written before the storages: a local file.
    if os.path.isabs(name):
        file = open(name, "rb")  # noqa: SIM115 (closed below)
    else:
        with _reaching("read the upload"):
            file = storage.open(name, "rb")
            file.seek(0)  # the bucket's backend downloads it now, while errors are ours
    with file:
        yield file


def _remove(storage: Storage, name: str) -> None:
    if not name:
        return
    if os.path.isabs(name):
        Path(name).unlink(missing_ok=True)
        return
    try:
        storage.delete(name)
    except (BotoCoreError, ClientError):
        # Left behind, not fatal: the bucket's lifecycle rule (docs/deploy.md) removes it.
        logger.warning("Could not remove %s from the file storage", name, exc_info=True)


@contextmanager
def _reaching(doing: str) -> Iterator[None]:
    """A bucket that cannot be reached, or refuses (credentials, permissions, no such
    bucket), is a FileStoreUnavailable (503), not a crash; a missing object stays the
    FileNotFoundError the backend raises."""
    try:
        yield
    except (BotoCoreError, ClientError):
        # The cause (endpoint, bucket, credentials) goes to the log, not to the client.
        logger.error("File storage: could not %s", doing, exc_info=True)
        raise FileStoreUnavailable(
            f"The file storage could not {doing}; nothing was changed. Try again later."
        ) from None


def _suffix(name: str) -> str:
    """The sender's extension, kept for whoever looks at the stored files; letters and digits
    only, so a name never carries a separator or a dot-dot."""
    suffix = os.path.splitext(name or "")[1][1:16]
    return f".{suffix}" if re.fullmatch(r"[A-Za-z0-9]+", suffix) else ""


def _temporary_dir() -> str:
    return settings.FILE_UPLOAD_TEMP_DIR or tempfile.gettempdir()
