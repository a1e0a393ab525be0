"""The dataset page's bulk bar (editor.views.bulk): ticked rows or everything matching the
table's filters, the answer swapped into the table, Undo after a delete, big selections
followed in the background."""

from __future__ import annotations

import pytest

from editor import bulk, queues
from editor.bulk.tasks import run_bulk_task
from editor.models import (
    BulkTask,
    Dataset,
    ExportTask,
    Membership,
    QueueItem,
    Role,
    Transcript,
)
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def five(dataset, curator):
    made = []
    for n, status in enumerate(["draft", "draft", "draft", "in_review", "in_review"]):
        transcript = create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"t{n}"
        )
        Transcript.objects.filter(pk=transcript.pk).update(status=status)
        made.append(transcript.pk)
    return made


def statuses(ids):
    return [Transcript.all_objects.get(pk=pk).status for pk in ids]


def test_the_bar_is_shown_to_editors_with_the_moves_their_role_may_make(
    client, dataset, five, annotator, viewer
):
    client.force_login(annotator)
    page = client.get(f"/datasets/{dataset.slug}/").content.decode()
    assert 'data-testid="bulk-form"' in page
    assert page.count('data-testid="select-row"') == 5
    assert 'value="transition:submit"' in page
    assert 'value="transition:approve"' not in page  # an annotator does not review
    assert f'action="/datasets/{dataset.slug}/bulk/"' in page
    client.force_login(viewer)
    page = client.get(f"/datasets/{dataset.slug}/").content.decode()
    assert 'data-testid="bulk-form"' not in page
    assert 'data-testid="select-row"' not in page


def test_ticked_rows_move_and_the_table_comes_back_with_what_happened(
    client, dataset, five, curator
):
    client.force_login(curator)
    response = client.post(
        f"/datasets/{dataset.slug}/bulk/?status=in_review",
        {"action": "transition:approve", "ids": five[3:]},
        **HTMX,
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="transcript-table"' in html
    assert "2 transcripts moved." in html
    assert statuses(five) == ["draft"] * 3 + ["approved"] * 2
    # The table it answers with is the filtered one, its links on the dataset page's address.
    assert 'data-testid="match-count"' in html and "0 transcripts" in html


def test_everything_matching_the_filters_in_the_forms_address(client, dataset, five, annotator):
    client.force_login(annotator)
    response = client.post(
        f"/datasets/{dataset.slug}/bulk/?status=draft",
        {"action": "transition:submit", "all_matching": "1", "ids": [five[3]]},
        **HTMX,
    )
    assert response.status_code == 200
    assert "3 transcripts moved." in response.content.decode()
    assert statuses(five) == ["in_review"] * 5


def test_delete_then_undo(client, dataset, five, curator):
    client.force_login(curator)
    url = f"/datasets/{dataset.slug}/bulk/"
    html = client.post(url, {"action": "delete", "ids": five[:2]}, **HTMX).content.decode()
    assert "2 transcripts deleted." in html
    assert 'data-testid="bulk-undo"' in html
    assert Transcript.objects.filter(pk__in=five).count() == 3
    html = client.post(url, {"action": "undelete", "ids": five[:2]}, **HTMX).content.decode()
    assert "2 transcripts brought back." in html
    assert Transcript.objects.filter(pk__in=five).count() == 5


def test_an_annotator_deletes_and_is_told_who_can_undo(client, dataset, five, annotator):
    client.force_login(annotator)
    html = client.post(
        f"/datasets/{dataset.slug}/bulk/", {"action": "delete", "ids": five[:1]}, **HTMX
    ).content.decode()
    assert "1 transcript deleted." in html
    assert 'data-testid="bulk-undo"' not in html
    assert "A curator can bring them back." in html


def test_nothing_ticked_or_a_bad_action_is_said_on_the_page(client, dataset, five, annotator):
    client.force_login(annotator)
    url = f"/datasets/{dataset.slug}/bulk/"
    response = client.post(url, {"action": "delete"}, **HTMX)
    assert response.status_code == 422
    assert "Tick some transcripts first" in response.content.decode()
    response = client.post(url, {"action": "explode", "ids": five[:1]}, **HTMX)
    assert response.status_code == 422
    assert "Unknown bulk action" in response.content.decode()
    response = client.post(url, {"action": "delete", "ids": ["1; drop"]}, **HTMX)
    assert response.status_code == 422
    assert Transcript.objects.filter(pk__in=five).count() == 5


def test_a_transcript_of_another_dataset_is_refused_and_nothing_changes(
    client, dataset, five, curator
):
    elsewhere = Dataset.objects.create(name="Elsewhere", slug="elsewhere")
    Membership.objects.create(dataset=elsewhere, user=curator, role=Role.CURATOR)
    foreign = create_transcript(
        elsewhere, author=curator, text=conversation(), spec="openchatml-2.2", title="x"
    )
    client.force_login(curator)
    response = client.post(
        f"/datasets/{dataset.slug}/bulk/", {"action": "delete", "ids": [*five, foreign.pk]}, **HTMX
    )
    assert response.status_code == 422
    assert "not transcripts of this dataset" in response.content.decode()
    assert Transcript.objects.filter(pk__in=[*five, foreign.pk]).count() == 6


def test_viewers_and_outsiders_cannot_act(client, dataset, five, viewer, outsider):
    url = f"/datasets/{dataset.slug}/bulk/"
    client.force_login(viewer)
    assert client.post(url, {"action": "delete", "ids": five}).status_code == 403
    client.force_login(outsider)
    assert client.post(url, {"action": "delete", "ids": five}).status_code == 404
    assert Transcript.objects.filter(pk__in=five).count() == 5


def test_add_to_a_queue_from_the_page(client, dataset, five, curator):
    queue = queues.create_queue(dataset, [], name="Second look", author=curator)
    client.force_login(curator)
    page = client.get(f"/datasets/{dataset.slug}/").content.decode()
    assert f'value="queue:{queue.pk}"' in page
    html = client.post(
        f"/datasets/{dataset.slug}/bulk/",
        {"action": f"queue:{queue.pk}", "ids": five[:2]},
        **HTMX,
    ).content.decode()
    assert "2 transcripts added to the queue." in html
    assert (
        list(QueueItem.objects.filter(queue=queue).values_list("transcript_id", flat=True))
        == (five[:2])
    )


def test_export_of_the_selection_goes_to_the_export_page(client, dataset, five, annotator):
    client.force_login(annotator)
    response = client.post(
        f"/datasets/{dataset.slug}/bulk/", {"action": "export", "ids": five[:2]}, **HTMX
    )
    task = ExportTask.objects.get()
    assert response["HX-Redirect"] == f"/exports/{task.pk}/"
    assert task.options["ids"] == five[:2]


def test_a_big_selection_runs_in_the_background_and_is_followed(
    client, dataset, five, annotator, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(bulk, "INLINE_LIMIT", 2)
    client.force_login(annotator)
    with django_capture_on_commit_callbacks(execute=False):
        html = client.post(
            f"/datasets/{dataset.slug}/bulk/?status=draft",
            {"action": "transition:submit", "all_matching": "1"},
            **HTMX,
        ).content.decode()
    task = BulkTask.objects.get()
    assert 'data-testid="bulk-task"' in html and 'data-status="queued"' in html
    assert f'hx-get="/bulk/{task.pk}/"' in html  # polled
    run_bulk_task(task.pk)
    html = client.get(f"/bulk/{task.pk}/", **HTMX).content.decode()
    assert 'data-status="succeeded"' in html
    assert "3 transcripts moved." in html
    assert "hx-get" not in html  # polling stops
    assert statuses(five) == ["in_review"] * 5


def test_without_htmx_the_action_redirects_back_to_the_filtered_page(
    client, dataset, five, annotator
):
    client.force_login(annotator)
    response = client.post(
        f"/datasets/{dataset.slug}/bulk/?status=draft",
        {"action": "transition:submit", "ids": five[:1]},
    )
    assert response.status_code == 302
    assert response["Location"] == f"/datasets/{dataset.slug}/?status=draft"
    page = client.get(response["Location"]).content.decode()
    assert "1 transcript moved." in page
