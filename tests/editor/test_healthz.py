"""``/healthz``: 200 when the database, the cache and the task queue answer; 503 naming the rest."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import OperationalError

from editor import background

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


def test_healthy_without_login_and_never_cached(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["down"] == []
    assert set(body["checks"]) == {"database", "cache", "queue"}
    assert "no-cache" in response["Cache-Control"]


def test_the_queue_is_down_while_no_task_worker_is_alive(client, settings):
    settings.TASKS = DATABASE_TASKS
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["down"] == ["queue"]
    assert response.json()["checks"]["queue"]["workers"] == 0

    background.record_worker_seen()
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["checks"]["queue"] == {
        "ok": True,
        "backend": "database",
        "workers": 1,
        "queued": 0,
        "oldest_queued_seconds": 0,
    }


def test_a_cache_that_does_not_answer_is_named(client):
    with mock.patch("editor.health.cache.set", side_effect=ConnectionError("refused")):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["down"] == ["cache"]
    assert "refused" in response.json()["checks"]["cache"]["error"]


def test_a_database_that_does_not_answer_is_named(client):
    with mock.patch("editor.health.connection.cursor", side_effect=OperationalError("gone")):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert "database" in response.json()["down"]


def test_a_post_is_refused(client):
    assert client.post("/healthz").status_code == 405


def test_a_queued_import_or_export_says_when_no_worker_takes_it(
    client, settings, dataset, annotator
):
    from editor.models import ExportTask, ImportTask

    settings.TASKS = DATABASE_TASKS
    client.force_login(annotator)
    pages = [
        f"/imports/{ImportTask.objects.create(dataset=dataset, created_by=annotator).pk}/",
        f"/exports/{ExportTask.objects.create(dataset=dataset, created_by=annotator).pk}/",
    ]
    for page in pages:
        html = client.get(page).content.decode()
        assert 'data-testid="no-worker"' in html, page
        assert "manage.py task_worker" in html

    background.record_worker_seen()
    for page in pages:
        assert 'data-testid="no-worker"' not in client.get(page).content.decode(), page
