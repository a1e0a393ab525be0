"""Review queues (editor/queues.py): claim-next with overlap, reservations, submit, skip,
review; the assignment state table; concurrent claims on PostgreSQL."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from editor import queues, workflow
from editor.errors import InvalidContent, NotAllowed
from editor.models import (
    AssignmentState,
    Dataset,
    Membership,
    QueueAssignment,
    Role,
    Status,
    Transcript,
)
from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcripts
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

S = AssignmentState


def make_transcripts(dataset, author, count: int) -> list[Transcript]:
    content = TranscriptContent.from_text(conversation(), "openchatml-2.2")
    return create_transcripts(
        dataset, [NewTranscript(content, title=f"T{n}") for n in range(count)], author=author
    )


def annotators(django_user_model, dataset, count: int):
    users = []
    for n in range(count):
        user = django_user_model.objects.create_user(f"ann{n}")
        Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)
        users.append(user)
    return users


# --- the state table ------------------------------------------------------------------------

ALLOWED = {
    ("claim", S.EXPIRED): S.CLAIMED,
    ("submit", S.CLAIMED): S.SUBMITTED,
    ("submit", S.REJECTED): S.SUBMITTED,
    ("skip", S.CLAIMED): S.SKIPPED,
    ("expire", S.CLAIMED): S.EXPIRED,
    ("approve", S.SUBMITTED): S.APPROVED,
    ("reject", S.SUBMITTED): S.REJECTED,
}


@pytest.mark.parametrize("move", sorted(workflow.ASSIGNMENT_TRANSITIONS))
@pytest.mark.parametrize("state", AssignmentState.values)
def test_every_assignment_move_from_every_state(move, state):
    if (move, state) in ALLOWED:
        assert workflow.check_assignment_move(state, move) == ALLOWED[(move, state)]
    else:
        with pytest.raises(workflow.TransitionRefused):
            workflow.check_assignment_move(state, move)


# --- claiming ---------------------------------------------------------------------------------


@pytest.fixture
def queue(db, dataset, curator):
    transcripts = make_transcripts(dataset, curator, 3)
    return queues.create_queue(
        dataset, transcripts, name="Check answers", author=curator, overlap=2
    )


def test_only_curators_create_queues_and_bad_settings_are_refused(dataset, curator, annotator):
    transcripts = make_transcripts(dataset, curator, 1)
    with pytest.raises(NotAllowed):
        queues.create_queue(dataset, transcripts, name="Q", author=annotator)
    for bad in ({"overlap": 0}, {"overlap": 99}, {"reservation_minutes": 0}, {"name": " "}):
        with pytest.raises(InvalidContent):
            queues.create_queue(dataset, transcripts, **{"name": "Q", "author": curator, **bad})


def test_claim_next_gives_each_annotator_distinct_places_up_to_the_overlap(
    queue, django_user_model, dataset
):
    first, second, third = annotators(django_user_model, dataset, 3)
    a = queues.claim_next(queue, first)
    assert queues.claim_next(queue, first) == a  # the one they hold, again
    b = queues.claim_next(queue, second)
    c = queues.claim_next(queue, third)
    assert a.item == b.item and {a.slot, b.slot} == {0, 1}
    assert c.item != a.item  # the first item is full (overlap 2)
    assert a.expires_at - a.claimed_at == timedelta(minutes=30)


def test_skipped_items_return_to_the_pool_but_not_to_the_skipper(queue, django_user_model, dataset):
    first, second, third = annotators(django_user_model, dataset, 3)
    a = queues.claim_next(queue, first)
    queues.claim_next(queue, second)
    queues.skip(a, first)
    assert queues.claim_next(queue, third).item == a.item  # a place came free
    assert queues.claim_next(queue, first).item != a.item  # but not back to the skipper


def test_an_expired_claim_frees_its_place_and_can_be_taken_again(queue, django_user_model, dataset):
    first, second, third = annotators(django_user_model, dataset, 3)
    a = queues.claim_next(queue, first)
    queues.claim_next(queue, second)
    later = timezone.now() + timedelta(minutes=31)
    c = queues.claim_next(queue, third, now=later)
    assert c.item == a.item
    a.refresh_from_db()
    assert a.state == S.EXPIRED and a.slot is None
    with pytest.raises(workflow.TransitionRefused):
        queues.submit(a, first)


def test_nothing_left_is_none(dataset, curator, django_user_model):
    queue = queues.create_queue(
        dataset, make_transcripts(dataset, curator, 1), name="Q", author=curator
    )
    (only,) = annotators(django_user_model, dataset, 1)
    assignment = queues.claim_next(queue, only)
    queues.submit(assignment, only)
    assert queues.claim_next(queue, only) is None


def test_assignees_and_roles_decide_who_works(queue, viewer, django_user_model, dataset):
    with pytest.raises(NotAllowed):
        queues.claim_next(queue, viewer)
    first, second = annotators(django_user_model, dataset, 2)
    queue.assignees.set([first])
    assert queues.claim_next(queue, first) is not None
    with pytest.raises(NotAllowed):
        queues.claim_next(queue, second)


def test_a_lost_race_for_a_place_is_tried_again(queue, django_user_model, dataset, monkeypatch):
    """Another claimer took the last place between the look-up and the insert (what SQLite,
    with no row locks, leaves to the unique constraint): the claim starts over instead of
    failing or overfilling the item."""
    first, second, third = annotators(django_user_model, dataset, 3)
    queues.claim_next(queue, first)
    original = queues._take_a_place
    attempts = []

    def racing(queue_, item, user, now):
        attempts.append(item)
        if len(attempts) == 1:
            QueueAssignment.objects.create(
                item=item, annotator=third, slot=1, claimed_at=now, expires_at=now
            )
        return original(queue_, item, user, now)

    monkeypatch.setattr(queues, "_take_a_place", racing)
    taken = queues.claim_next(queue, second)
    assert len(attempts) == 2  # the lost race was tried again
    assert taken.state == S.CLAIMED
    for item in {a.item_id for a in QueueAssignment.objects.all()}:
        assert QueueAssignment.objects.filter(item=item, slot__isnull=False).count() <= 2


# --- submit and review ------------------------------------------------------------------------


def test_submit_review_reject_resubmit_approve(
    queue, django_user_model, dataset, curator, annotator
):
    (worker,) = annotators(django_user_model, dataset, 1)
    queue.overlap = 1  # one submission per item: its review decides
    queue.save(update_fields=["overlap"])
    assignment = queues.claim_next(queue, worker)
    with pytest.raises(NotAllowed):
        queues.submit(assignment, annotator)  # not theirs
    assignment = queues.submit(assignment, worker)
    transcript = assignment.item.transcript
    transcript.refresh_from_db()
    assert transcript.status == Status.IN_REVIEW

    with pytest.raises(NotAllowed):
        queues.review(assignment, worker, decision="approve")
    with pytest.raises(InvalidContent):
        queues.review(assignment, curator, decision="reject", comment="  ")
    assignment = queues.review(assignment, curator, decision="reject", comment="Fix the tone.")
    assert assignment.state == S.REJECTED and assignment.review_comment == "Fix the tone."
    transcript.refresh_from_db()
    assert transcript.status == Status.REJECTED

    assignment = queues.submit(assignment, worker)
    assignment = queues.review(assignment, curator, decision="approve")
    transcript.refresh_from_db()
    assert transcript.status == Status.APPROVED
    assert assignment.slot is not None  # an approved assignment keeps its place
    notes = list(transcript.revisions.order_by("number").values_list("note", flat=True))
    assert "review: approve (review queue)" in notes


def test_an_item_of_two_annotators_is_approved_only_once_both_are(
    queue, django_user_model, dataset, curator
):
    first, second = annotators(django_user_model, dataset, 2)
    mine, theirs = (queues.submit(queues.claim_next(queue, u), u) for u in (first, second))
    assert mine.item == theirs.item
    transcript = mine.item.transcript

    queues.review(theirs, curator, decision="reject", comment="Wrong label.")
    queues.review(mine, curator, decision="approve")
    transcript.refresh_from_db()
    assert transcript.status == Status.REJECTED  # not approved over the rejection

    theirs = queues.submit(theirs, second)
    transcript.refresh_from_db()
    assert transcript.status == Status.IN_REVIEW
    queues.review(theirs, curator, decision="approve")
    transcript.refresh_from_db()
    assert transcript.status == Status.APPROVED


def test_a_concurrent_move_is_refused(queue, django_user_model, dataset):
    (worker,) = annotators(django_user_model, dataset, 1)
    assignment = queues.claim_next(queue, worker)
    stale = QueueAssignment.objects.get(pk=assignment.pk)
    queues.skip(assignment, worker)
    with pytest.raises(workflow.TransitionRefused):
        queues.submit(stale, worker)


def test_progress_counts(queue, django_user_model, dataset, curator):
    first, second = annotators(django_user_model, dataset, 2)
    a = queues.claim_next(queue, first)
    queues.claim_next(queue, second)
    queues.submit(a, first)
    figures = queues.progress(queue)
    assert figures["items"] == 3
    assert figures["open_items"] == 2
    assert figures["claimed"] == 1 and figures["submitted"] == 1


# --- real concurrency -------------------------------------------------------------------------


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite serializes writers with one database lock: there is no concurrent claim "
    "to test (test_a_lost_race_for_a_place_is_tried_again covers its path)",
)
@pytest.mark.django_db(transaction=True)
def test_eight_threads_claiming_from_100_items_never_exceed_the_overlap(django_user_model):
    dataset = Dataset.objects.create(name="Race", slug="race")
    curator = django_user_model.objects.create_user("race-curator")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    queue = queues.create_queue(
        dataset, make_transcripts(dataset, curator, 100), name="Race", author=curator, overlap=2
    )
    workers = annotators(django_user_model, dataset, 8)
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def work(user):
        from django.db import connections

        try:
            start.wait()
            while (assignment := queues.claim_next(queue, user)) is not None:
                queues.submit(assignment, user)
        except BaseException as error:  # reported below, with the thread's traceback lost
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(user,)) for user in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    per_item = Counter(
        QueueAssignment.objects.filter(item__queue=queue, state=S.SUBMITTED).values_list(
            "item", flat=True
        )
    )
    assert len(per_item) == 100  # none lost
    assert set(per_item.values()) == {2}  # every item done by exactly its overlap
    pairs = QueueAssignment.objects.filter(item__queue=queue).values_list("item", "annotator")
    assert len(set(pairs)) == len(pairs)  # never twice by the same annotator


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite has no row locks: a claimer never meets an item another one holds",
)
@pytest.mark.django_db(transaction=True)
def test_an_item_another_claimer_holds_locked_is_waited_for_not_called_nothing_left(
    django_user_model,
):
    """The eight threads' race, made certain: the last open item is locked by a claimer
    taking one of its two places. Another annotator waits for it and takes the second place;
    told "nothing left", they would leave the item one annotator short."""
    from django.db import connections, transaction

    dataset = Dataset.objects.create(name="Last", slug="last")
    curator = django_user_model.objects.create_user("last-curator")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    queue = queues.create_queue(
        dataset, make_transcripts(dataset, curator, 1), name="Last", author=curator, overlap=2
    )
    (waiter,) = annotators(django_user_model, dataset, 1)
    locked, release = threading.Event(), threading.Event()
    claimed: list = []

    def hold_the_item():
        try:
            with transaction.atomic():
                queue.items.select_for_update().get()
                locked.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    def claim():
        try:
            claimed.append(queues.claim_next(queue, waiter))
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_item)
    holder.start()
    assert locked.wait(timeout=30)
    claimer = threading.Thread(target=claim)
    claimer.start()
    claimer.join(timeout=0.5)
    waited = claimer.is_alive()
    release.set()
    holder.join(timeout=30)
    claimer.join(timeout=30)
    assert waited  # it waited for the lock instead of answering at once
    assert claimed and claimed[0] is not None
    assert claimed[0].state == S.CLAIMED


def test_annotator_figures_count_throughput_and_median_time(queue, django_user_model, dataset):
    (worker,) = annotators(django_user_model, dataset, 1)
    start = timezone.now()
    for n in range(2):
        assignment = queues.claim_next(queue, worker, now=start + timedelta(minutes=30 * n))
        queues.submit(assignment, worker, now=start + timedelta(minutes=30 * (n + 1)))
    [row] = queues.annotator_figures(queue)
    assert row["name"] == "ann0" and row["done"] == 2
    assert row["median_seconds"] == 1800
    assert row["per_hour"] == pytest.approx(2.0)
