"""Two "machines": a web process stores the upload, a task worker elsewhere imports it.

The worker is another process with its own, empty local folders (uploads, exports, temporary
files): all the two share is the database and the bucket, as web and task workers on
different machines with no shared volume.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from editor.importing.tasks import start_import_task
from editor.models import ImportTask

from .conftest import PREFIX
from .test_imports import LINES

ROOT = Path(__file__).resolve().parents[2]
DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

pytestmark = pytest.mark.django_db(transaction=True)

# Machine B: the task worker runs what is queued, then says what became of the import.
WORKER = textwrap.dedent(
    """
    import json, os, sys
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocm_site.settings")
    django.setup()
    from django.core.management import call_command
    from editor.models import ImportTask, Transcript

    call_command(
        "task_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval=0",
        verbosity=0,
    )
    task = ImportTask.objects.get(pk=int(sys.argv[1]))
    ids = sorted(Transcript.objects.values_list("external_id", flat=True))
    print(json.dumps({"status": task.status, "error": task.error, "ids": ids}))
    """
)


def database_for_another_process(tmp_path: Path) -> str:
    """A DATABASE_URL another process can open holding what this test wrote: the test
    database itself on PostgreSQL (committed: a transactional test), a copy on SQLite (its
    test database lives in this process's memory)."""
    if connection.vendor == "sqlite":
        path = tmp_path / "shared.sqlite3"
        connection.ensure_connection()
        with closing(sqlite3.connect(path)) as copy:
            connection.connection.backup(copy)
        return f"sqlite:///{path}"
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def test_an_upload_stored_by_one_machine_is_imported_by_a_worker_on_another(
    dataset, annotator, bucket, aws_environment, settings, tmp_path
):
    settings.TASKS = DATABASE_TASKS
    machine_a = settings.OCM_UPLOAD_DIR
    task = start_import_task(
        dataset=dataset,
        author=annotator,
        upload=SimpleUploadedFile("batch.jsonl", LINES.encode()),
        name="batch.jsonl",
    )
    assert not machine_a.exists()  # machine A kept nothing locally
    assert bucket.keys(f"{PREFIX}/uploads/") == [f"{PREFIX}/uploads/{task.upload_path}"]

    machine_b = tmp_path / "machine-b"
    for folder in ("uploads", "exports", "tmp"):
        (machine_b / folder).mkdir(parents=True)
    env = {
        **os.environ,
        **aws_environment,
        "DATABASE_URL": database_for_another_process(tmp_path),
        "OCM_TASKS": "database",
        "OCM_STORAGE_URL": settings.OCM_STORAGE_URL,
        "OCM_STORAGE_ENDPOINT": bucket.endpoint,
        "OCM_UPLOAD_DIR": str(machine_b / "uploads"),
        "OCM_EXPORT_DIR": str(machine_b / "exports"),
        "TMPDIR": str(machine_b / "tmp"),
    }
    worker = subprocess.run(
        [sys.executable, "-c", WORKER, str(task.pk)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode == 0, worker.stderr
    outcome = json.loads(worker.stdout.strip().splitlines()[-1])
    assert outcome == {"status": "succeeded", "error": "", "ids": ["t0", "t1", "t2"]}
    assert bucket.keys(f"{PREFIX}/uploads/") == []  # removed by the worker once imported
    for folder in ("uploads", "exports", "tmp"):  # and machine B's folders were not needed
        assert list((machine_b / folder).iterdir()) == []
    assert ImportTask.objects.filter(pk=task.pk).exists()
