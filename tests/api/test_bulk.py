"""Bulk actions (`POST /datasets/{slug}/bulk`, editor.bulk): by ids or by filter, all or nothing."""

from __future__ import annotations

from unittest import mock

import pytest

from editor import bulk, queues
from editor.bulk import actions as bulk_actions
from editor.errors import ConflictError
from editor.models import (
    BulkTask,
    Dataset,
    ExportTask,
    QueueItem,
    Revision,
    Status,
    TaskStatus,
    Transcript,
)
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

from .conftest import assert_error

pytestmark = pytest.mark.django_db

BROKEN = "<|start|>user<|message|>no end"


@pytest.fixture
def five(dataset, curator):
    """Five transcripts: three drafts, two in review (titles say which)."""
    made = []
    for n, status in enumerate(["draft", "draft", "draft", "in_review", "in_review"]):
        transcript = create_transcript(
            dataset,
            author=curator,
            text=conversation(),
            spec="openchatml-2.2",
            title=f"{status} {n}",
        )
        Transcript.objects.filter(pk=transcript.pk).update(status=status)
        made.append(transcript.pk)
    return made


def statuses(ids):
    return [Transcript.all_objects.get(pk=pk).status for pk in ids]


def revisions(ids):
    return Revision.objects.filter(transcript_id__in=ids).count()


def test_a_transition_on_picked_ids_moves_those_it_applies_to_and_skips_the_rest(
    as_curator, dataset, five
):
    before = revisions(five)
    response = as_curator.post(
        f"/datasets/{dataset.slug}/bulk",
        {"action": "transition", "transition": "approve", "ids": five},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["matched"] == 5
    assert body["changed"] == five[3:]
    assert [s["id"] for s in body["skipped"]] == five[:3]
    assert body["skipped"][0]["reason"] == "cannot approve from draft"
    assert statuses(five) == ["draft"] * 3 + ["approved"] * 2
    assert revisions(five) == before + 2  # one revision per changed transcript


def test_set_status_takes_each_transcripts_own_move_there(as_curator, as_annotator, dataset, five):
    url = f"/datasets/{dataset.slug}/bulk"
    before = revisions(five)
    response = as_curator.post(url, {"action": "set_status", "status": "approved", "ids": five})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["changed"] == five[3:]  # approve: the one move to approved, from in_review
    assert body["skipped"][0] == {"id": five[0], "reason": "no move from draft to approved"}
    assert statuses(five) == ["draft"] * 3 + ["approved"] * 2
    assert revisions(five) == before + 2
    notes = Revision.objects.filter(transcript_id=five[3]).order_by("-number")
    assert notes.first().note.startswith("approve")  # the move, as a transition names it

    response = as_annotator.post(url, {"action": "set_status", "status": "in_review", "ids": five})
    assert response.json()["changed"] == five[:3]
    assert [s["reason"] for s in response.json()["skipped"]] == [
        "no move from approved to in_review"
    ] * 2
    again = as_curator.post(
        url, {"action": "set_status", "status": "in_review", "filter": {"status": ["in_review"]}}
    )
    assert {s["reason"] for s in again.json()["skipped"]} == {"already in_review"}
    assert_error(
        as_annotator.post(url, {"action": "set_status", "status": "approved", "ids": five}),
        403,
        "forbidden",
    )
    assert_error(
        as_curator.post(url, {"action": "set_status", "status": "done", "ids": five}),
        422,
        "unknown-status",
    )


def test_everything_matching_a_filter(as_annotator, dataset, five):
    response = as_annotator.post(
        f"/datasets/{dataset.slug}/bulk",
        {"action": "transition", "transition": "submit", "filter": {"status": ["draft"]}},
    )
    assert response.status_code == 200, response.content
    assert response.json()["changed"] == five[:3]
    assert statuses(five) == ["in_review"] * 5


def test_delete_then_undo(as_curator, dataset, five):
    deleted = as_curator.post(
        f"/datasets/{dataset.slug}/bulk", {"action": "delete", "ids": five[:2]}
    )
    assert deleted.json()["changed"] == five[:2]
    assert Transcript.objects.filter(pk__in=five).count() == 3
    undone = as_curator.post(
        f"/datasets/{dataset.slug}/bulk", {"action": "undelete", "ids": deleted.json()["changed"]}
    )
    assert undone.status_code == 200, undone.content
    assert Transcript.objects.filter(pk__in=five).count() == 5


def test_revalidate_updates_stored_diagnostics_without_a_revision(as_annotator, dataset, five):
    Transcript.objects.filter(pk=five[0]).update(
        diagnostics=[{"code": "E-STALE", "severity": "error"}], error_count=1
    )
    before = revisions(five)
    body = as_annotator.post(
        f"/datasets/{dataset.slug}/bulk", {"action": "revalidate", "ids": five}
    ).json()
    assert body["changed"] == [five[0]]
    assert {s["reason"] for s in body["skipped"]} == {"diagnostics unchanged"}
    fixed = Transcript.objects.get(pk=five[0])
    assert (
        fixed.error_count == 0
        and fixed.diagnostics == Transcript.objects.get(pk=five[1]).diagnostics
    )
    assert revisions(five) == before


def test_add_to_a_queue_appends_what_is_not_there_yet(as_curator, dataset, curator, five):
    queue = queues.create_queue(
        # In a known order: a queryset without one comes in whatever order the database likes.
        dataset,
        Transcript.objects.filter(pk__in=five[:2]).order_by("pk"),
        name="Q",
        author=curator,
    )
    body = as_curator.post(
        f"/datasets/{dataset.slug}/bulk", {"action": "add_to_queue", "queue": queue.pk, "ids": five}
    ).json()
    assert body["changed"] == five[2:]
    assert [s["id"] for s in body["skipped"]] == five[:2]
    assert (
        list(
            QueueItem.objects.filter(queue=queue)
            .order_by("position")
            .values_list("transcript_id", flat=True)
        )
        == five
    )


def test_export_of_a_selection_is_prepared_in_the_background(
    as_annotator, dataset, five, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        body = as_annotator.post(
            f"/datasets/{dataset.slug}/bulk",
            {"action": "export", "ids": five[:2], "spec": "sharegpt"},
        ).json()
    assert body["task"]["kind"] == "export"
    task = ExportTask.objects.get(pk=body["task"]["id"])
    assert task.status == TaskStatus.SUCCEEDED, task.error
    assert task.transcript_count == 2


def test_a_failure_midway_changes_nothing(as_curator, dataset, five):
    before = (statuses(five), revisions(five))
    real = bulk_actions.apply_transition
    calls = []

    def second_one_conflicts(transcript, *args, **kwargs):
        calls.append(transcript.pk)
        if len(calls) == 2:
            raise ConflictError(expected_version=1, current_version=2, current={})
        return real(transcript, *args, **kwargs)

    with mock.patch.object(bulk_actions, "apply_transition", side_effect=second_one_conflicts):
        response = as_curator.post(
            f"/datasets/{dataset.slug}/bulk",
            {"action": "transition", "transition": "submit", "ids": five},
        )
    assert response.status_code == 409
    assert (statuses(five), revisions(five)) == before  # the first one was rolled back too


def test_big_selections_run_as_a_background_task(
    as_curator, dataset, five, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(bulk, "INLINE_LIMIT", 2)
    with django_capture_on_commit_callbacks(execute=True):
        body = as_curator.post(
            f"/datasets/{dataset.slug}/bulk", {"action": "delete", "filter": {}}
        ).json()
    assert body["task"]["kind"] == "bulk"
    task = as_curator.get(f"/bulk/{body['task']['id']}").json()
    assert task["status"] == "succeeded", task["error"]
    assert task["result"]["changed"] == five
    assert task["progress"] == {"done": 5, "total": 5}
    assert not Transcript.objects.filter(pk__in=five).exists()
    assert BulkTask.objects.get().transcript_ids == five


def test_who_may_do_what(as_viewer, as_annotator, as_outsider, dataset, five):
    url = f"/datasets/{dataset.slug}/bulk"
    assert_error(as_viewer.post(url, {"action": "delete", "ids": five}), 403, "forbidden")
    assert_error(
        as_annotator.post(url, {"action": "transition", "transition": "approve", "ids": five}),
        403,
        "forbidden",
    )
    assert_error(as_annotator.post(url, {"action": "undelete", "ids": five}), 403, "forbidden")
    assert as_outsider.post(url, {"action": "delete", "ids": five}).status_code == 404
    assert statuses(five) == ["draft"] * 3 + ["in_review"] * 2


def test_bad_selections_are_refused_whole(as_curator, dataset, curator, five):
    other = Dataset.objects.create(name="Other", slug="other")
    foreign = create_transcript(other, author=None, text=conversation(), spec="openchatml-2.2")
    url = f"/datasets/{dataset.slug}/bulk"
    body = assert_error(
        as_curator.post(url, {"action": "delete", "ids": [five[0], foreign.pk]}),
        422,
        "not-in-dataset",
    )
    assert body["details"] == {"ids": [foreign.pk]}
    assert_error(as_curator.post(url, {"action": "delete"}), 422, "invalid-request")
    assert_error(
        as_curator.post(url, {"action": "delete", "filter": {"status": ["nope"]}}),
        422,
        "invalid-filter",
    )
    assert_error(
        as_curator.post(url, {"action": "transition", "transition": "fly", "ids": five}),
        422,
        "unknown-transition",
    )
    assert Transcript.objects.filter(pk__in=five).count() == 5
    assert Status.DRAFT in statuses(five)
