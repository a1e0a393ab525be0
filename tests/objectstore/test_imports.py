"""Imports whose upload waits in a bucket: the whole flow from the API to the worker."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from editor import filestore
from editor.importing.tasks import run_import_task, start_import_task
from editor.models import ImportTask, TaskStatus, Transcript
from tests.api.conftest import PREFIX as API

from .conftest import PREFIX

pytestmark = pytest.mark.django_db

LINES = "".join(
    json.dumps({"id": f"t{n}", "messages": [{"role": "user", "content": f"hello {n}"}]}) + "\n"
    for n in range(3)
)


def upload(api, slug: str, content: bytes, name: str = "batch.jsonl"):
    return api.client.post(
        f"{API}/datasets/{slug}/imports",
        {"file": SimpleUploadedFile(name, content)},
        headers=api.headers,
    )


def test_an_api_upload_lands_in_the_bucket_is_imported_and_then_removed(
    as_annotator, dataset, bucket, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = upload(as_annotator, dataset.slug, LINES.encode())
    assert response.status_code == 202, response.content
    task = ImportTask.objects.get(pk=response.json()["id"])
    key = f"{PREFIX}/uploads/{task.upload_path}"
    assert bucket.keys(f"{PREFIX}/uploads/") == [key]
    assert bucket.read(key) == LINES.encode()
    assert not settings.OCM_UPLOAD_DIR.exists()  # nothing written to a local folder

    for enqueue in queued:  # the commit: queued, and run by the (immediate) task backend
        enqueue()

    done = as_annotator.get(f"/imports/{task.pk}").json()
    assert done["status"] == "succeeded", done["error"]
    assert done["progress"]["bytes_read"] == done["progress"]["bytes_total"] == len(LINES)
    assert sorted(Transcript.objects.values_list("external_id", flat=True)) == ["t0", "t1", "t2"]
    assert bucket.keys(f"{PREFIX}/uploads/") == []  # the upload is removed once imported


def test_a_zip_upload_is_read_from_the_bucket(
    as_annotator, dataset, bucket, django_capture_on_commit_callbacks
):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for n in range(2):
            zipped.writestr(f"part{n}.jsonl", LINES.replace('"t', f'"z{n}-t'))
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug, archive.getvalue(), name="batch.zip")
    done = as_annotator.get(f"/imports/{response.json()['id']}").json()
    assert done["status"] == "succeeded", done["error"]
    assert done["report"]["counts"]["created"] == 6
    assert bucket.keys(f"{PREFIX}/uploads/") == []


def test_an_upload_read_from_the_bucket_past_the_spool_size_goes_to_disk_not_memory(
    annotator, dataset, bucket, django_capture_on_commit_callbacks, settings
):
    settings.STORAGES["ocm_uploads"]["OPTIONS"]["max_memory_size"] = 4096
    lines = "".join(
        json.dumps({"id": f"big{n}", "messages": [{"role": "user", "content": "x" * 500}]}) + "\n"
        for n in range(20)
    ).encode()
    small = filestore.save_upload(io.BytesIO(LINES.encode()), "small.jsonl")
    big = filestore.save_upload(io.BytesIO(lines), "big.jsonl")
    with filestore.open_upload(small) as read:
        assert read.read() == LINES.encode()
        assert not read.file._rolled  # held in memory: under the spool size
    with filestore.open_upload(big) as read:
        assert read.read() == lines
        assert read.file._rolled  # past it: a temporary file on disk
    assert filestore.uploads().transfer_config.use_threads is False  # one part at a time

    with django_capture_on_commit_callbacks(execute=True):
        task = start_import_task(
            dataset=dataset, author=annotator, upload=io.BytesIO(lines), name="big.jsonl"
        )
    task.refresh_from_db()
    assert task.status == TaskStatus.SUCCEEDED, task.error
    assert Transcript.objects.filter(external_id__startswith="big").count() == 20


def test_an_upload_gone_from_the_bucket_fails_the_import_with_a_clear_error(
    annotator, dataset, bucket
):
    task = start_import_task(
        dataset=dataset, author=annotator, upload=io.BytesIO(LINES.encode()), name="a.jsonl"
    )
    bucket.client.delete_object(Bucket=bucket.name, Key=f"{PREFIX}/uploads/{task.upload_path}")
    done = run_import_task(task.pk)
    assert done.status == TaskStatus.FAILED
    assert "upload it again" in done.error
    assert not Transcript.objects.exists()
