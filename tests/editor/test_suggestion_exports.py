"""A judge's suggestions in exports only when asked (``with_suggestions``), in every way out:
JSONL and chat rows, Parquet files, the HTML export form (streamed and in the background) and
``ocm pull --with-suggestions``; never among the people's annotations, never otherwise."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from editor import filestore
from editor.exporting import export_dataset
from editor.exporting.tasks import run_export_task, start_export_task
from editor.formats.cli import main
from editor.labels import create_label_schema
from editor.models import Annotation, ApiToken, ExportTask, Suggestion
from editor.storage.create import create_transcript
from tests.editor.dataset_page import whole_page
from tests.editor.samples import conversation
from tests.support.judging import QUESTIONS


def _world(dataset, annotator):
    """Two transcripts; the second has the judge's suggestion and a person's answer."""
    schema = create_label_schema(
        dataset,
        author=dataset.memberships.get(role="curator").user,
        name="Quality",
        questions=QUESTIONS,
    )
    first, second = (
        create_transcript(
            dataset, author=annotator, text=conversation(), spec="openchatml-2.2", title=title
        )
        for title in ("first", "second")
    )
    Suggestion.objects.create(
        transcript=second,
        schema_version=schema.current_version,
        question="helpful",
        value="no",
        rationale="It dodged.",
        model="judge-model",
    )
    Annotation.objects.create(
        transcript=second,
        schema_version=schema.current_version,
        annotator=annotator,
        question="helpful",
        value="yes",
        state="submitted",
    )
    return first, second


def _lines(export) -> dict[str, dict]:
    return {line["title"]: line for line in map(json.loads, export)}


def _suggested(line: dict) -> list:
    return [(s["question"], s["value"], s["source"]) for s in line["suggestions"]]


@pytest.mark.django_db
def test_jsonl_and_chat_rows_carry_suggestions_only_when_asked(dataset, annotator):
    _world(dataset, annotator)
    plain = _lines(export_dataset(dataset, with_annotations=True))
    assert not any("suggestions" in line for line in plain.values())
    assert [(a["question"], a["value"]) for a in plain["second"]["annotations"]] == [
        ("helpful", "yes")
    ]

    asked = _lines(export_dataset(dataset, with_annotations=True, with_suggestions=True))
    assert asked["first"]["suggestions"] == []
    assert _suggested(asked["second"]) == [("helpful", "no", "model")]
    # The person's answer stays the person's; the model's is not among the annotations.
    assert [(a["question"], a["value"]) for a in asked["second"]["annotations"]] == [
        ("helpful", "yes")
    ]

    rows = [json.loads(line) for line in export_dataset(dataset, format="messages")]
    assert not any("suggestions" in row for row in rows)
    rows = [
        json.loads(line)
        for line in export_dataset(dataset, format="messages", with_suggestions=True)
    ]
    assert sorted(len(row["suggestions"]) for row in rows) == [0, 1]


@pytest.mark.django_db
def test_parquet_files_carry_them_as_a_json_column_only_when_asked(dataset, annotator, curator):
    _world(dataset, annotator)

    def table(**options):
        task = start_export_task(dataset, curator, file_format="parquet", **options)
        done = run_export_task(task.pk)
        assert done.status == "succeeded", done.error
        return pq.read_table(Path(filestore.exports().path(done.file_path))).to_pylist()

    assert all("suggestions" not in row for row in table())
    rows = {row["title"]: row for row in table(with_suggestions=True)}
    # The first row has none: the column is still JSON text, the second row's kept whole.
    assert json.loads(rows["first"]["suggestions"]) == []
    assert _suggested({"suggestions": json.loads(rows["second"]["suggestions"])}) == [
        ("helpful", "no", "model")
    ]


@pytest.mark.django_db
def test_the_html_export_form_asks_for_them(client, dataset, annotator, curator, viewer):
    _world(dataset, annotator)
    client.force_login(curator)
    page = whole_page(client, f"/datasets/{dataset.slug}/")
    assert 'name="with_suggestions"' in page

    url = f"/datasets/{dataset.slug}/export/"
    plain = client.get(url, {"format": "jsonl"})
    plain = _lines(line.decode() for line in plain.streaming_content)
    assert not any("suggestions" in line for line in plain.values())
    asked = client.get(url, {"format": "jsonl", "with_suggestions": "on"})
    asked = _lines(line.decode() for line in asked.streaming_content)
    assert _suggested(asked["second"]) == [("helpful", "no", "model")]

    refused = client.get(url, {"format": "jsonl", "with_suggestions": "on", "audience": "end_user"})
    assert refused.status_code == 403
    assert "Leave “With the judge's suggestions” unchecked." in refused.content.decode()

    started = client.post(
        f"/datasets/{dataset.slug}/exports/", {"format": "jsonl", "with_suggestions": "on"}
    )
    assert started.status_code == 302
    task = ExportTask.objects.get()
    assert task.options["with_suggestions"] is True
    done = run_export_task(task.pk) or ExportTask.objects.get()  # queued after the commit
    with filestore.exports().open(done.file_path) as file:
        lines = _lines(line.decode() for line in file)
    assert _suggested(lines["second"]) == [("helpful", "no", "model")]

    client.force_login(viewer)  # the judge read hidden parts: not a viewer's to export
    answer = client.post(
        f"/datasets/{dataset.slug}/exports/",
        {"format": "jsonl", "with_suggestions": "on", "audience": "end_user"},
    )
    assert answer.status_code == 403 and ExportTask.objects.count() == 1


@pytest.fixture
def remote(live_server, curator, monkeypatch):
    monkeypatch.setenv("OCM_URL", live_server.url)
    monkeypatch.setenv("OCM_TOKEN", ApiToken.issue(curator)[1])
    return live_server


def _ocm(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


@pytest.mark.django_db(transaction=True)
def test_ocm_pull_with_suggestions(remote, dataset, annotator):
    _world(dataset, annotator)
    status, out, err = _ocm("pull", dataset.slug, "--to", "openchatml-2.2")
    assert status == 0, err
    assert not any("suggestions" in line for line in _lines(out.splitlines()).values())

    status, out, err = _ocm("pull", dataset.slug, "--to", "openchatml-2.2", "--with-suggestions")
    assert status == 0, err
    assert _suggested(_lines(out.splitlines())["second"]) == [("helpful", "no", "model")]

    status, _, err = _ocm(
        "pull", dataset.slug, "--to", "openchatml-2.2", "--version", "v1", "--with-suggestions"
    )
    assert status == 2 and "suggestions" in err
