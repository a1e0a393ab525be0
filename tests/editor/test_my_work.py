"""'My work' on the dashboard: the user's queues with what is left for them, items returned
to them with the reviewer's comment, queues waiting for their review, their last edits; in
a number of queries that does not grow with the queues."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from editor import queues
from editor.models import Dataset, Membership, Role
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db


def make_queue(dataset, curator, name: str, items: int = 3, **options):
    transcripts = [
        create_transcript(
            dataset,
            author=curator,
            text=conversation(),
            spec="openchatml-2.2",
            title=f"{name} {n}",
        )
        for n in range(items)
    ]
    return queues.create_queue(dataset, transcripts, name=name, author=curator, **options)


def test_my_queues_count_what_is_left_for_me(dataset, curator, annotator, django_user_model):
    other = django_user_model.objects.create_user("other")
    Membership.objects.create(user=other, dataset=dataset, role=Role.ANNOTATOR)
    open_queue = make_queue(dataset, curator, "Open", items=3)
    make_queue(dataset, curator, "Not mine", assignees=[other])
    make_queue(dataset, curator, "Mine", items=2, assignees=[annotator])

    held = queues.claim_next(open_queue, annotator)  # I hold one
    taken = queues.claim_next(open_queue, other)  # another's: its only place is taken
    assert held.item != taken.item

    work = queues.my_work(annotator)
    by_name = {q.name: q for q in work["queues"]}
    assert set(by_name) == {"Open", "Mine"}
    assert (by_name["Open"].held, by_name["Open"].open_for_me) == (1, 1)
    assert (by_name["Mine"].held, by_name["Mine"].open_for_me) == (0, 2)

    # a claim whose time ran out frees its place, even before anyone expires it
    taken.expires_at = timezone.now() - timedelta(minutes=1)
    taken.save(update_fields=["expires_at"])
    assert {q.name: q.open_for_me for q in queues.my_work(annotator)["queues"]}["Open"] == 2

    # viewers work in no queue
    viewer = dataset.memberships.get(role=Role.VIEWER).user
    assert queues.my_work(viewer)["queues"] == []


def test_the_dashboard_the_queue_page_and_a_claim_agree_on_claims_that_ran_out(
    dataset, curator, annotator, django_user_model
):
    other = django_user_model.objects.create_user("other")
    Membership.objects.create(user=other, dataset=dataset, role=Role.ANNOTATOR)
    queue = make_queue(dataset, curator, "One", items=1)

    def answers(user):
        counted = {q.name: q.open_for_me for q in queues.my_work(user)["queues"]}["One"]
        return counted, queues.has_open_item(queue, user)

    mine = queues.claim_next(queue, annotator)
    assert answers(other) == (0, False)  # its one place is held
    # The claim runs out; nobody has written it expired yet.
    mine.expires_at = timezone.now() - timedelta(minutes=1)
    mine.save(update_fields=["expires_at"])
    assert answers(other) == (1, True)
    assert answers(annotator) == (1, True)  # a claim that ran out is not work done
    assert queues.claim_next(queue, other).item == mine.item
    assert answers(annotator) == (0, False)


def test_a_queue_i_have_finished_says_so_on_the_dashboard(client, dataset, curator, annotator):
    finished = make_queue(dataset, curator, "Finished", items=1)
    queues.submit(queues.claim_next(finished, annotator), annotator)
    make_queue(dataset, curator, "Open", items=2)
    client.force_login(annotator)
    page = client.get("/").content.decode()
    rows = {
        name: page.split(f">{name}</a>", 1)[1].split("</li>", 1)[0] for name in ("Finished", "Open")
    }
    assert "nothing left for you" in rows["Finished"] and "to do" not in rows["Finished"]
    assert "2 to do" in rows["Open"]


def test_returned_items_and_reviews_waiting(client, dataset, curator, annotator, reviewer):
    queue = make_queue(dataset, curator, "Tone", items=2)
    first = queues.claim_next(queue, annotator)
    queues.submit(first, annotator)
    second = queues.claim_next(queue, annotator)
    queues.submit(second, annotator)

    waiting = queues.my_work(reviewer)["to_review"]
    assert [(q.name, q.waiting) for q in waiting] == [("Tone", 2)]
    assert queues.my_work(annotator)["to_review"] == []  # annotators review nothing

    queues.review(first, reviewer, decision="reject", comment="The tone is off in turn 2.")
    returned = queues.my_work(annotator)["returned"]
    assert [(a.pk, a.review_comment) for a in returned] == [
        (first.pk, "The tone is off in turn 2.")
    ]

    client.force_login(annotator)
    page = client.get("/").content.decode()
    assert 'data-testid="my-returned"' in page and "The tone is off in turn 2." in page
    link = f"/queues/{queue.pk}/?open={first.pk}"
    assert f'href="{link}"' in page
    # the link opens that item in the queue, ready to fix and submit again
    opened = client.get(link).content.decode()
    assert 'data-action="submit"' in opened
    plain = client.get(f"/queues/{queue.pk}/").content.decode()
    assert 'data-action="submit"' not in plain  # without ?open nothing is in hand

    client.force_login(reviewer)
    page = client.get("/").content.decode()
    assert 'data-testid="my-reviews"' in page and f'href="/queues/{queue.pk}/review/"' in page


def test_my_last_edits(client, dataset, curator, annotator):
    transcript = create_transcript(
        dataset, author=curator, text=conversation(), spec="openchatml-2.2", title="Old"
    )
    for n in range(12):
        transcript = save_transcript(
            transcript, expected_version=transcript.version, author=annotator, title=f"Title {n}"
        )
    edits = queues.my_work(annotator)["edits"]
    assert len(edits) == queues.MY_EDITS
    assert edits[0].transcript.title == "Title 11"
    client.force_login(annotator)
    page = client.get("/").content.decode()
    assert 'data-testid="my-edits"' in page and f'href="/transcripts/{transcript.pk}/"' in page
    assert queues.my_work(curator)["edits"][0].number == 1  # the curator's: the creation


def test_no_work_no_section(client, dataset, viewer):
    client.force_login(viewer)
    assert 'data-testid="my-work"' not in client.get("/").content.decode()


def test_the_dashboard_costs_the_same_queries_however_much_work(
    client, dataset, curator, annotator, reviewer
):
    def dashboard_queries() -> int:
        client.force_login(reviewer)
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/").status_code == 200
        return len(captured)

    queue = make_queue(dataset, curator, "First", items=2)
    queues.submit(queues.claim_next(queue, reviewer), reviewer)
    few = dashboard_queries()
    for n in range(5):
        other = Dataset.objects.create(name=f"More {n}", slug=f"more-{n}")
        Membership.objects.create(user=reviewer, dataset=other, role=Role.REVIEWER)
        Membership.objects.create(user=curator, dataset=other, role=Role.CURATOR)
        more = make_queue(other, curator, f"Queue {n}", items=2)
        assignment = queues.claim_next(more, reviewer)
        queues.submit(assignment, reviewer)
        queues.review(assignment, curator, decision="reject", comment=f"Fix {n}")
    assert dashboard_queries() == few
    assert few <= 12
