"""Import and export from the dataset page: a background task with progress, a streamed file."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from editor.importing.tasks import progress_of
from editor.models import ImportTask, TaskStatus, Transcript
from tests.editor.dataset_page import whole_page

TWO_LINES = (
    json.dumps({"id": "a", "text": "<|start|>user<|message|>hi<|end|>", "spec": "openchatml-2.2"})
    + "\n"
    + json.dumps({"id": "b", "messages": [{"role": "user", "content": "hello"}]})
    + "\n"
)


def upload(content: str, name: str = "batch.jsonl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode("utf-8"), content_type="application/jsonl")


def post_import(client, dataset, content, django_capture_on_commit_callbacks, **fields):
    with django_capture_on_commit_callbacks(execute=True):
        return client.post(
            f"/datasets/{dataset.slug}/import/",
            {"file": upload(content), "on_conflict": "update", **fields},
        )


def test_dataset_page_shows_forms_to_editors_only(client, dataset, annotator, viewer):
    client.force_login(annotator)
    html = whole_page(client, f"/datasets/{dataset.slug}/")
    assert 'data-testid="import-form"' in html and 'data-testid="export-form"' in html
    client.force_login(viewer)
    html = whole_page(client, f"/datasets/{dataset.slug}/")
    assert 'data-testid="import-form"' not in html and 'data-testid="export-form"' in html


def test_outsider_cannot_see_the_dataset(client, dataset, outsider):
    client.force_login(outsider)
    assert client.get(f"/datasets/{dataset.slug}/").status_code == 404


def test_import_creates_a_task_that_reports_every_item(
    client, dataset, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    response = post_import(client, dataset, TWO_LINES, django_capture_on_commit_callbacks)
    task = ImportTask.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/imports/{task.pk}/"
    assert task.status == TaskStatus.SUCCEEDED and task.created_by == annotator
    assert sorted(
        Transcript.objects.filter(dataset=dataset).values_list("external_id", flat=True)
    ) == ["a", "b"]
    page = client.get(response["Location"]).content.decode()
    assert 'data-status="succeeded"' in page
    assert page.count('data-action="created"') == 2
    assert "hx-trigger" not in page  # a finished task is not polled


def test_all_or_nothing_import_failure_is_reported_and_writes_nothing(
    client, dataset, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    bad = TWO_LINES + "{not json\n"
    post_import(client, dataset, bad, django_capture_on_commit_callbacks)
    task = ImportTask.objects.get()
    assert task.status == TaskStatus.FAILED
    assert task.error
    assert not Transcript.objects.filter(dataset=dataset).exists()
    page = client.get(f"/imports/{task.pk}/").content.decode()
    assert 'role="alert"' in page and 'data-action="failed"' in page


def test_partial_import_keeps_the_readable_items(
    client, dataset, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    post_import(
        client, dataset, TWO_LINES + "{not json\n", django_capture_on_commit_callbacks, partial="on"
    )
    task = ImportTask.objects.get()
    assert task.status == TaskStatus.SUCCEEDED
    assert task.report["counts"]["created"] == 2 and task.report["counts"]["failed"] == 1


def test_viewer_may_not_import(client, dataset, viewer, django_capture_on_commit_callbacks):
    client.force_login(viewer)
    response = post_import(client, dataset, TWO_LINES, django_capture_on_commit_callbacks)
    assert response.status_code == 403
    assert not ImportTask.objects.exists()


def test_missing_file_is_a_form_error(client, dataset, annotator):
    client.force_login(annotator)
    response = client.post(f"/datasets/{dataset.slug}/import/", {"on_conflict": "update"})
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()


def _finished_import(dataset, annotator, created: int, failed: int) -> ImportTask:
    items = [
        {"location": f"big.jsonl:{n}", "external_id": f"t{n}", "action": "created"}
        for n in range(1, created + 1)
    ] + [
        {"location": f"big.jsonl:{n}", "action": "failed", "message": "no message could be read"}
        for n in range(created + 1, created + failed + 1)
    ]
    report = {"items": items, "counts": {"created": created, "failed": failed}}
    return ImportTask.objects.create(
        dataset=dataset,
        created_by=annotator,
        source_name="big.jsonl",
        status=TaskStatus.SUCCEEDED,
        report=report,
    )


def test_a_large_report_is_shown_a_page_at_a_time(client, dataset, annotator):
    """10,000 items were one 3 MB table: now 200 rows a page, and the failed ones a click
    away whatever page they are on."""
    task = _finished_import(dataset, annotator, created=450, failed=3)
    client.force_login(annotator)
    page = client.get(f"/imports/{task.pk}/").content.decode()
    assert page.count('data-action="created"') == 200
    assert "Items 1\N{EN DASH}200 of 453" in page and 'rel="next"' in page
    last = client.get(f"/imports/{task.pk}/?page=3").content.decode()
    assert last.count('data-action="created"') == 50 and last.count('data-action="failed"') == 3
    failed = client.get(f"/imports/{task.pk}/?action=failed").content.decode()
    assert failed.count('data-action="failed"') == 3 and 'data-action="created"' not in failed
    assert '<strong aria-current="true">3 failed</strong>' in failed
    assert 'data-show-action="created"' in failed  # the way back to the others
    # An unknown action or page shows what there is, never an error.
    assert client.get(f"/imports/{task.pk}/?action=nope&page=x").status_code == 200


def test_htmx_poll_gets_only_the_progress_fragment(client, dataset, annotator):
    task = ImportTask.objects.create(dataset=dataset, created_by=annotator, source_name="x.jsonl")
    client.force_login(annotator)
    html = client.get(f"/imports/{task.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert html.lstrip().startswith('<div id="import-progress"')
    assert "<html" not in html
    assert re.search(r'hx-trigger="every \d+ms"', html)  # still queued: keep polling


def test_a_page_polls_a_task_soon_then_less_often_and_around_its_expected_end(dataset):
    """Pages polled every second saw a 3 s import end up to a second late."""
    from datetime import timedelta

    from django.utils import timezone

    from editor.models import TaskStatus
    from editor.models.tasks import LOOK_FIRST, LOOK_LONGEST, LOOK_SHORTEST

    now = timezone.now()
    task = ImportTask(dataset=dataset, source_name="x.jsonl", created_at=now)
    assert task.seconds_to_next_look(now=now) == LOOK_FIRST  # just queued
    later = now + timedelta(seconds=2)
    assert LOOK_FIRST < task.seconds_to_next_look(now=later) < LOOK_LONGEST
    assert task.seconds_to_next_look(now=now + timedelta(minutes=5)) == LOOK_LONGEST

    task.status, task.started_at = TaskStatus.RUNNING, now
    look = task.seconds_to_next_look
    # No progress told yet: the same back-off from the start.
    assert look({"percent": 0}, now=later) == look(now=later)
    # 2 s for 90 %: about 0.22 s left, sooner than the back-off.
    assert 0.2 < look({"percent": 90}, now=later) < 0.25
    # The task's own estimate, where it gives one, rather than the page's.
    assert look({"percent": 50, "seconds_left": 0.3}, now=later) == pytest.approx(0.3)
    # Almost done: never sooner than the shortest.
    assert look({"percent": 99.9}, now=later) == LOOK_SHORTEST
    # Everything read: its last writes and commit.
    assert look({"percent": 100}, now=later) == LOOK_FIRST
    # 10 % of a task of minutes: the back-off.
    long_after = now + timedelta(minutes=1)
    assert look({"percent": 10}, now=long_after) == LOOK_LONGEST


def test_an_import_tells_the_time_its_reading_should_still_take(dataset):
    """From its last report's pace, on the server's clock (``progress_of``)."""
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    task = ImportTask(dataset=dataset, source_name="x.jsonl", created_at=now)
    queued = progress_of(task, now=now)
    assert (queued["percent"], queued["seconds_left"]) == (0, None)
    task.status, task.started_at = TaskStatus.RUNNING, now
    assert progress_of(task, now=now)["percent"] == 0  # nothing reported yet
    # A quarter read in the first second, reported then; asked half a second later.
    task.heartbeat_at = now + timedelta(seconds=1)
    task.progress = {"items": 100, "counts": {}, "bytes_read": 250, "bytes_total": 1000}
    running = progress_of(task, now=now + timedelta(seconds=1.5))
    assert running["percent"] == 25
    assert running["seconds_left"] == pytest.approx(2.5)
    # Overdue: nothing left by that pace, not a negative time.
    assert progress_of(task, now=now + timedelta(seconds=9))["seconds_left"] == 0
    # A stream of unknown size: no percent, no estimate.
    task.progress = {"items": 100, "counts": {}, "bytes_read": 250, "bytes_total": None}
    unknown = progress_of(task, now=now + timedelta(seconds=1.5))
    assert (unknown["percent"], unknown["seconds_left"]) == (None, None)


def test_progress_is_live_from_the_heartbeat_while_running(dataset, annotator):
    from django.utils import timezone

    task = ImportTask.objects.create(
        dataset=dataset,
        created_by=annotator,
        source_name="x.jsonl",
        status=TaskStatus.RUNNING,
        worker="elsewhere:1",
        heartbeat_at=timezone.now(),
        progress={"items": 40, "counts": {"created": 40}, "bytes_read": 250, "bytes_total": 1000},
    )
    assert progress_of(task) == {
        "items": 40,
        "counts": {"created": 40},
        "bytes_read": 250,
        "bytes_total": 1000,
        "percent": 25,
        "seconds_left": None,  # no start time: no pace
    }


def test_export_streams_jsonl_in_the_asked_spec(
    client, dataset, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    post_import(client, dataset, TWO_LINES, django_capture_on_commit_callbacks)
    response = client.get(
        f"/datasets/{dataset.slug}/export/", {"spec": "openai-messages", "format": "jsonl"}
    )
    assert response.status_code == 200
    assert response.streaming
    assert 'filename="support-chats-openai-messages.jsonl"' in response["Content-Disposition"]
    lines = [
        json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()
    ]
    assert {line["id"] for line in lines} == {"a", "b"}
    assert {line["spec"] for line in lines} == {"openai-messages"}


def test_export_filters_by_status(client, dataset, annotator, django_capture_on_commit_callbacks):
    client.force_login(annotator)
    post_import(client, dataset, TWO_LINES, django_capture_on_commit_callbacks)
    response = client.get(
        f"/datasets/{dataset.slug}/export/", {"format": "messages", "status": "approved"}
    )
    assert b"".join(response.streaming_content) == b""


def test_export_with_an_unknown_spec_is_a_form_error(client, dataset, annotator):
    client.force_login(annotator)
    response = client.get(f"/datasets/{dataset.slug}/export/", {"spec": "nope", "format": "jsonl"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()


def test_viewer_may_export_only_what_the_end_user_sees(client, dataset, viewer):
    client.force_login(viewer)
    response = client.get(f"/datasets/{dataset.slug}/export/", {"format": "jsonl"})
    assert response.status_code == 403
    assert 'data-code="E-PERM-VISIBILITY"' in response.content.decode()
    allowed = client.get(
        f"/datasets/{dataset.slug}/export/", {"format": "jsonl", "audience": "end_user"}
    )
    assert allowed.status_code == 200


def test_viewers_export_form_offers_the_end_user_rendering_first(client, dataset, viewer):
    client.force_login(viewer)
    html = whole_page(client, f"/datasets/{dataset.slug}/")
    assert '<option value="end_user" selected>' in html


def test_without_javascript_an_unfinished_task_page_refreshes_itself(client, dataset, annotator):
    task = ImportTask.objects.create(dataset=dataset, created_by=annotator, source_name="x.jsonl")
    client.force_login(annotator)
    html = client.get(f"/imports/{task.pk}/").content.decode()
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in html
    task.status = TaskStatus.SUCCEEDED
    task.save()
    assert "http-equiv" not in client.get(f"/imports/{task.pk}/").content.decode()


TOOL_CALL = json.dumps(
    {
        "id": "call",
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_7",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_7", "content": '{"temp": 3}'},
            {"role": "assistant", "content": "3 degrees."},
        ],
    }
)


def preview(client, dataset, htmx=True, **options):
    headers = {"HX-Request": "true"} if htmx else {}
    query = {"format": "jsonl", "preview": "1", **options}
    return client.get(f"/datasets/{dataset.slug}/export/", query, headers=headers)


def test_the_losses_of_an_export_are_shown_before_the_download(
    client, dataset, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    post_import(client, dataset, TWO_LINES + TOOL_CALL + "\n", django_capture_on_commit_callbacks)
    response = preview(client, dataset, spec="chatml")
    html = response.content.decode()
    assert response.status_code == 200 and not response.streaming
    assert html.lstrip().startswith('<div id="export-preview"')  # the partial alone
    # The same figures as the API's trailing summary row of the same export.
    api = client.get(
        f"/api/v1/datasets/{dataset.slug}/export", {"spec": "chatml", "summary": "true"}
    )
    summary = json.loads(b"".join(api.streaming_content).decode().splitlines()[-1])["summary"]
    assert summary["loss_count"] > 0
    assert f'data-loss-count="{summary["loss_count"]}"' in html
    for field, kind in summary["losses"].items():
        assert f'<li data-field="{field}"><strong>{kind["transcripts"]}</strong>' in html
    assert f"over the {summary['transcripts']} transcripts exported" in html


def test_an_export_that_loses_nothing_says_so_and_works_without_javascript(
    client, dataset, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    post_import(client, dataset, TWO_LINES, django_capture_on_commit_callbacks)
    response = preview(client, dataset, htmx=False)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html  # the whole page again
    assert 'data-testid="export-nothing-lost"' in html and "2 transcripts export whole" in html
    assert '<option value="jsonl" selected>' in html  # the form keeps what was chosen


def test_too_big_an_export_is_not_converted_while_the_user_waits(
    client, dataset, annotator, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr("editor.views.datasets.PREVIEW_LIMIT", 1)
    client.force_login(annotator)
    post_import(client, dataset, TWO_LINES, django_capture_on_commit_callbacks)
    html = preview(client, dataset, spec="chatml").content.decode()
    assert "2 transcripts: too many to check while you wait" in html
    assert "data-loss-count" not in html


def test_a_preview_needs_the_same_rights_as_the_export(client, dataset, viewer):
    client.force_login(viewer)
    assert preview(client, dataset).status_code == 403
    assert preview(client, dataset, audience="end_user").status_code == 200


def test_an_import_lines_id_is_no_loss_when_the_target_spec_has_no_document_keys(
    client, dataset, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    post_import(client, dataset, TWO_LINES, django_capture_on_commit_callbacks)
    html = preview(client, dataset, spec="openchatml-2.2").content.decode()
    assert "2 transcripts export whole" in html
