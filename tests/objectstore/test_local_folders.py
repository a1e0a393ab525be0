"""The default: both storages are local folders (OCM_UPLOAD_DIR, OCM_EXPORT_DIR); and task
rows written before the storages, which hold absolute paths, still work."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from editor import filestore
from editor.bucket import OnePartAtATimeS3Storage
from editor.exporting.tasks import run_export_task, start_export_task
from editor.importing.tasks import run_import_task, start_import_task
from editor.models import ExportTask, ImportTask, TaskStatus, Transcript
from ocm_site import storages as ocm_storages

from .test_imports import LINES

pytestmark = pytest.mark.django_db


def test_without_a_bucket_uploads_and_exports_are_files_in_their_folders(
    annotator, dataset, settings, tmp_path
):
    settings.OCM_UPLOAD_DIR = tmp_path / "uploads"
    settings.OCM_EXPORT_DIR = tmp_path / "exports"
    task = start_import_task(
        dataset=dataset, author=annotator, upload=io.BytesIO(LINES.encode()), name="a.jsonl"
    )
    assert (tmp_path / "uploads" / task.upload_path).read_text() == LINES
    assert run_import_task(task.pk).status == TaskStatus.SUCCEEDED
    assert list((tmp_path / "uploads").iterdir()) == []

    export = run_export_task(start_export_task(dataset, annotator).pk)
    assert [path.name for path in (tmp_path / "exports").iterdir()] == [export.file_path]
    assert filestore.signed_url(export.file_path, filename="x", content_type="y") is None


def test_an_import_queued_before_the_storages_is_read_from_its_absolute_path(
    annotator, dataset, tmp_path
):
    legacy = tmp_path / "import-old.jsonl"
    legacy.write_text(LINES)
    task = ImportTask.objects.create(
        dataset=dataset, created_by=annotator, source_name="old.jsonl", upload_path=str(legacy)
    )
    assert run_import_task(task.pk).status == TaskStatus.SUCCEEDED
    assert Transcript.objects.count() == 3
    assert not legacy.exists()  # removed once imported, as before


def test_an_export_prepared_before_the_storages_is_downloaded_from_its_absolute_path(
    client, annotator, dataset, tmp_path
):
    legacy = tmp_path / "export-old.jsonl"
    legacy.write_text('{"old": true}\n')
    task = ExportTask.objects.create(
        dataset=dataset,
        created_by=annotator,
        options={"spec": None, "format": "jsonl", "statuses": [], "audience": None},
        file_name="old.jsonl",
        file_path=str(legacy),
        status=TaskStatus.SUCCEEDED,
    )
    client.force_login(annotator)
    response = client.get(f"/exports/{task.pk}/download/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b'{"old": true}\n'
    filestore.remove_export(task.file_path)
    assert not legacy.exists()


@pytest.mark.parametrize(
    "url", ["bucket", "s3://", "gs://bucket/prefix", "s3://bucket/prefix?region=x"]
)
def test_a_storage_url_that_names_no_bucket_is_refused_at_start(url):
    with pytest.raises(ImproperlyConfigured, match="s3://bucket/prefix"):
        ocm_storages.task_storages(url, spool_bytes=1)


def test_the_settings_and_the_filestore_name_the_same_two_storages(settings):
    assert (filestore.UPLOADS, filestore.EXPORTS) == (ocm_storages.UPLOADS, ocm_storages.EXPORTS)
    assert {filestore.UPLOADS, filestore.EXPORTS} <= set(settings.STORAGES)
    # The settings name the backends by their paths, importing nothing of the app.
    assert import_string(ocm_storages.FOLDER_BACKEND) is filestore.SettingFolderStorage
    assert import_string(ocm_storages.S3_BACKEND) is OnePartAtATimeS3Storage


def test_the_bucket_holds_uploads_and_exports_under_the_prefix():
    built = ocm_storages.task_storages("s3://my-bucket/ocm/prod/", spool_bytes=7)
    uploads, exports = built[filestore.UPLOADS], built[filestore.EXPORTS]
    assert uploads["BACKEND"] == exports["BACKEND"] == "editor.bucket.OnePartAtATimeS3Storage"
    assert uploads["OPTIONS"]["bucket_name"] == "my-bucket"
    assert (uploads["OPTIONS"]["location"], exports["OPTIONS"]["location"]) == (
        "ocm/prod/uploads",
        "ocm/prod/exports",
    )
    assert uploads["OPTIONS"]["max_memory_size"] == 7
    assert (
        ocm_storages.task_storages("s3://b", spool_bytes=1)[filestore.UPLOADS]["OPTIONS"][
            "location"
        ]
        == "uploads"
    )


def test_an_upload_keeps_only_a_harmless_extension():
    assert filestore._suffix("batch.JSONL") == ".JSONL"
    assert filestore._suffix("weird.js on") == ""
    assert filestore._suffix("no-extension") == ""
