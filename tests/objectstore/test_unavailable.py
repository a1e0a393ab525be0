"""A bucket out of reach (its server down): clear 503s and failed tasks, never a 500 or a task
stuck running."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from editor.exporting.tasks import run_export_task, start_export_task
from editor.importing.tasks import run_import_task, start_import_task
from editor.models import ImportTask, TaskStatus
from ocm_site.storages import task_storages
from tests.api.conftest import PREFIX as API
from tests.support.s3_server import free_port

from .test_imports import LINES

pytestmark = pytest.mark.django_db

UNAVAILABLE = "file-storage-unavailable"


def out_of_reach(settings, monkeypatch) -> None:
    """The storages point at a port where nothing listens (tried once, not retried)."""
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    endpoint = f"http://127.0.0.1:{free_port()}"
    settings.STORAGES = {
        **settings.STORAGES,
        **task_storages(settings.OCM_STORAGE_URL, endpoint=endpoint, spool_bytes=1024 * 1024),
    }


def test_an_api_upload_is_refused_with_503_and_nothing_queued(
    as_annotator, dataset, bucket, settings, monkeypatch
):
    out_of_reach(settings, monkeypatch)
    response = as_annotator.client.post(
        f"{API}/datasets/{dataset.slug}/imports",
        {"file": SimpleUploadedFile("a.jsonl", LINES.encode())},
        headers=as_annotator.headers,
    )
    assert response.status_code == 503
    assert response.json()["code"] == UNAVAILABLE
    assert "127.0.0.1" not in response.json()["message"]  # the endpoint stays in the log
    assert not ImportTask.objects.exists()


def test_the_import_form_says_so_with_a_503(
    client, annotator, dataset, bucket, settings, monkeypatch
):
    out_of_reach(settings, monkeypatch)
    client.force_login(annotator)
    response = client.post(
        f"/datasets/{dataset.slug}/import/",
        {"file": SimpleUploadedFile("a.jsonl", LINES.encode()), "on_conflict": "update"},
    )
    assert response.status_code == 503
    assert b"The file storage could not store the upload" in response.content
    assert not ImportTask.objects.exists()


def test_a_worker_that_cannot_reach_the_bucket_fails_the_import_and_says_why(
    annotator, dataset, bucket, settings, monkeypatch
):
    task = start_import_task(
        dataset=dataset, author=annotator, upload=io.BytesIO(LINES.encode()), name="a.jsonl"
    )
    out_of_reach(settings, monkeypatch)
    done = run_import_task(task.pk)
    assert done.status == TaskStatus.FAILED
    assert done.error.startswith("The file storage could not read the upload")


def test_an_export_that_cannot_be_stored_fails_and_its_download_is_503(
    as_annotator, annotator, dataset, bucket, settings, monkeypatch, client
):
    stored = start_export_task(dataset, annotator)
    assert run_export_task(stored.pk).status == TaskStatus.SUCCEEDED
    out_of_reach(settings, monkeypatch)

    unstored = start_export_task(dataset, annotator)
    with pytest.raises(Exception, match="could not store the export"):
        run_export_task(unstored.pk)
    unstored.refresh_from_db()
    assert unstored.status == TaskStatus.FAILED and not unstored.file_path

    response = as_annotator.get(f"/exports/{stored.pk}/download")
    assert response.status_code == 503 and response.json()["code"] == UNAVAILABLE
    client.force_login(annotator)
    assert client.get(f"/exports/{stored.pk}/download/").status_code == 503
