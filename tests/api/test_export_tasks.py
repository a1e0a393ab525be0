"""Exports prepared as a file by a task worker: start, poll, download; pages and recovery."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest

from editor import formats
from editor.background import recover_dead_tasks
from editor.exporting.tasks import run_export_task, start_export_task
from editor.models import ExportTask, TaskStatus
from editor.storage.create import create_transcript
from tests.editor.dataset_page import whole_page
from tests.editor.samples import conversation

from .conftest import assert_error

pytestmark = pytest.mark.django_db

HIDDEN = "HIDDEN-REASONING"


def with_call_ids() -> str:
    m = formats.Message
    messages = [
        m(role="user", content="Weather in Paris?"),
        m(role="assistant", channel="analysis", content=f"{HIDDEN} think"),
        m(
            role="assistant",
            channel="commentary",
            recipient="functions.get_weather",
            call_id="call_1",
            content='{"city": "Paris"}',
            end="call",
        ),
        m(role="tool", name="functions.get_weather", call_id="call_1", content='{"sunny": true}'),
        m(role="assistant", channel="final", content="Sunny."),
    ]
    return formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=messages))


@pytest.fixture
def stored(dataset, curator):
    for n in range(3):
        create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"T{n}"
        )
    create_transcript(
        dataset, author=curator, text=with_call_ids(), spec="openchatml-2.2", title="calls"
    )


def test_an_export_is_prepared_polled_and_downloaded_with_what_it_lost(
    as_annotator, dataset, stored, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = as_annotator.post(
            f"/datasets/{dataset.slug}/exports", {"spec": "sharegpt", "format": "jsonl"}
        )
    assert response.status_code == 202, response.content
    pk = response.json()["id"]

    task = as_annotator.get(f"/exports/{pk}").json()
    assert task["status"] == "succeeded", task["error"]
    assert task["transcript_count"] == 4
    assert task["progress"] == {"transcripts": 4, "total": 4, "percent": 100}
    assert task["file_name"] == f"{dataset.slug}-sharegpt.jsonl"
    assert task["losses"]["loss_count"] > 0
    assert {loss["transcript"] for loss in task["losses"]["losses"]}  # each names its transcript
    summary = task["losses"]["summary"]
    assert summary and all(kind["transcripts"] >= 1 for kind in summary.values())

    download = as_annotator.get(f"/exports/{pk}/download")
    assert download.status_code == 200
    assert download["Content-Type"].startswith("application/x-ndjson")
    body = b"".join(download.streaming_content).decode()
    assert task["size_bytes"] == len(body.encode())
    streamed = as_annotator.get(f"/datasets/{dataset.slug}/export", {"spec": "sharegpt"})
    assert body == b"".join(streamed.streaming_content).decode()  # the same lines
    assert [json.loads(line)["spec"] for line in body.splitlines()] == ["sharegpt"] * 4


def test_download_before_the_file_exists_is_409(as_annotator, dataset, annotator):
    task = start_export_task(dataset, annotator)  # queued: the commit never comes in a test
    response = as_annotator.get(f"/exports/{task.pk}/download")
    assert_error(response, 409, "export-not-ready")


def test_viewers_prepare_end_user_exports_only_and_never_see_full_ones(
    as_viewer, dataset, curator, stored, django_capture_on_commit_callbacks
):
    refused = as_viewer.post(f"/datasets/{dataset.slug}/exports", {"format": "jsonl"})
    assert refused.status_code == 403

    with django_capture_on_commit_callbacks(execute=True):
        ok = as_viewer.post(
            f"/datasets/{dataset.slug}/exports", {"format": "jsonl", "audience": "end_user"}
        )
    assert ok.status_code == 202
    body = b"".join(as_viewer.get(f"/exports/{ok.json()['id']}/download").streaming_content)
    assert HIDDEN.encode() not in body

    full = start_export_task(dataset, curator)
    run_export_task(full.pk)
    assert as_viewer.get(f"/exports/{full.pk}").status_code == 403
    assert as_viewer.get(f"/exports/{full.pk}/download").status_code == 403


def test_outsiders_do_not_learn_an_export_exists(as_outsider, dataset, curator):
    task = start_export_task(dataset, curator)
    assert as_outsider.get(f"/exports/{task.pk}").status_code == 404
    assert as_outsider.post(f"/datasets/{dataset.slug}/exports", {}).status_code == 404


def test_bad_options_are_refused_before_anything_is_queued(as_annotator, dataset):
    response = as_annotator.post(f"/datasets/{dataset.slug}/exports", {"spec": "nope"})
    assert response.status_code == 422
    assert not ExportTask.objects.exists()


def test_an_export_that_fails_midway_leaves_no_file_and_says_so(
    dataset, curator, stored, settings, tmp_path
):
    settings.OCM_EXPORT_DIR = tmp_path
    task = start_export_task(dataset, curator)
    with (
        mock.patch("editor.exporting.DatasetExport._line", side_effect=RuntimeError("boom")),
        pytest.raises(RuntimeError),
    ):
        run_export_task(task.pk)
    task.refresh_from_db()
    assert task.status == TaskStatus.FAILED
    assert task.error
    assert not task.file_path
    assert list(Path(tmp_path).iterdir()) == []  # the unfinished file was removed


def test_an_export_whose_worker_died_is_queued_again(dataset, curator, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    task = start_export_task(dataset, curator)
    ExportTask.objects.filter(pk=task.pk).update(
        status=TaskStatus.RUNNING, worker="elsewhere:1", attempts=1
    )
    assert recover_dead_tasks() == 1  # no heartbeat at all: dead
    task.refresh_from_db()
    assert task.status == TaskStatus.QUEUED


def test_the_export_page_polls_then_offers_the_download(
    client, dataset, annotator, stored, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/datasets/{dataset.slug}/exports/", {"format": "jsonl", "spec": "sharegpt"}
        )
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert 'data-status="succeeded"' in page
    assert 'data-testid="export-download"' in page
    assert 'data-testid="export-losses"' in page
    task = ExportTask.objects.get()
    download = client.get(f"/exports/{task.pk}/download/")
    assert download.status_code == 200
    assert b"".join(download.streaming_content).count(b"\n") == 4


def test_the_dataset_page_prepares_an_export_through_htmx_and_lists_it(
    client, dataset, annotator, stored, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    page = whole_page(client, f"/datasets/{dataset.slug}/")
    assert 'data-testid="export-in-background"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/datasets/{dataset.slug}/exports/",
            {"format": "messages"},
            headers={"HX-Request": "true"},
        )
    task = ExportTask.objects.get()
    assert response["HX-Redirect"] == f"/exports/{task.pk}/"
    page = whole_page(client, f"/datasets/{dataset.slug}/")
    assert f'href="/exports/{task.pk}/"' in page
