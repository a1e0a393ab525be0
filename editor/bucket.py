"""The S3 backend of the task storages (``editor.filestore``), in a module of its own so that
boto3's transfer machinery (a tenth of a second to import) is loaded only where
``OCM_STORAGE_URL`` names a bucket: Django imports a storage's backend when first used."""

from __future__ import annotations

from boto3.s3.transfer import TransferConfig
from storages.backends.s3 import S3Storage


class OnePartAtATimeS3Storage(S3Storage):
    """django-storages' S3 backend moving one part of a file at a time: about 10 MB of memory
    per upload or download instead of ~90 MB with boto3's ten threads, for a fifth less speed
    (docs/performance.md, "Task files in object storage")."""

    def get_default_settings(self) -> dict:
        return {
            **super().get_default_settings(),
            "transfer_config": TransferConfig(use_threads=False),
        }
