"""Deleting a dataset for good (curators): everything in it goes, set-based and in short
batches, and nothing of any other dataset; by the page (slug typed to confirm) and the API."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

from editor import membership, queues
from editor.errors import NotAllowed
from editor.labels import create_label_schema
from editor.labels.annotations import create_annotation
from editor.models import Dataset, Membership, Message, Role, Transcript
from editor.search import sqlite_index
from editor.storage import purge
from editor.storage.create import create_transcript
from editor.storage.save import delete_transcript
from tests.api.conftest import api_client_for
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db(transaction=True)


def fill(dataset, curator, count: int) -> list[Transcript]:
    transcripts = [
        create_transcript(dataset, author=curator, text=conversation(), spec="openchatml-2.2")
        for _ in range(count)
    ]
    schema = create_label_schema(
        dataset,
        author=curator,
        name="Q",
        questions=[{"key": "ok", "kind": "text", "prompt": "OK?"}],
    )
    create_annotation(transcripts[0], annotator=curator, schema=schema, question="ok", value="fine")
    queue = queues.create_queue(dataset, transcripts, name="Q", author=curator)
    queues.claim_next(queue, curator)
    delete_transcript(transcripts[-1], author=curator, expected_version=transcripts[-1].version)
    return transcripts


def rows_of(dataset_id: int, transcript_ids: list[int]) -> dict[str, int]:
    """Every row of every app model that belongs to the dataset or its transcripts."""
    found = {}
    for model in apps.get_app_config("editor").get_models():
        names = {f.name for f in model._meta.get_fields()}
        if "dataset" in names:
            rows = model._base_manager.filter(dataset_id=dataset_id)
        elif "transcript" in names:
            rows = model._base_manager.filter(transcript_id__in=transcript_ids)
        else:
            continue
        if count := rows.count():
            found[model.__name__] = count
    return found


def test_a_curator_deletes_a_dataset_and_everything_in_it(dataset, curator, annotator):
    transcripts = fill(dataset, curator, 7)
    other = Dataset.objects.create(name="Other", slug="other")
    Membership.objects.create(dataset=other, user=curator, role=Role.CURATOR)
    kept = create_transcript(other, author=curator, text=conversation(), spec="openchatml-2.2")
    ids = [t.pk for t in transcripts]
    assert rows_of(dataset.pk, ids)["Message"] > 0
    gone = set(Message.objects.filter(transcript__in=ids).values_list("pk", flat=True))

    assert membership.delete_dataset(dataset, author=curator) == 7
    assert rows_of(dataset.pk, ids) == {}
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    assert Message.objects.filter(transcript=kept).count() == len(kept.stored_messages())
    if connection.vendor == "sqlite":  # the deleted messages' words are out of its index
        word = kept.stored_messages()[1].content.split()[0]
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT rowid FROM {sqlite_index.TABLE} WHERE {sqlite_index.TABLE} MATCH %s",
                [f'"{word}"'],
            )
            indexed = {row[0] for row in cursor.fetchall()}
        assert indexed and not indexed & gone


def test_the_batches_cover_a_dataset_larger_than_one(dataset, curator, monkeypatch):
    monkeypatch.setattr(purge, "PURGE_BATCH", 3)
    transcripts = fill(dataset, curator, 8)
    assert membership.delete_dataset(dataset, author=curator) == 8
    assert rows_of(dataset.pk, [t.pk for t in transcripts]) == {}


def test_the_rows_under_a_transcript_are_all_known_to_the_purge():
    """A model added under transcripts must join ``ROWS_OF_TRANSCRIPTS`` (or the raw delete of
    transcripts would fail on its foreign key, or leave rows)."""
    under = {
        relation.related_model
        for relation in Transcript._meta.related_objects
        if relation.on_delete.__name__ == "CASCADE"
    }
    listed = {model for model, _ in purge.ROWS_OF_TRANSCRIPTS}
    assert under <= listed


def test_only_curators_delete(dataset, annotator, reviewer, viewer):
    for user in (annotator, reviewer, viewer):
        with pytest.raises(NotAllowed):
            membership.delete_dataset(dataset, author=user)
    assert Dataset.objects.filter(pk=dataset.pk).exists()


def test_the_page_asks_for_the_slug_typed(client, dataset, curator):
    fill(dataset, curator, 2)
    client.force_login(curator)
    response = client.post(f"/datasets/{dataset.slug}/delete/", {"confirm": "not it"})
    assert response.status_code == 400
    assert f"Type {dataset.slug} exactly" in response.content.decode()
    assert Dataset.objects.filter(pk=dataset.pk).exists()
    response = client.post(f"/datasets/{dataset.slug}/delete/", {"confirm": dataset.slug})
    assert response.status_code == 302 and response["Location"] == "/"
    assert not Dataset.objects.filter(pk=dataset.pk).exists()


def test_the_api_deletes_with_delete(dataset, curator, annotator):
    fill(dataset, curator, 2)
    response = api_client_for(annotator).delete(f"/datasets/{dataset.slug}")
    assert response.status_code == 403
    assert api_client_for(curator).delete(f"/datasets/{dataset.slug}").status_code == 204
    assert api_client_for(curator).get(f"/datasets/{dataset.slug}").status_code == 404
