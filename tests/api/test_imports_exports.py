"""Imports (multipart upload → a task to poll) and the streamed dataset export."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from editor.models import ImportTask, Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import conversation, demo_texts

from .conftest import PREFIX, assert_error

pytestmark = pytest.mark.django_db

LINES = (
    json.dumps({"id": "a", "spec": "openchatml-2.2", "text": conversation(turns=1)})
    + "\n"
    + json.dumps({"id": "b", "document": {"messages": [{"role": "user", "content": "Hi"}]}})
    + "\n"
)


def upload(api, slug, content: str, name="batch.jsonl", **fields):
    return api.client.post(
        f"{PREFIX}/datasets/{slug}/imports",
        {"file": SimpleUploadedFile(name, content.encode()), **fields},
        headers=api.headers,
    )


def test_import_answers_202_with_a_task_whose_report_can_be_polled(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug, LINES, on_conflict="skip")
    assert response.status_code == 202, response.content
    task = response.json()
    assert (task["source_name"], task["on_conflict"], task["dataset"]) == (
        "batch.jsonl",
        "skip",
        dataset.slug,
    )

    done = as_annotator.get(f"/imports/{task['id']}").json()
    assert done["status"] == "succeeded"
    assert done["progress"]["percent"] == 100
    assert done["report"]["counts"]["created"] == 2
    assert sorted(Transcript.objects.values_list("external_id", flat=True)) == ["a", "b"]


def test_a_rejected_import_reports_every_bad_line(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug, LINES + "{not json\n")
    done = as_annotator.get(f"/imports/{response.json()['id']}").json()
    assert done["status"] == "failed"
    assert done["report"]["counts"]["failed"] == 1
    assert "Nothing was imported" in done["error"]
    assert not Transcript.objects.exists()


def test_import_errors(as_viewer, as_annotator, as_outsider, dataset):
    assert_error(upload(as_viewer, dataset.slug, LINES), 403, "forbidden")
    assert_error(upload(as_outsider, dataset.slug, LINES), 404, "not-found")
    assert_error(upload(as_annotator, dataset.slug, LINES, spec="bogus"), 422, "invalid-request")
    no_file = as_annotator.client.post(
        f"{PREFIX}/datasets/{dataset.slug}/imports", {}, headers=as_annotator.headers
    )
    assert_error(no_file, 422, "invalid-request")
    assert not ImportTask.objects.exists()


def test_an_outsider_cannot_see_an_import(
    as_annotator, as_outsider, dataset, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        task_id = upload(as_annotator, dataset.slug, LINES).json()["id"]
    assert_error(as_outsider.get(f"/imports/{task_id}"), 404, "not-found")


# --- export -------------------------------------------------------------------------------


@pytest.fixture
def three(dataset, annotator):
    return [
        create_transcript(
            dataset,
            author=annotator,
            text=conversation(turns=n + 1),
            spec="openchatml-2.2",
            external_id=f"t{n}",
        )
        for n in range(3)
    ]


def lines_of(response) -> list[dict]:
    assert response.status_code == 200, response.content
    assert response.streaming
    assert response["Content-Type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]


def test_export_streams_one_json_line_per_transcript(as_annotator, dataset, three):
    lines = lines_of(as_annotator.get(f"/datasets/{dataset.slug}/export"))
    assert [line["id"] for line in lines] == ["t0", "t1", "t2"]
    assert lines[0]["text"] == three[0].source_text
    assert lines[0]["spec"] == "openchatml-2.2"


def test_export_as_chat_rows_filtered_by_status(as_annotator, dataset, three):
    url = f"/datasets/{dataset.slug}/export"
    rows = lines_of(as_annotator.get(url, {"format": "messages"}))
    assert [len(row["messages"]) for row in rows] == [2, 4, 6]
    assert lines_of(as_annotator.get(url, {"status": "approved"})) == []


def test_export_reads_the_dataset_in_constant_queries(
    as_annotator, dataset, three, django_assert_max_num_queries
):
    with django_assert_max_num_queries(6):
        lines = lines_of(
            as_annotator.get(f"/datasets/{dataset.slug}/export", {"spec": "openai-messages"})
        )
    assert len(lines) == 3


def test_a_viewer_exports_only_what_end_users_see(as_viewer, dataset, three):
    url = f"/datasets/{dataset.slug}/export"
    assert_error(as_viewer.get(url), 403, "E-PERM-VISIBILITY")
    assert len(lines_of(as_viewer.get(url, {"audience": "end_user"}))) == 3


def test_export_errors(as_annotator, as_outsider, dataset):
    url = f"/datasets/{dataset.slug}/export"
    assert_error(as_annotator.get(url, {"spec": "nope"}), 422, "invalid-request")
    assert_error(as_annotator.get(url, {"format": "csv"}), 422, "invalid-request")
    assert_error(as_annotator.get(url, {"audience": "debug"}), 422, "invalid-request")
    assert_error(as_outsider.get(url), 404, "not-found")


def test_an_upload_name_with_a_very_long_extension_is_imported(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    # The spooled copy keeps at most 16 characters of the extension (a file name over the
    # file system's limit was an OSError, a 500).
    name = "batch." + "x" * 300
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug, LINES, name=name)
    assert response.status_code == 202, response.content
    done = as_annotator.get(f"/imports/{response.json()['id']}").json()
    assert done["status"] == "succeeded", done
    assert done["report"]["counts"]["created"] == 2


def test_an_import_of_deeply_nested_json_fails_with_a_report_not_a_dead_task(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug, "[" * 100_000, name="deep.json")
    assert response.status_code == 202, response.content
    done = as_annotator.get(f"/imports/{response.json()['id']}").json()
    assert done["status"] == "failed"
    assert "could not be detected" in done["error"]
    assert not Transcript.objects.exists()


def test_a_streamed_export_can_end_with_what_it_lost(as_annotator, dataset, three, annotator):
    text = demo_texts()["openchatml-2.2"]  # tool calls with call ids, which ChatML cannot say
    create_transcript(dataset, author=annotator, text=text, external_id="tools")
    url = f"/datasets/{dataset.slug}/export"
    *rows, last = lines_of(as_annotator.get(url, {"spec": "chatml", "summary": "true"}))
    assert [row["id"] for row in rows] == ["t0", "t1", "t2", "tools"]
    assert set(last) == {"summary"}
    summary = last["summary"]
    assert summary["transcripts"] == 4
    assert summary["loss_count"] > 0
    assert summary["losses"]
    assert all(kind["transcripts"] == 1 and kind["example"] for kind in summary["losses"].values())


def test_a_streamed_export_without_losses_says_so_when_asked(as_annotator, dataset, three):
    url = f"/datasets/{dataset.slug}/export"
    *rows, last = lines_of(as_annotator.get(url, {"summary": "true"}))
    assert len(rows) == 3
    assert last == {"summary": {"transcripts": 3, "loss_count": 0, "losses": {}}}
    assert "summary" not in lines_of(as_annotator.get(url))[-1]
