"""The review-queue pages: the annotator's focused view, the reviewer's list, the curator's
dashboard and queue creation on the dataset page, per role."""

from __future__ import annotations

import pytest

from editor import queues
from editor.models import AssignmentState, QueueAssignment, ReviewQueue, Status, Transcript
from editor.storage.create import create_transcript
from tests.editor.dataset_page import whole_page
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def queue(dataset, curator):
    transcripts = [
        create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"T{n}"
        )
        for n in range(2)
    ]
    return queues.create_queue(
        dataset, transcripts, name="Check", author=curator, instructions="Look for **tone**."
    )


def test_curators_create_a_queue_from_the_dataset_page(client, dataset, curator, annotator):
    for _ in range(3):
        create_transcript(dataset, author=curator, text=conversation(), spec="openchatml-2.2")
    client.force_login(curator)
    page = whole_page(client, "/datasets/support-chats/")
    assert 'data-testid="queue-form"' in page
    response = client.post(
        "/datasets/support-chats/queues/",
        {"name": "Tone", "status": ["draft"], "overlap": 2, "reservation_minutes": 10},
    )
    queue = ReviewQueue.objects.get(name="Tone")
    assert response.status_code == 302 and response["Location"] == f"/queues/{queue.pk}/dashboard/"
    assert queue.items.count() == 3 and queue.overlap == 2
    client.force_login(annotator)
    assert 'data-testid="queue-form"' not in whole_page(client, "/datasets/support-chats/")
    assert client.post("/datasets/support-chats/queues/", {"name": "X"}).status_code == 403


def test_the_annotator_starts_works_and_submits_without_a_reload(client, queue, annotator):
    client.force_login(annotator)
    page = client.get(f"/queues/{queue.pk}/").content.decode()
    assert 'data-action="start"' in page and "<strong>tone</strong>" in page
    claimed = client.post(f"/queues/{queue.pk}/claim/", headers=HX).content.decode()
    assert claimed.lstrip().startswith('<div id="queue-workspace"')
    assert 'data-action="submit"' in claimed and 'data-action="edit"' in claimed
    assert "0 / 2 done by you" in claimed
    assignment = QueueAssignment.objects.get(annotator=annotator)
    after = client.post(f"/assignments/{assignment.pk}/submit/", headers=HX).content.decode()
    assert "1 / 2 done by you" in after and "Submitted item #1" in after
    assert (
        QueueAssignment.objects.filter(annotator=annotator, state=AssignmentState.CLAIMED).count()
        == 1
    )
    assert Transcript.objects.get(pk=assignment.item.transcript_id).status == Status.IN_REVIEW


def test_an_annotator_with_nothing_left_is_told_so_before_pressing_start(
    client, queue, annotator, curator
):
    client.force_login(annotator)
    queues.submit(queues.claim_next(queue, annotator), annotator)
    last = queues.claim_next(queue, annotator)
    # The last submit swaps the finished state in, with what was done.
    after = client.post(f"/assignments/{last.pk}/submit/", headers=HX).content.decode()
    assert "Nothing left to do" in after and 'data-testid="queue-done"' in after
    page = client.get(f"/queues/{queue.pk}/").content.decode()
    assert 'data-testid="queue-done"' in page and "2 done by you" in page
    assert 'data-action="check-again"' in page and 'data-action="start"' not in page
    assert 'href="/datasets/support-chats/"' in page
    # A queue with an item to take offers Start.
    other = queues.create_queue(queue.dataset, [last.item.transcript], name="More", author=curator)
    page = client.get(f"/queues/{other.pk}/").content.decode()
    assert 'data-action="start"' in page and 'data-testid="queue-done"' not in page


def test_the_dataset_page_counts_each_queues_work_done(client, queue, annotator, curator):
    queues.submit(queues.claim_next(queue, annotator), annotator)
    queues.claim_next(queue, curator)  # held, not done
    client.force_login(curator)
    html = client.get("/datasets/support-chats/sections/queues/").content.decode()
    assert "2 items, 1 annotator each" in html
    assert '<span data-testid="queue-done-count">1 of 2 done</span>' in html


def test_viewers_and_outsiders_cannot_work(client, queue, viewer, outsider):
    client.force_login(viewer)
    assert client.get(f"/queues/{queue.pk}/").status_code == 403
    assert client.post(f"/queues/{queue.pk}/claim/").status_code == 403
    client.force_login(outsider)
    assert client.get(f"/queues/{queue.pk}/").status_code == 404


def test_review_rejects_with_a_comment_the_annotator_sees(client, queue, annotator, curator):
    assignment = queues.claim_next(queue, annotator)
    queues.submit(assignment, annotator)
    client.force_login(annotator)
    assert client.get(f"/queues/{queue.pk}/review/").status_code == 403
    client.force_login(curator)
    page = client.get(f"/queues/{queue.pk}/review/").content.decode()
    assert f'data-assignment="{assignment.pk}"' in page
    client.post(f"/assignments/{assignment.pk}/review/", {"decision": "reject", "comment": ""})
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED  # a rejection needs a comment
    client.post(
        f"/assignments/{assignment.pk}/review/", {"decision": "reject", "comment": "Too curt."}
    )
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.REJECTED

    client.force_login(annotator)
    page = client.get(f"/queues/{queue.pk}/").content.decode()
    assert "Returned to you" in page and "Too curt." in page
    resumed = client.post(f"/assignments/{assignment.pk}/resume/", headers=HX).content.decode()
    assert "data-review-comment" in resumed and "Resubmit" in resumed
    client.post(f"/assignments/{assignment.pk}/submit/", headers=HX)
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED


def test_the_dashboard_counts(client, queue, annotator, curator):
    assignment = queues.claim_next(queue, annotator)
    queues.submit(assignment, annotator)
    client.force_login(curator)
    page = client.get(f"/queues/{queue.pk}/dashboard/").content.decode()
    assert '<td data-state="submitted">1</td>' in page
    assert 'data-annotator="annotator"' in page
    client.force_login(annotator)
    assert client.get(f"/queues/{queue.pk}/dashboard/").status_code == 403


@pytest.fixture
def schema(dataset, curator):
    from editor.labels import create_label_schema

    return create_label_schema(
        dataset,
        author=curator,
        name="Quality",
        questions=[
            {
                "key": "helpful",
                "kind": "choice",
                "prompt": "Was the answer helpful?",
                "required": True,
                "options": [
                    {"value": "yes", "label": "Yes", "key": "1"},
                    {"value": "no", "label": "No", "key": "2"},
                ],
            },
            {"key": "stars", "kind": "rating", "prompt": "Overall", "scale": 5},
            {
                "key": "issues",
                "kind": "multi_choice",
                "prompt": "Issues",
                "options": [
                    {"value": "tone", "label": "Tone", "key": "1"},
                    {"value": "facts", "label": "Facts", "key": "2"},
                ],
            },
            {"key": "note", "kind": "text", "prompt": "Anything else?"},
        ],
    )


def test_questions_are_answered_then_submitted_with_the_item(client, queue, annotator, schema):
    from editor.models import Annotation

    client.force_login(annotator)
    page = client.post(f"/queues/{queue.pk}/claim/", headers=HX).content.decode()
    assert 'data-question="helpful"' in page and 'data-key="1"' in page
    assignment = QueueAssignment.objects.get(annotator=annotator)

    # A required question unanswered: the item is not handed in.
    refused = client.post(f"/assignments/{assignment.pk}/submit/", headers=HX).content.decode()
    assert "Answer the required question first: Was the answer helpful?" in refused
    assert 'data-action="submit"' in refused  # the item stays on screen
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.CLAIMED

    for question, value in (("helpful", "yes"), ("stars", "4"), ("note", "Fine.")):
        response = client.post(
            f"/transcripts/{assignment.item.transcript_id}/answers/",
            {"schema": schema.pk, "question": question, "value": value},
            headers=HX,
        )
        assert 'hx-swap-oob="true">saved</span>' in response.content.decode()
    client.post(
        f"/transcripts/{assignment.item.transcript_id}/answers/",
        {"schema": schema.pk, "question": "issues", "value": ["tone", "facts"]},
        headers=HX,
    )
    bad = client.post(
        f"/transcripts/{assignment.item.transcript_id}/answers/",
        {"schema": schema.pk, "question": "stars", "value": "9"},
        headers=HX,
    ).content.decode()
    assert "from 1 to 5" in bad
    answers = {a.question: a.value for a in Annotation.objects.filter(annotator=annotator)}
    assert answers == {"helpful": "yes", "stars": 4, "note": "Fine.", "issues": ["tone", "facts"]}

    client.post(f"/assignments/{assignment.pk}/submit/", headers=HX)
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED
    assert set(Annotation.objects.values_list("state", flat=True)) == {"submitted"}


def test_viewers_give_no_answers(client, queue, viewer, schema):
    client.force_login(viewer)
    transcript = queue.items.first().transcript
    response = client.post(
        f"/transcripts/{transcript.pk}/answers/",
        {"schema": schema.pk, "question": "helpful", "value": "yes"},
        headers=HX,
    )
    assert response.status_code == 403


def test_the_dashboard_shows_label_distributions_and_agreement(
    client, dataset, curator, annotator, schema, django_user_model
):
    from editor.labels.annotations import answer
    from editor.models import Membership, Role

    second = django_user_model.objects.create_user("second")
    Membership.objects.create(user=second, dataset=dataset, role=Role.ANNOTATOR)
    transcripts = [
        create_transcript(dataset, author=curator, text=conversation(), spec="openchatml-2.2")
        for _ in range(4)
    ]
    queue = queues.create_queue(dataset, transcripts, name="Two", author=curator, overlap=2)
    # Both annotators answer all four: yes/yes, yes/no, no/no, no/no -> kappa 0.5.
    choices = {annotator: ["yes", "yes", "no", "no"], second: ["yes", "no", "no", "no"]}
    for user, values in choices.items():
        for value in values:
            assignment = queues.claim_next(queue, user)
            answer(
                assignment.item.transcript,
                annotator=user,
                schema=schema,
                question="helpful",
                value=value,
            )
            queues.submit(assignment, user)
    client.force_login(curator)
    page = client.get(f"/queues/{queue.pk}/dashboard/").content.decode()
    assert "<title>Two: progress · OCM</title>" in page
    assert page.count('data-question="helpful"') == 1
    assert "Agreement: <strong>0.500</strong>" in page and "Cohen's kappa" in page
    # Yes 3, no 5: the longest bar is 240 wide, "yes" 3/5 of it.
    assert '<rect x="130" y="3" height="14" width="144" class="bar">' in page
    assert '<rect x="130" y="23" height="14" width="240" class="bar">' in page


def test_the_reviewer_sees_the_fixes_made_while_working(client, queue, annotator, curator):
    from editor import editing

    assignment = queues.claim_next(queue, annotator)
    transcript = assignment.item.transcript
    editing.edit_message(
        transcript, 1, {"content": "Better."}, expected_version=transcript.version, author=annotator
    )
    queues.submit(assignment, annotator)
    client.force_login(curator)
    page = client.get(f"/queues/{queue.pk}/review/").content.decode()
    assert 'data-fixes="1"' in page and "edited message 1" in page
    assert f"/transcripts/{transcript.pk}/history/?from=1&amp;to=2" in page
    assert "Better." in page  # the transcript itself, as the annotator left it


@pytest.fixture
def pair(dataset, curator, annotator, schema, django_user_model):
    """Two annotators on one item (overlap 2), who disagree on "helpful" and on the rating of
    message 1 and tag different words, both submitted."""
    from editor.labels import create_label_schema
    from editor.labels.annotations import answer, create_annotation
    from editor.models import Membership, Role

    second = django_user_model.objects.create_user("second")
    Membership.objects.create(user=second, dataset=dataset, role=Role.ANNOTATOR)
    per_message = create_label_schema(
        dataset,
        author=curator,
        name="Per message",
        questions=[
            {"key": "clear", "kind": "rating", "prompt": "How clear?", "applies_to": "message",
             "scale": 5},
            {"key": "claims", "kind": "span", "prompt": "Tag wrong claims",
             "tags": [{"value": "wrong", "label": "Wrong claim", "key": "w"}]},
        ],
    )  # fmt: skip
    transcript = create_transcript(
        dataset, author=curator, text=conversation(), spec="openchatml-2.2", title="Paired"
    )
    queue = queues.create_queue(dataset, [transcript], name="Pair", author=curator, overlap=2)
    body = transcript.stored_messages()[1].content
    work = {
        annotator: ("yes", ["tone"], 4, (0, 3)),
        second: ("no", ["facts", "tone"], 2, (0, len(body))),
    }
    for user, (helpful, issues, clear, (start, end)) in work.items():
        assignment = queues.claim_next(queue, user)
        answer(transcript, annotator=user, schema=schema, question="helpful", value=helpful)
        answer(transcript, annotator=user, schema=schema, question="issues", value=issues)
        answer(transcript, annotator=user, schema=schema, question="note", value="same")
        answer(
            transcript,
            annotator=user,
            schema=per_message,
            question="clear",
            value=clear,
            message_index=1,
        )
        create_annotation(
            transcript,
            annotator=user,
            schema=per_message,
            question="claims",
            value="wrong",
            message_index=1,
            start=start,
            end=end,
        )
        queues.submit(assignment, user)
    return queue


def test_the_reviewer_compares_the_annotators_on_the_transcript(client, curator, pair):
    client.force_login(curator)
    page = client.get(f"/queues/{pair.pk}/review/").content.decode()
    assert 'id="transcript-messages"' in page  # the transcript as the annotators saw it
    assert 'data-action="edit"' not in page  # reviewed, not edited, here
    # Whole-transcript questions: one row each, values by their labels, disagreements marked.
    assert '<th scope="col">annotator</th><th scope="col">second</th>' in page
    assert "<td>Yes</td><td>No</td>" in page and "<td>Tone</td><td>Facts, Tone</td>" in page
    assert page.count('<tr data-disagree><th scope="row">') == 2  # helpful, issues: not the note
    # Per message: who rated what (out of the scale), whose tags, marked where they differ.
    card = page[page.index('id="message-1"') : page.index('id="message-2"')]
    assert '<div class="review-message" data-disagree>' in card
    assert '<span class="who-said">annotator</span>: 4 / 5' in card
    assert '<span class="who-said">second</span>: 2 / 5' in card
    assert card.count('<span class="disagree">disagree</span>') == 2  # the rating, the tags
    assert 'data-span-by="annotator"' in card and 'data-span-by="second"' in card
    assert 'data-who="annotator second ' in card  # the first words carry both tags
    assert 'data-action="approve"' in page and 'data-action="reject"' in page
    assert page.count('data-action="approve"') == 1  # one decision at a time


def test_decisions_answer_the_next_submission_without_a_reload(client, curator, pair):
    client.force_login(curator)
    first, second = QueueAssignment.objects.filter(item__queue=pair).order_by("annotator__username")
    refused = client.post(
        f"/assignments/{first.pk}/review/", {"decision": "reject", "comment": " "}, headers=HX
    )
    assert refused.status_code == 422
    assert "Say why in a comment" in refused.content.decode()
    approved = client.post(
        f"/assignments/{first.pk}/review/", {"decision": "approve"}, headers=HX
    ).content.decode()
    assert approved.lstrip().startswith('<div id="review-workspace"')
    assert "approved the work of annotator." in approved
    assert f'data-assignment="{second.pk}"' in approved  # the item's other submission next
    rejected = client.post(
        f"/assignments/{second.pk}/review/",
        {"decision": "reject", "comment": "Facts were fine."},
        headers=HX,
    ).content.decode()
    assert "Nothing is waiting for review." in rejected
    transcript = Transcript.objects.get(pk=first.item.transcript_id)
    assert transcript.status == Status.REJECTED  # one rejection sends the item back


def test_the_review_page_goes_from_item_to_item(client, dataset, curator, annotator):
    transcripts = [
        create_transcript(dataset, author=curator, text=conversation(), spec="openchatml-2.2")
        for _ in range(3)
    ]
    queue = queues.create_queue(dataset, transcripts, name="Three", author=curator)
    for _ in transcripts:
        queues.submit(queues.claim_next(queue, annotator), annotator)
    items = list(queue.items.order_by("position"))
    client.force_login(curator)
    page = client.get(f"/queues/{queue.pk}/review/").content.decode()
    assert f'data-item="{items[0].pk}"' in page and "3 items waiting" in page
    assert f'data-action="next" href="?item={items[1].pk}"' in page
    last = client.get(f"/queues/{queue.pk}/review/?item={items[2].pk}", headers=HX)
    assert f'data-action="next" href="?item={items[0].pk}"' in last.content.decode()  # around
    assert client.get(f"/queues/{queue.pk}/review/?item=x").status_code == 200


def test_schema_instructions_show_beside_their_questions(
    client, queue, annotator, dataset, curator
):
    from editor.labels import create_label_schema

    create_label_schema(
        dataset,
        author=curator,
        name="Guide",
        instructions="Read **carefully**; <script>alert(1)</script>",
        questions=[{"key": "note", "kind": "text", "prompt": "Notes"}],
    )
    client.force_login(annotator)
    page = client.post(f"/queues/{queue.pk}/claim/", headers=HX).content.decode()
    assert "<strong>carefully</strong>" in page and "<script>alert(1)" not in page


def test_a_nul_in_an_assignee_is_a_form_message(client, curator, dataset):
    client.force_login(curator)
    response = client.post(
        f"/datasets/{dataset.slug}/queues/",
        {"name": "Q", "assignees": "annotator a\x00b"},
        follow=True,
    )
    assert response.status_code == 200
    assert "No such user" in response.content.decode()


def test_a_save_in_the_workspace_sends_only_what_the_workspace_shows(client, queue, annotator):
    """The workspace has the diagnostics and the version but not the transcript page's status
    buttons and History panel: out-of-band parts for those would find no place (an htmx
    error in the browser's console)."""
    assignment = queues.claim_next(queue, annotator)
    transcript = assignment.item.transcript
    client.force_login(annotator)
    form = {"version": 1, "role": "assistant", "content": "Better.", "end": "end"}
    asked_from = {
        "workspace": f"http://testserver/queues/{queue.pk}/",
        "page": f"http://testserver/transcripts/{transcript.pk}/?audience=annotator",
    }
    answers = {}
    for place, url in asked_from.items():
        answers[place] = client.post(
            f"/transcripts/{transcript.pk}/messages/1/save/",
            {**form, "version": transcript.version},
            headers={**HX, "HX-Current-URL": url},
        ).content.decode()
        transcript.refresh_from_db()
    for place, html in answers.items():
        assert 'id="diagnostics"' in html and 'id="version-label"' in html
        panels = ('id="transitions"' in html, 'id="revisions"' in html)
        assert panels == ((False, False) if place == "workspace" else (True, True))
