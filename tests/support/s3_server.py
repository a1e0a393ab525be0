"""A real S3-compatible server for tests: moto's server mode, on 127.0.0.1 and a free port.

It speaks S3's HTTP API (signed requests, multipart uploads, presigned URLs), so boto3 and
django-storages talk to it as to a bucket elsewhere; nothing reaches the internet.
``Bucket`` creates one fresh bucket and reads what is in it (``keys``).
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from moto.server import ThreadedMotoServer

# moto accepts any credentials; these keep boto3 from looking for real ones.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "ocm-test-key",
    "AWS_SECRET_ACCESS_KEY": "ocm-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def s3_server() -> Iterator[str]:
    """A running server for the block; its endpoint URL."""
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


class Bucket:
    """A new, empty bucket on the server at ``endpoint``."""

    def __init__(self, endpoint: str):
        self.endpoint = endpoint
        self.name = f"ocm-{uuid.uuid4().hex[:12]}"
        self.client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            region_name=CREDENTIALS["AWS_DEFAULT_REGION"],
        )
        self.client.create_bucket(Bucket=self.name)

    def keys(self, prefix: str = "") -> list[str]:
        listed = self.client.list_objects_v2(Bucket=self.name, Prefix=prefix)
        return sorted(item["Key"] for item in listed.get("Contents", []))

    def read(self, key: str) -> bytes:
        return self.client.get_object(Bucket=self.name, Key=key)["Body"].read()
