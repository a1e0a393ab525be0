"""Bodies the API cannot take are JSON errors with a fitting status, never a 500."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from editor.models import ImportTask

from .conftest import assert_error

pytestmark = pytest.mark.django_db


def test_the_limit_is_20_megabytes_for_a_body_read_in_memory():
    # Big enough for a pasted transcript, small enough that a worker never holds much more;
    # files go through uploads (FILE_UPLOAD_MAX_MEMORY_SIZE: spooled to disk).
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == 20 * 1024 * 1024


def test_a_json_body_over_the_limit_is_413(as_curator, dataset):
    too_big = "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = as_curator.post(f"/datasets/{dataset.slug}/transcripts", {"text": too_big})
    body = assert_error(response, 413, "payload-too-large")
    assert body["details"] == {"max_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}


@override_settings(DATA_UPLOAD_MAX_NUMBER_FIELDS=5)
def test_a_form_with_too_many_fields_is_413(as_curator, dataset):
    fields = {f"field{i}": "x" for i in range(10)}
    response = as_curator.client.post(
        f"/api/v1/datasets/{dataset.slug}/imports", fields, headers=as_curator.headers
    )
    assert_error(response, 413, "payload-too-large")


def test_a_multipart_body_without_a_boundary_is_400(as_curator, dataset):
    response = as_curator.client.post(
        f"/api/v1/datasets/{dataset.slug}/imports",
        b"--x\r\n",
        content_type="multipart/form-data",
        headers=as_curator.headers,
    )
    assert_error(response, 400, "invalid-multipart")


@override_settings(OCM_MAX_UPLOAD_BYTES=1024)
def test_an_upload_over_the_limit_is_413_before_it_is_read(as_curator, dataset):
    upload = SimpleUploadedFile("big.jsonl", b'{"text": "x"}\n' * 200)
    response = as_curator.client.post(
        f"/api/v1/datasets/{dataset.slug}/imports",
        {"file": upload},
        headers=as_curator.headers,
    )
    body = assert_error(response, 413, "payload-too-large")
    assert body["details"] == {"max_bytes": 1024}
    assert not ImportTask.objects.exists()


@override_settings(OCM_MAX_UPLOAD_BYTES=1024)
def test_an_upload_over_the_limit_is_the_413_page(client, curator, dataset):
    client.force_login(curator)
    upload = SimpleUploadedFile("big.jsonl", b'{"text": "x"}\n' * 200)
    response = client.post(f"/datasets/{dataset.slug}/import/", {"file": upload})
    assert response.status_code == 413
    assert "Traceback" not in response.content.decode()
