"""SQLite as `make run` uses it (a file, WAL, a busy timeout): a big import does not lock the
other users out. Reads go on while it runs, and writes wait for its short write phase
instead of failing with "database is locked"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_reads_and_writes_go_on_while_a_big_import_runs(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "ocm_site.settings",
    }
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("sqlite_import_while_reading.py")), "3000"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["import"] == {"created": 3000, "updated": 0, "skipped": 0, "failed": 0}
    assert outcome["errors"] == []
    assert outcome["reads"] > 0 and outcome["writes"] > 0
