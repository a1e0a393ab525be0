"""Uploads and prepared exports in a bucket: a real S3-compatible server (moto's server mode)
for the session, a fresh bucket per test, and the two task storages pointed at it the way
``OCM_STORAGE_URL`` / ``OCM_STORAGE_ENDPOINT`` and boto3's AWS_* variables configure them."""

from __future__ import annotations

import pytest

from ocm_site.storages import task_storages
from tests.api.conftest import api_client_for
from tests.support.s3_server import CREDENTIALS, Bucket, s3_server

# boto3 would take these over what the test sets: a developer's own AWS setup.
FOREIGN_AWS_VARIABLES = (
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)
PREFIX = "ocm"


@pytest.fixture(scope="session")
def s3_endpoint():
    with s3_server() as endpoint:
        yield endpoint


@pytest.fixture
def aws_environment(monkeypatch, tmp_path):
    """boto3's credentials and region from the environment, as a deployment gives them."""
    for name in FOREIGN_AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    return {
        **CREDENTIALS,
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
    }


@pytest.fixture
def bucket(s3_endpoint, aws_environment, settings, tmp_path) -> Bucket:
    """A fresh bucket holding this test's uploads and exports; the local folders are new
    and empty, so a test can tell nothing went there."""
    made = Bucket(s3_endpoint)
    settings.OCM_STORAGE_URL = f"s3://{made.name}/{PREFIX}"
    settings.OCM_STORAGE_ENDPOINT = s3_endpoint
    settings.STORAGES = {
        **settings.STORAGES,
        **task_storages(
            settings.OCM_STORAGE_URL,
            endpoint=s3_endpoint,
            spool_bytes=settings.FILE_UPLOAD_MAX_MEMORY_SIZE,
        ),
    }
    settings.OCM_UPLOAD_DIR = tmp_path / "local-uploads"
    settings.OCM_EXPORT_DIR = tmp_path / "local-exports"
    return made


@pytest.fixture
def as_curator(curator):
    return api_client_for(curator)


@pytest.fixture
def as_annotator(annotator):
    return api_client_for(annotator)
