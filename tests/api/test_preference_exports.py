"""Preference data through the API and the dataset page: an uploaded pair file imports;
format=preference with its shape and sources, streamed or prepared (as Parquet too);
viewers refused; bad option combinations a 422 / a form message, never a 500."""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from editor.importing import import_transcripts
from editor.models import PreferencePair
from editor.pairs import exclude_pair

from .conftest import PREFIX, assert_error

pytestmark = pytest.mark.django_db

HH = [
    {
        "chosen": f"\n\nHuman: Q{n}\n\nAssistant: good",
        "rejected": f"\n\nHuman: Q{n}\n\nAssistant: bad",
    }
    for n in range(3)
]


@pytest.fixture
def pairs(dataset, curator):
    data = "".join(json.dumps(row) + "\n" for row in HH).encode()
    import_transcripts(data, dataset=dataset, author=curator, name="hh.jsonl")
    exclude_pair(PreferencePair.objects.order_by("pk").last(), curator)


def test_streamed_hh_rows_with_the_left_out_pairs_in_the_summary(as_annotator, dataset, pairs):
    response = as_annotator.get(
        f"/datasets/{dataset.slug}/export",
        {"format": "preference", "preference_shape": "hh", "summary": "true", "sources": "import"},
    )
    assert response.status_code == 200, response.content
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    rows, summary = lines[:-1], lines[-1]["summary"]
    assert [{k: r[k] for k in ("chosen", "rejected")} for r in rows] == HH[:2]
    assert summary["pairs"] == 2 and summary["left_out"]["excluded"] == 1


def test_a_prepared_parquet_export_of_pairs(
    as_annotator, dataset, pairs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = as_annotator.post(
            f"/datasets/{dataset.slug}/exports",
            {"format": "preference", "file_format": "parquet"},
        )
    assert response.status_code == 202, response.content
    task = as_annotator.get(f"/exports/{response.json()['id']}").json()
    assert task["status"] == "succeeded", task["error"]
    assert task["file_name"] == f"{dataset.slug}-preference.parquet"
    assert task["losses"]["pairs"] == 2 and task["losses"]["left_out"]["excluded"] == 1
    download = as_annotator.get(f"/exports/{task['id']}/download")
    assert download["Content-Type"] == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(b"".join(download.streaming_content)))
    (message,) = table.column("chosen").to_pylist()[0]
    assert (message["role"], message["content"], message["tool_calls"]) == (
        "assistant",
        "good",
        None,
    )


def test_viewers_may_not_export_pairs(as_viewer, dataset, pairs):
    response = as_viewer.get(f"/datasets/{dataset.slug}/export", {"format": "preference"})
    assert_error(response, 403, "E-PERM-VISIBILITY")
    started = as_viewer.post(f"/datasets/{dataset.slug}/exports", {"format": "preference"})
    assert started.status_code == 403


@pytest.mark.parametrize(
    "options",
    [
        {"format": "preference", "preference_shape": "hh", "spec": "chatml"},
        {"format": "preference", "preference_shape": "standard", "spec": "sharegpt"},
        {"format": "preference", "audience": "end_user"},
        {"format": "preference", "sources": ["gossip"]},
        {"format": "jsonl", "file_format": "xlsx"},
    ],
)
def test_options_that_do_not_go_together_are_a_422(as_curator, dataset, pairs, options):
    response = as_curator.post(f"/datasets/{dataset.slug}/exports", options)
    assert response.status_code == 422, response.content
    assert set(response.json()) == {"code", "message", "details"}


def test_the_dataset_page_previews_pairs_and_refuses_bad_combinations(
    client, curator, dataset, pairs
):
    client.force_login(curator)
    url = reverse("dataset-export", args=[dataset.slug])
    preview = client.get(
        url,
        {"format": "preference", "sources": ["import"], "preview": "1"},
        headers={"HX-Request": "true"},
    )
    assert preview.status_code == 200
    page = preview.content.decode()
    assert 'data-testid="export-pairs"' in page and "<strong>2</strong> pairs" in page
    assert "1 excluded" in page
    bad = client.get(
        url,
        {"format": "preference", "preference_shape": "hh", "spec": "chatml", "preview": "1"},
        headers={"HX-Request": "true"},
    )
    assert bad.status_code == 400 and 'data-testid="export-refused"' in bad.content.decode()
    download = client.get(url, {"format": "preference", "preference_shape": "hh"})
    rows = [json.loads(line) for line in b"".join(download.streaming_content).splitlines()]
    assert len(rows) == 2 and rows[0]["chosen"] == HH[0]["chosen"]


def test_an_uploaded_hh_file_imports_as_pairs_through_the_task(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    content = "".join(json.dumps(row) + "\n" for row in HH)
    with django_capture_on_commit_callbacks(execute=True):
        response = as_annotator.client.post(
            f"{PREFIX}/datasets/{dataset.slug}/imports",
            {"file": SimpleUploadedFile("hh.jsonl", content.encode())},
            headers=as_annotator.headers,
        )
    assert response.status_code == 202, response.content
    done = as_annotator.get(f"/imports/{response.json()['id']}").json()
    assert done["status"] == "succeeded", done["error"]
    assert done["report"]["counts"]["created"] == 3
    pairs = PreferencePair.objects.filter(transcript__dataset=dataset, source="import")
    assert pairs.count() == 3
    assert {pair.chosen[0]["content"] for pair in pairs} == {"good"}


def test_the_dataset_page_tells_a_viewer_why_pairs_do_not_export(client, viewer, dataset, pairs):
    client.force_login(viewer)
    url = reverse("dataset-export", args=[dataset.slug])
    response = client.get(url, {"format": "preference", "audience": "end_user"})
    page = response.content.decode()
    assert response.status_code == 403
    assert "your role does not export them" in page
    assert "Choose “what the end user sees”" not in page
