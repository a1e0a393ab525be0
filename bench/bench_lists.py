"""Lists at real size (issue 10): a dataset of 1,000 small transcripts and one of ~5 MB.

* a page of the transcript list (50 rows, the 5 MB transcript among them): the query alone
  (summary columns and the stored ``message_count``) and the API route;
* the dataset page (first page, sorted by last change; a filtered page) and the dashboard.

Runs in a child process on a throwaway SQLite database (and on PostgreSQL when a server
answers, like bench_storage).

    .venv/bin/python -m bench.bench_lists          # or `make bench` (every benchmark)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_editor import _timed, long_transcript
from bench.bench_storage import _postgres_server, _throwaway_postgres


def run() -> None:
    with tempfile.TemporaryDirectory() as folder:
        _in_child("SQLite", f"sqlite:///{Path(folder) / 'bench.sqlite3'}")
    server = _postgres_server()
    if server is None:
        print("PostgreSQL: skipped, no server reachable (set DATABASE_URL to a postgres:// URL)")
        return
    with _throwaway_postgres(server) as url:
        _in_child("PostgreSQL", url)


def _in_child(label: str, database_url: str) -> None:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_DEBUG": "false"}
    env.setdefault("DJANGO_SETTINGS_MODULE", "ocm_site.settings")
    print(f"{label}:", flush=True)
    subprocess.run([sys.executable, "-m", "bench.bench_lists", "--child"], env=env, check=True)


def _child() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from editor import formats
    from editor.models import Dataset, Membership, Role, Transcript
    from editor.storage import NewTranscript, TranscriptContent, create_transcripts

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench")
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)

    big = TranscriptContent.from_text(long_transcript(formats, 7200, 1000), "openchatml-2.2")
    small = TranscriptContent.from_text(long_transcript(formats, 20, 100), "openchatml-2.2")
    create_transcripts(dataset, [NewTranscript(big, title="big")], author=user)
    create_transcripts(
        dataset, [NewTranscript(small, title=f"t{n}") for n in range(1000)], author=user
    )
    print(f"  (one transcript of {len(big.source_text) / 1e6:.1f} MB, 1,000 of 20 messages)")

    _timed(
        "list page query: summaries()",
        lambda n: list(Transcript.objects.filter(dataset=dataset).summaries().order_by("pk")[:50]),
    )
    client = Client()
    client.force_login(user)
    _timed(
        "API list, first page",
        lambda n: client.get(f"/api/v1/datasets/{dataset.slug}/transcripts"),
    )
    _timed("dataset page, first page", lambda n: client.get(f"/datasets/{dataset.slug}/"))
    _timed(
        "dataset page, filtered, page 10",
        lambda n: client.get(
            f"/datasets/{dataset.slug}/",
            {"has": "tool_calls", "code": "W-HEADER-MISSING", "sort": "-messages", "page": 10},
        ),
    )
    _timed("dashboard", lambda n: client.get("/"))
    connections.close_all()  # before the parent drops the database


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child()
    else:
        run()
