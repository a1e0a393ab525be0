"""Prepared exports expire: a task worker's sweep removes the file of an export prepared more
than ``OCM_EXPORT_KEEP_DAYS`` days ago, and its page and download say to start it again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from editor import background, filestore
from editor.exporting.tasks import remove_expired_exports, run_export_task, start_export_task
from editor.models import ExportTask, TaskStatus
from tests.api.conftest import api_client_for

pytestmark = pytest.mark.django_db


def prepared(dataset, user, days_ago: float) -> ExportTask:
    task = run_export_task(start_export_task(dataset, user).pk)
    assert task.status == TaskStatus.SUCCEEDED and filestore.export_exists(task.file_path)
    finished = timezone.now() - timedelta(days=days_ago)
    ExportTask.objects.filter(pk=task.pk).update(finished_at=finished)
    return task


def test_an_export_older_than_the_setting_loses_its_file_and_a_recent_one_keeps_it(
    dataset, annotator, chat, settings
):
    settings.OCM_EXPORT_KEEP_DAYS = 7
    old = prepared(dataset, annotator, days_ago=8)
    recent = prepared(dataset, annotator, days_ago=6)

    background.recover_dead_tasks()  # the worker's sweeps, as it runs them

    old.refresh_from_db()
    recent.refresh_from_db()
    assert old.file_path == "" and old.status == TaskStatus.SUCCEEDED
    assert recent.file_path and filestore.export_exists(recent.file_path)
    assert remove_expired_exports() == 0  # nothing left to remove


def test_the_expired_exports_page_and_download_say_to_start_it_again(
    client, dataset, annotator, chat, settings
):
    settings.OCM_EXPORT_KEEP_DAYS = 7
    old = prepared(dataset, annotator, days_ago=8)
    stored = old.file_path
    assert remove_expired_exports() == 1
    assert not filestore.export_exists(stored)
    client.force_login(annotator)

    page = client.get(f"/exports/{old.pk}/")
    download = client.get(f"/exports/{old.pk}/download/")

    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="export-expired"' in html and "7 days after" in html
    assert 'data-testid="export-download"' not in html
    assert download.status_code == 409
    assert "start the export again" in download.content.decode()


def test_zero_days_keeps_every_export(dataset, annotator, chat, settings):
    settings.OCM_EXPORT_KEEP_DAYS = 0
    old = prepared(dataset, annotator, days_ago=400)

    assert remove_expired_exports() == 0

    old.refresh_from_db()
    assert filestore.export_exists(old.file_path)


def test_the_api_says_an_export_expired(dataset, annotator, chat, settings):
    settings.OCM_EXPORT_KEEP_DAYS = 7
    old = prepared(dataset, annotator, days_ago=8)
    api = api_client_for(annotator)
    assert api.get(f"/exports/{old.pk}").json()["expired"] is False

    remove_expired_exports()

    assert api.get(f"/exports/{old.pk}").json()["expired"] is True
    refused = api.get(f"/exports/{old.pk}/download")
    assert refused.status_code == 409 and refused.json()["code"] == "export-not-ready"
