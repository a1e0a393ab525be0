"""Task files in a bucket: what storing and reading an upload, and storing an export, cost in
time and memory, against moto's S3 server (another process, on this machine) and against the
local folder.

Prints, for a file of ``OCM_BENCH_MB`` MB (default 128): seconds, MB/s and the peak of Python
memory allocated during the step (tracemalloc, a second pass: it slows what it watches).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_objectstore
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from tests.support.s3_server import CREDENTIALS, free_port

MB = 1024 * 1024
SIZE_MB = int(os.environ.get("OCM_BENCH_MB", "128"))


def run() -> None:
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(endpoint)
        with tempfile.TemporaryDirectory() as folder:
            os.environ.update(CREDENTIALS)
            os.environ["DJANGO_SETTINGS_MODULE"] = "ocm_site.settings"
            os.environ["OCM_UPLOAD_DIR"] = str(Path(folder) / "uploads")
            os.environ["OCM_EXPORT_DIR"] = str(Path(folder) / "exports")
            _measure(endpoint, Path(folder))
    finally:
        server.terminate()
        server.wait()


def _measure(endpoint: str, folder: Path) -> None:
    import boto3
    import django

    django.setup()
    from django.conf import settings
    from django.core.files.storage import storages

    from editor import filestore
    from ocm_site.storages import task_storages

    source = folder / "upload.jsonl"
    line = b'{"messages": [{"role": "user", "content": "' + b"x" * 1000 + b'"}]}\n'
    with source.open("wb") as out:
        for _ in range(SIZE_MB * MB // len(line)):
            out.write(line)
    size = source.stat().st_size
    print(f"file: {size / MB:.0f} MB")

    bucket = "bench-objectstore"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    s3 = task_storages(
        f"s3://{bucket}/ocm", endpoint=endpoint, spool_bytes=settings.FILE_UPLOAD_MAX_MEMORY_SIZE
    )
    local = task_storages("", spool_bytes=0)
    for label, entries in (("local folder", local), ("S3 (moto, same machine)", s3)):
        settings.STORAGES.update(entries)
        storages.__dict__.pop("backends", None)  # built again from the setting
        storages._backends = None
        storages._storages = {}
        for step, action in _steps(filestore, source, folder):
            seconds = _timed(action)
            peak = _peak(action)
            print(
                f"{label:24} {step:28} {seconds:6.2f} s {size / MB / seconds:7.0f} MB/s"
                f"   peak Python memory {peak / MB:6.1f} MB"
            )


def _steps(filestore, source: Path, folder: Path):
    stored = {}

    def save_upload():
        with source.open("rb") as upload:
            stored["upload"] = filestore.save_upload(upload, "upload.jsonl")

    def read_upload():
        with filestore.open_upload(stored["upload"]) as upload:
            while upload.read(MB):
                pass
        filestore.remove_upload(stored["upload"])

    def store_export():
        staged = filestore.staging_dir() / "export-bench.jsonl.part"
        with source.open("rb") as original, staged.open("wb") as copy:
            while chunk := original.read(MB):
                copy.write(chunk)
        filestore.remove_export(filestore.store_export(staged, "export-bench.jsonl"))

    def upload_then_read():
        save_upload()
        read_upload()

    return (
        ("store an upload + read it", upload_then_read),
        ("write + store an export", store_export),
    )


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _peak(action) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _wait_for(endpoint: str) -> None:
    import httpx

    for _ in range(100):
        try:
            httpx.get(endpoint)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"moto_server did not answer at {endpoint}")


if __name__ == "__main__":
    run()
