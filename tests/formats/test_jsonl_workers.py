"""``-j N``: the worker processes of ``jsonl.run`` start safely and always end.

Found in CI: a test run whose task-worker tests had left a SIGTERM handler in the process
forked a pool whose workers ignored ``Pool.terminate`` and never ended (the run stalled for an
hour). Workers now reset their signals, a pool that finished its work is closed rather than
terminated, and a process running other threads does not fork its workers.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import pytest

from editor.formats import jsonl

ROOT = Path(__file__).resolve().parents[2]
LINE = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()


@pytest.fixture
def sigterm_only_asks_to_stop():
    """What a task worker running in the process installs: SIGTERM sets a flag."""
    saved = signal.signal(signal.SIGTERM, lambda *_: None)
    yield
    signal.signal(signal.SIGTERM, saved)


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("sigterm_only_asks_to_stop")
def test_a_pool_ends_after_its_work_whatever_handles_sigterm_in_the_parent():
    reports = jsonl.run([LINE] * 2000, partial(jsonl.validate_record, spec=None), jobs=2)
    assert [r.number for r in reports] == list(range(1, 2001))


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("sigterm_only_asks_to_stop")
def test_a_pool_left_halfway_is_terminated_and_ends():
    reports = jsonl.run([LINE] * 5000, partial(jsonl.validate_record, spec=None), jobs=2)
    assert next(reports).number == 1
    reports.close()  # the caller stops reading: the workers are killed, and they die


def test_a_process_running_other_threads_does_not_fork_its_workers():
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert jsonl.worker_context().get_start_method() in ("forkserver", "spawn")
    finally:
        stop.set()
        other.join()


def test_the_command_line_forks_its_workers_and_validates_with_two():
    # The CLI runs one thread: its workers fork from it, with the core already imported.
    script = "from editor.formats import jsonl; print(jsonl.worker_context().get_start_method())"
    method = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert method.stdout.strip() == "fork"
    done = subprocess.run(
        [sys.executable, "-m", "editor.formats.cli", "validate", "-", "--jsonl", "-j", "2"],
        input=b"\n".join([LINE] * 1500) + b"\n",
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().endswith(
        "-: 1500 records, 0 with errors, 0 errors, 0 other diagnostics\n"
    )
