"""``ocm push``, ``ocm pull`` and ``ocm status`` against the running test server, with
``OCM_URL`` and ``OCM_TOKEN`` set: in-process (``main``), and once as the installed script."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from editor.formats.cli import main
from editor.models import ApiToken, Transcript
from editor.versions import create_version
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db(transaction=True)

LINES = (
    json.dumps({"id": "a", "spec": "openchatml-2.2", "text": conversation(turns=1)})
    + "\n"
    + json.dumps({"id": "b", "document": {"messages": [{"role": "user", "content": "Hi"}]}})
    + "\n"
)


@pytest.fixture
def server(live_server, annotator, dataset, monkeypatch):
    monkeypatch.setenv("OCM_URL", live_server.url)
    monkeypatch.setenv("OCM_TOKEN", ApiToken.issue(annotator)[1])
    return live_server


def ocm(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def test_push_prints_the_import_report(server, dataset, tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text(LINES)
    status, out, err = ocm("push", str(path), "--dataset", dataset.slug)
    assert status == 0, err
    task_id = out.split()[1]
    assert out == (
        f"import {task_id} into support-chats: succeeded (2 created, 0 updated, 0 skipped, "
        "0 failed)\n"
    )
    assert Transcript.objects.count() == 2

    status, out, _ = ocm("push", str(path), "--dataset", dataset.slug, "--on-conflict", "skip")
    assert status == 0 and "(0 created, 0 updated, 2 skipped, 0 failed)" in out


def test_a_failed_push_lists_its_failures_and_exits_1(server, dataset, tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text(LINES + "{not json\n")
    status, out, err = ocm("push", str(path), "--dataset", dataset.slug)
    assert status == 1
    assert ": failed (0 created, 0 updated, 2 skipped, 1 failed): Nothing was imported" in out
    assert err.startswith("batch.jsonl:3: invalid-json: ")
    assert not Transcript.objects.exists()


def test_push_errors_exit_2_with_the_api_message(server, dataset, tmp_path, monkeypatch):
    path = tmp_path / "batch.jsonl"
    path.write_text(LINES)
    status, _, err = ocm("push", str(path), "--dataset", "nowhere")
    assert status == 2 and err.startswith("ocm: ") and err.endswith("(not-found)\n")
    status, _, err = ocm("push", str(tmp_path / "missing.jsonl"), "--dataset", dataset.slug)
    assert status == 2 and "missing.jsonl" in err
    monkeypatch.delenv("OCM_TOKEN")
    status, _, err = ocm("status", "1")
    assert status == 2 and "OCM_TOKEN" in err


def test_status_of_an_import(server, dataset, tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text(LINES)
    _, pushed, _ = ocm("push", str(path), "--dataset", dataset.slug, "--no-wait")
    task_id = pushed.split()[1]
    assert pushed.startswith(f"import {task_id} into support-chats: ")
    status, out, _ = ocm("status", task_id)
    assert status == 0
    assert out == (
        f"import {task_id} into support-chats: succeeded (2 created, 0 updated, 0 skipped, "
        "0 failed)\n"
    )
    status, out, _ = ocm("status", task_id, "--json")
    assert status == 0 and json.loads(out)["report"]["counts"]["created"] == 2
    status, _, err = ocm("status", "999999")
    assert status == 2 and "not-found" in err


def test_pull_writes_the_dataset_in_a_spec(server, dataset, tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text(LINES)
    ocm("push", str(path), "--dataset", dataset.slug)

    status, out, err = ocm("pull", dataset.slug, "--to", "chatml", "-o", str(tmp_path / "o.jsonl"))
    assert status == 0 and out == ""
    assert err == f"ocm: 2 transcripts written to {tmp_path / 'o.jsonl'}\n"
    lines = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [line["spec"] for line in lines] == ["chatml", "chatml"]

    status, out, _ = ocm("pull", dataset.slug, "--to", "openai-messages")
    assert status == 0
    assert [json.loads(line)["spec"] for line in out.splitlines()] == ["openai-messages"] * 2
    status, out, _ = ocm("pull", dataset.slug, "--to", "chatml", "--status", "approved")
    assert status == 0 and out == ""


def test_pull_of_a_version_writes_it_as_it_was(server, dataset, curator, tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text(LINES)
    assert ocm("push", str(path), "--dataset", dataset.slug)[0] == 0
    create_version(dataset, "v1", author=curator)
    status, before, _ = ocm("pull", dataset.slug, "--version", "v1", "--to", "chatml")
    assert status == 0 and len(before.splitlines()) == 2
    path.write_text(LINES.replace('"Hi"', '"Hello again"'))  # "b" is imported over
    assert ocm("push", str(path), "--dataset", dataset.slug)[0] == 0
    assert ocm("pull", dataset.slug, "--to", "chatml")[1] != before
    assert ocm("pull", dataset.slug, "--version", "v1", "--to", "chatml")[1] == before
    status, out, err = ocm("pull", dataset.slug, "--version", "v9", "--to", "chatml")
    assert status != 0 and out == "" and "(not-found)" in err


def test_the_ocm_script_pushes_and_pulls_through_standard_output(server, dataset, tmp_path):
    """The installed ``ocm`` entry point in its own process: bytes on its real stdout."""
    path = tmp_path / "batch.jsonl"
    path.write_text(LINES)
    ocm_script = Path(sys.executable).parent / "ocm"

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(ocm_script), *argv], capture_output=True, text=True, timeout=60, env=os.environ
        )

    pushed = run("push", str(path), "--dataset", dataset.slug)
    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stdout.endswith(": succeeded (2 created, 0 updated, 0 skipped, 0 failed)\n")
    assert pushed.stderr == ""  # not a terminal: no progress bar
    pulled = run("pull", dataset.slug, "--to", "openchatml-2.2")
    assert pulled.returncode == 0, pulled.stderr
    assert [json.loads(line)["spec"] for line in pulled.stdout.splitlines()] == [
        "openchatml-2.2"
    ] * 2
    status = run("status", pushed.stdout.split()[1])
    assert status.returncode == 0 and status.stdout == pushed.stdout
