"""The dataset page's import form offers the upload's shape: an HH-RLHF file read as ``hh``
becomes transcripts with their pairs; a shape the form does not offer is refused with a
message on the form."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from editor.models import ImportTask, PreferencePair, TaskStatus
from tests.api.test_preference_import_shape import HH_FILE, assert_hh_pairs_imported
from tests.editor.dataset_page import whole_page

pytestmark = pytest.mark.django_db


def post_import(client, dataset, **fields):
    upload = SimpleUploadedFile("hh.jsonl", HH_FILE.encode(), content_type="application/jsonl")
    return client.post(
        f"/datasets/{dataset.slug}/import/", {"file": upload, "on_conflict": "update", **fields}
    )


def test_the_import_form_offers_the_shape_with_a_help_text(client, dataset, annotator):
    client.force_login(annotator)
    html = whole_page(client, f"/datasets/{dataset.slug}/")
    assert '<select name="shape" aria-describedby="import_shape_helptext"' in html
    for value in ('value="" selected', 'value="transcripts"', 'value="preference"', 'value="hh"'):
        assert value in html
    assert "Human:/Assistant: turns" in html  # the help text


def test_an_hh_upload_with_shape_hh_gives_pairs(
    client, dataset, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_import(client, dataset, shape="hh")
    task = ImportTask.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/imports/{task.pk}/"
    assert (task.status, task.shape) == (TaskStatus.SUCCEEDED, "hh")
    assert_hh_pairs_imported(dataset)


def test_an_unknown_shape_is_refused_on_the_form(client, dataset, annotator):
    client.force_login(annotator)
    response = post_import(client, dataset, shape="dpo")
    assert response.status_code == 400
    assert "Select a valid choice. dpo is not one of the available choices." in (
        response.content.decode()
    )
    assert not ImportTask.objects.exists() and not PreferencePair.objects.exists()
