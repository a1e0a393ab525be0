"""An upload's ``shape`` (how its rows are read) through the API, the client and ``ocm push``:
an HH-RLHF file read with ``shape=hh`` becomes transcripts with their pairs; ``transcripts``
reads the same rows as transcripts (and fails them); an unknown shape is refused."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from editor.client import Client
from editor.formats.cli import main
from editor.models import Alternative, ApiToken, ImportTask, PreferencePair, Transcript

from .conftest import PREFIX, assert_error

HH_ROWS = [
    {
        "chosen": "\n\nHuman: What is 2+2?\n\nAssistant: 4.",
        "rejected": "\n\nHuman: What is 2+2?\n\nAssistant: 5.",
    },
    {
        "chosen": "\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: Capital of France?\n\n"
        "Assistant: Paris.",
        "rejected": "\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: Capital of France?\n\n"
        "Assistant: Lyon.",
    },
]
HH_FILE = "".join(json.dumps(row) + "\n" for row in HH_ROWS)


def upload(api, slug, content: str = HH_FILE, name="hh.jsonl", **fields):
    return api.client.post(
        f"{PREFIX}/datasets/{slug}/imports",
        {"file": SimpleUploadedFile(name, content.encode()), **fields},
        headers=api.headers,
    )


def assert_hh_pairs_imported(dataset) -> None:
    """Each HH row is a transcript whose last turn has the two answers as alternatives, and
    an imported pair (chosen, rejected) as the row says."""
    pairs = PreferencePair.objects.filter(transcript__dataset=dataset).order_by("message_index")
    assert [(p.source, p.chosen[0]["content"], p.rejected[0]["content"]) for p in pairs] == [
        ("import", "4.", "5."),
        ("import", "Paris.", "Lyon."),
    ]
    paris = Transcript.objects.get(dataset=dataset, pk=pairs[1].transcript_id)
    assert [m.content for m in paris.canonical().messages] == [
        "Hi",
        "Hello!",
        "Capital of France?",
        "Paris.",
    ]
    answers = Alternative.objects.filter(transcript=paris).order_by("pk")
    assert [(a.message_index, a.messages[0]["content"]) for a in answers] == [
        (3, "Paris."),
        (3, "Lyon."),
    ]


@pytest.mark.django_db
def test_an_hh_upload_with_shape_hh_gives_pairs(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug, shape="hh")
    assert response.status_code == 202, response.content
    assert response.json()["shape"] == "hh"
    done = as_annotator.get(f"/imports/{response.json()['id']}").json()
    assert (done["status"], done["shape"]) == ("succeeded", "hh"), done
    assert done["report"]["counts"]["created"] == 2
    assert_hh_pairs_imported(dataset)


@pytest.mark.django_db
def test_shape_transcripts_reads_the_same_rows_as_transcripts(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    # The shape reaches the importer: told these are transcripts, it does not make pairs of
    # them (rows of chosen and rejected are no transcript: the all-or-nothing import fails).
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug, shape="transcripts")
    done = as_annotator.get(f"/imports/{response.json()['id']}").json()
    assert (done["status"], done["shape"]) == ("failed", "transcripts")
    assert not PreferencePair.objects.exists() and not Transcript.objects.exists()


@pytest.mark.django_db
def test_no_shape_is_stored_as_empty_and_decided_by_the_rows(
    as_annotator, dataset, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_annotator, dataset.slug)
    assert response.json()["shape"] == ""
    assert as_annotator.get(f"/imports/{response.json()['id']}").json()["status"] == "succeeded"
    assert PreferencePair.objects.count() == 2


@pytest.mark.django_db
def test_an_unknown_shape_is_refused_with_a_code(as_annotator, dataset):
    body = assert_error(upload(as_annotator, dataset.slug, shape="dpo"), 422, "invalid-request")
    assert "shape" in json.dumps(body)
    assert not ImportTask.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_client_and_ocm_push_send_the_shape(live_server, annotator, dataset, tmp_path):
    token = ApiToken.issue(annotator)[1]
    path = tmp_path / "hh.jsonl"
    path.write_text(HH_FILE)
    with Client(live_server.url, token) as client:
        task = client.push(dataset.slug, path, shape="hh")
    assert (task.status, task.shape, task.counts["created"]) == ("succeeded", "hh", 2)
    assert_hh_pairs_imported(dataset)

    out, err = io.StringIO(), io.StringIO()
    argv = ["push", str(path), "--dataset", dataset.slug, "--shape", "transcripts"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OCM_URL", live_server.url)
        patch.setenv("OCM_TOKEN", token)
        status = main(argv, out=out, err=err)
    assert status == 1 and ": failed (" in out.getvalue(), err.getvalue()
    assert ImportTask.objects.order_by("-pk").first().shape == "transcripts"


def test_ocm_push_refuses_an_unknown_shape(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["push", "x.jsonl", "--dataset", "d", "--shape", "dpo"])
    assert exited.value.code == 2
    assert "invalid choice: 'dpo'" in capsys.readouterr().err
