"""The ``STORAGES`` entries of the two task storages (uploads waiting for their import, exports
prepared for download), read from ``OCM_STORAGE_URL``: the settings build them here, importing
nothing of the app (the backends are named by their dotted paths; Django imports one when the
storage is first used). ``editor.filestore`` uses the storages by the same two names.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

UPLOADS = "ocm_uploads"
EXPORTS = "ocm_exports"

S3_BACKEND = "editor.bucket.OnePartAtATimeS3Storage"
FOLDER_BACKEND = "editor.filestore.SettingFolderStorage"


def task_storages(url: str, *, endpoint: str | None = None, spool_bytes: int) -> dict:
    """The ``STORAGES`` entries of the two task storages: folders when ``url`` is empty (the
    ``OCM_UPLOAD_DIR`` and ``OCM_EXPORT_DIR`` settings, read whenever used), the S3 backend on
    ``s3://bucket/prefix`` otherwise (``uploads/`` and ``exports/`` under the prefix).
    ``endpoint``: an S3-compatible server's URL (None: boto3's own, which reads
    ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``); credentials and region are boto3's too
    (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_DEFAULT_REGION``…).
    ``spool_bytes``: past this size a file read from the bucket is spooled to a local
    temporary file instead of memory."""
    if not url:
        return {
            UPLOADS: {"BACKEND": FOLDER_BACKEND, "OPTIONS": {"setting": "OCM_UPLOAD_DIR"}},
            EXPORTS: {"BACKEND": FOLDER_BACKEND, "OPTIONS": {"setting": "OCM_EXPORT_DIR"}},
        }
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
        raise ImproperlyConfigured(
            f"OCM_STORAGE_URL must look like s3://bucket/prefix (the prefix is optional), "
            f"not {url!r}."
        )
    prefix = parts.path.strip("/")
    options = {
        "bucket_name": parts.netloc,
        "endpoint_url": endpoint or None,
        # The backend downloads a file it opens; past this it goes to disk, not memory.
        "max_memory_size": spool_bytes,
        # Objects are private: a download is a signed URL (``filestore.signed_url``).
        "default_acl": None,
        "querystring_auth": True,
        "signature_version": "s3v4",  # what every S3-compatible server accepts now
        # Names are fresh uuids: no need to ask the bucket whether one is taken.
        "file_overwrite": True,
    }
    return {
        store: {
            "BACKEND": S3_BACKEND,
            "OPTIONS": {**options, "location": f"{prefix}/{folder}".lstrip("/")},
        }
        for store, folder in ((UPLOADS, "uploads"), (EXPORTS, "exports"))
    }
