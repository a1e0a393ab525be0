"""``queue.completed`` is told once per completion of a queue (editor/queues.py, the
``key`` of ``editor.webhooks.emit``): not again when the same complete queue is seen a second
time, again when items added later are completed; and on PostgreSQL, the last two approvals
made at once tell it exactly once."""

from __future__ import annotations

import contextlib
import threading

import pytest
from django.db import connection

from editor import queues, webhooks
from editor.models import Dataset, Membership, Role, WebhookDelivery, WebhookEndpoint
from tests.editor.test_queues import annotators, make_transcripts
from tests.editor.test_webhooks import Receiver

pytestmark = pytest.mark.django_db


def completions(dataset) -> list[dict]:
    return [
        d.payload["data"]
        for d in WebhookDelivery.objects.filter(
            endpoint__dataset=dataset, event_type="queue.completed"
        ).order_by("pk")
    ]


def hooks(dataset, count: int = 1) -> list[WebhookEndpoint]:
    return [
        WebhookEndpoint.objects.create(
            dataset=dataset, url=f"http://127.0.0.1:{9 + n}/", secret="whsec_AA"
        )
        for n in range(count)
    ]


def work_through(queue, user, reviewer) -> None:
    while (assignment := queues.claim_next(queue, user)) is not None:
        queues.submit(assignment, user)
        queues.review(assignment, reviewer, decision="approve")


def test_a_completion_is_told_once_to_each_endpoint(dataset, curator, annotator, reviewer):
    first, second = hooks(dataset, 2)
    queue = queues.create_queue(
        dataset, make_transcripts(dataset, curator, 2), name="q", author=curator
    )
    work_through(queue, annotator, reviewer)
    told = WebhookDelivery.objects.filter(event_type="queue.completed")
    assert sorted(told.values_list("endpoint", flat=True)) == [first.pk, second.pk]
    assert completions(dataset)[0] == {
        "dataset": dataset.slug,
        "queue_id": queue.pk,
        "queue": "q",
        "items": 2,
    }
    # The same complete queue seen again (a retried request, a second path to the check).
    queues._emit_if_completed(queue)
    queues._emit_if_completed(queue)
    assert told.count() == 2


def test_a_repeated_key_writes_nothing_and_queues_no_send(
    dataset, django_capture_on_commit_callbacks
):
    hooks(dataset)
    with django_capture_on_commit_callbacks() as sends:
        made = webhooks.emit(dataset, "queue.completed", {"queue_id": 1}, key="q1")
        again = webhooks.emit(dataset, "queue.completed", {"queue_id": 1}, key="q1")
    assert len(made) == 1 and again == []
    assert len(sends) == 1
    # Without a key, every emit is an event of its own.
    webhooks.emit(dataset, "queue.completed", {"queue_id": 1})
    assert WebhookDelivery.objects.count() == 2


def test_items_added_after_completion_complete_it_again(dataset, curator, annotator, reviewer):
    hooks(dataset)
    queue = queues.create_queue(
        dataset, make_transcripts(dataset, curator, 1), name="q", author=curator
    )
    work_through(queue, annotator, reviewer)
    assert [c["items"] for c in completions(dataset)] == [1]
    queues.add_items(queue, [t.pk for t in make_transcripts(dataset, curator, 2)], author=curator)
    assert not queues.is_complete(queue)
    work_through(queue, annotator, reviewer)
    assert [c["items"] for c in completions(dataset)] == [1, 3]


def test_not_told_before_every_item_has_its_overlap(
    dataset, curator, annotator, reviewer, django_user_model
):
    hooks(dataset)
    queue = queues.create_queue(
        dataset, make_transcripts(dataset, curator, 1), name="q", author=curator, overlap=2
    )
    work_through(queue, annotator, reviewer)  # one of the two approvals the item needs
    assert completions(dataset) == []
    (other,) = annotators(django_user_model, dataset, 1)
    work_through(queue, other, reviewer)
    assert len(completions(dataset)) == 1


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite serializes writers with one database lock: two approvals never overlap",
)
@pytest.mark.django_db(transaction=True)
def test_the_last_two_approvals_at_once_tell_it_exactly_once(
    django_user_model, settings, monkeypatch
):
    dataset = Dataset.objects.create(name="Race", slug="race")
    curator = django_user_model.objects.create_user("race-curator")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    # Deliveries are sent as each approval commits: a real receiver takes them.
    settings.OCM_WEBHOOKS_ALLOW_PRIVATE = True
    receiver = Receiver()
    hook = WebhookEndpoint.objects.create(
        dataset=dataset, url=receiver.url, secret="whsec_" + "A" * 32, events=["queue.completed"]
    )
    receiver.secret = hook.secret
    queue = queues.create_queue(
        dataset, make_transcripts(dataset, curator, 2), name="q", author=curator
    )
    workers = annotators(django_user_model, dataset, 2)
    submitted = [queues.submit(queues.claim_next(queue, w), w) for w in workers]

    # The worst timing: each approval checks the queue while the other has not committed.
    # Approvals that take turns (the item's lock holds the queue's row) never both get here
    # at once: the first waits a second, then goes on.
    both_checking = threading.Barrier(2)
    completion = queues._completion

    def check_together(queue):
        with contextlib.suppress(threading.BrokenBarrierError):
            both_checking.wait(timeout=1)
        return completion(queue)

    monkeypatch.setattr(queues, "_completion", check_together)
    errors: list[BaseException] = []

    def approve(assignment):
        from django.db import connections

        try:
            queues.review(
                queues.assignment_for(curator, assignment.pk), curator, decision="approve"
            )
        except BaseException as error:
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=approve, args=(a,)) for a in submitted]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    receiver.close()
    assert errors == []
    assert len(completions(dataset)) == 1
    assert [body["type"] for body in receiver.delivered()] == ["queue.completed"]
