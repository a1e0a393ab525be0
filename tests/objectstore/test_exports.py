"""Prepared exports kept in a bucket: written, stored whole, downloaded from a signed URL."""

from __future__ import annotations

import io
from urllib.parse import parse_qs, urlsplit

import httpx
import pyarrow.parquet as pq
import pytest

from editor.exporting.tasks import run_export_task, start_export_task
from editor.importing.tasks import start_import_task
from editor.membership import delete_dataset
from editor.models import ExportTask, TaskStatus
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

from .conftest import PREFIX

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(dataset, curator):
    for n in range(3):
        create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"T{n}"
        )


def prepared(api, slug: str, capture, **options) -> dict:
    with capture(execute=True):
        response = api.post(f"/datasets/{slug}/exports", options)
    assert response.status_code == 202, response.content
    task = api.get(f"/exports/{response.json()['id']}").json()
    assert task["status"] == "succeeded", task["error"]
    return task


def test_an_export_is_stored_in_the_bucket_and_downloaded_from_a_signed_url(
    as_annotator, dataset, stored, bucket, settings, django_capture_on_commit_callbacks
):
    task = prepared(as_annotator, dataset.slug, django_capture_on_commit_callbacks, spec="sharegpt")
    [key] = bucket.keys(f"{PREFIX}/exports/")
    assert key == f"{PREFIX}/exports/{ExportTask.objects.get().file_path}"
    assert not settings.OCM_EXPORT_DIR.exists() or not any(settings.OCM_EXPORT_DIR.iterdir())

    download = as_annotator.get(f"/exports/{task['id']}/download")
    assert download.status_code == 302
    signed = download["Location"]
    assert signed.startswith(f"{bucket.endpoint}/{bucket.name}/{key}?")
    query = parse_qs(urlsplit(signed).query)
    assert query["X-Amz-Expires"] == ["300"] and query["X-Amz-Signature"]

    fetched = httpx.get(signed)  # no token: the signature is the permission
    assert fetched.status_code == 200
    assert fetched.headers["content-disposition"] == (
        f'attachment; filename="{dataset.slug}-sharegpt.jsonl"'
    )
    assert fetched.headers["content-type"].startswith("application/x-ndjson")
    streamed = as_annotator.get(f"/datasets/{dataset.slug}/export", {"spec": "sharegpt"})
    assert fetched.content == b"".join(streamed.streaming_content)  # the same lines
    assert task["size_bytes"] == len(fetched.content) == len(bucket.read(key))


def test_the_signed_url_lives_as_long_as_the_setting_says(
    as_annotator, dataset, stored, bucket, settings, django_capture_on_commit_callbacks
):
    settings.OCM_STORAGE_URL_EXPIRY = 42
    task = prepared(as_annotator, dataset.slug, django_capture_on_commit_callbacks)
    signed = as_annotator.get(f"/exports/{task['id']}/download")["Location"]
    assert parse_qs(urlsplit(signed).query)["X-Amz-Expires"] == ["42"]


def test_the_export_page_download_redirects_to_the_bucket_too(
    client, annotator, dataset, stored, bucket
):
    task = start_export_task(dataset, annotator, file_format="parquet")
    assert run_export_task(task.pk).status == TaskStatus.SUCCEEDED
    client.force_login(annotator)
    response = client.get(f"/exports/{task.pk}/download/")
    assert response.status_code == 302
    fetched = httpx.get(response["Location"])
    assert fetched.headers["content-type"] == "application/vnd.apache.parquet"
    assert pq.read_table(io.BytesIO(fetched.content)).num_rows == 3


def test_an_export_removed_from_the_bucket_is_409_not_a_broken_link(
    as_annotator, dataset, stored, bucket, django_capture_on_commit_callbacks
):
    task = prepared(as_annotator, dataset.slug, django_capture_on_commit_callbacks)
    for key in bucket.keys(f"{PREFIX}/exports/"):
        bucket.client.delete_object(Bucket=bucket.name, Key=key)
    response = as_annotator.get(f"/exports/{task['id']}/download")
    assert response.status_code == 409
    assert response.json()["code"] == "export-not-ready"


def test_an_export_that_fails_leaves_nothing_in_the_bucket(
    dataset, curator, stored, bucket, settings, monkeypatch
):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("editor.exporting.DatasetExport._line", broken)
    task = start_export_task(dataset, curator)
    with pytest.raises(RuntimeError):
        run_export_task(task.pk)
    assert ExportTask.objects.get().status == TaskStatus.FAILED
    assert bucket.keys() == []


def test_deleting_the_dataset_removes_its_exports_and_waiting_uploads_from_the_bucket(
    dataset, curator, stored, bucket
):
    done = start_export_task(dataset, curator)
    run_export_task(done.pk)
    start_import_task(dataset=dataset, author=curator, upload=io.BytesIO(b"{}"), name="x.json")
    assert len(bucket.keys(f"{PREFIX}/exports/")) == len(bucket.keys(f"{PREFIX}/uploads/")) == 1
    delete_dataset(dataset, author=curator)
    assert bucket.keys() == []
