"""The review workflow (editor/workflow.py): every transition from every status, per role, and
the rule that an edit to approved content sends it back to review."""

from __future__ import annotations

import pytest

from editor import editing
from editor.errors import NotAllowed
from editor.models import Membership, Role, Status, Transcript
from editor.storage.create import create_transcript
from editor.workflow import TRANSITIONS, TransitionRefused
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

D, R, A, J = Status.DRAFT, Status.IN_REVIEW, Status.APPROVED, Status.REJECTED

# (transition, from status) -> the status it leads to; every pair not listed is refused.
ALLOWED = {
    ("submit", D): R,
    ("resubmit", J): R,
    ("approve", R): A,
    ("reject", R): J,
    ("reopen", A): D,
    ("reopen", J): D,
}
# Who may make each transition.
ROLES = {
    "submit": {Role.ANNOTATOR, Role.REVIEWER, Role.CURATOR},
    "resubmit": {Role.ANNOTATOR, Role.REVIEWER, Role.CURATOR},
    "approve": {Role.REVIEWER, Role.CURATOR},
    "reject": {Role.REVIEWER, Role.CURATOR},
    "reopen": {Role.CURATOR},
}


def test_the_table_above_is_the_whole_state_machine():
    table = {(name, source): t.target for name, t in TRANSITIONS.items() for source in t.sources}
    assert table == ALLOWED
    assert {name: set(t.roles) for name, t in TRANSITIONS.items()} == ROLES


@pytest.fixture
def transcript(dataset, curator):
    return create_transcript(dataset, text=conversation(), spec="openchatml-2.2", author=curator)


def put_in(transcript: Transcript, status: str) -> Transcript:
    Transcript.objects.filter(pk=transcript.pk).update(status=status)
    return Transcript.objects.select_related("dataset").get(pk=transcript.pk)


@pytest.mark.parametrize("name", sorted(TRANSITIONS))
@pytest.mark.parametrize("source", [D, R, A, J])
def test_every_transition_from_every_status(transcript, curator, name, source):
    transcript = put_in(transcript, source)
    if (name, source) in ALLOWED:
        result = editing.apply_transition(transcript, name, expected_version=1, author=curator)
        assert result.transcript.status == ALLOWED[(name, source)]
        assert result.version == 2
        assert result.transcript.revisions.get(number=2).note == TRANSITIONS[name].label.lower()
    else:
        with pytest.raises(TransitionRefused) as refused:
            editing.apply_transition(transcript, name, expected_version=1, author=curator)
        assert refused.value.status == 409
        assert Transcript.objects.get(pk=transcript.pk).status == source


@pytest.mark.parametrize("name", sorted(TRANSITIONS))
@pytest.mark.parametrize("role", [Role.VIEWER, Role.ANNOTATOR, Role.REVIEWER, Role.CURATOR])
def test_who_may_make_each_transition(transcript, django_user_model, dataset, name, role):
    user = django_user_model.objects.create_user(f"someone-{role}")
    Membership.objects.create(user=user, dataset=dataset, role=role)
    source = next(s for (n, s) in ALLOWED if n == name)
    transcript = put_in(transcript, source)
    if role in ROLES[name]:
        editing.apply_transition(transcript, name, expected_version=1, author=user)
    else:
        with pytest.raises(NotAllowed):
            editing.apply_transition(transcript, name, expected_version=1, author=user)
        assert Transcript.objects.get(pk=transcript.pk).status == source


def test_an_unknown_transition_is_refused(transcript, curator):
    with pytest.raises(TransitionRefused) as refused:
        editing.apply_transition(transcript, "publish", expected_version=1, author=curator)
    assert refused.value.code == "unknown-transition"


@pytest.mark.parametrize(("before", "after"), [(A, R), (R, R), (D, D), (J, J)])
def test_an_edit_of_the_content_sends_approved_back_to_review(transcript, annotator, before, after):
    transcript = put_in(transcript, before)
    result = editing.edit_message(
        transcript, 1, {"content": "Reworded."}, expected_version=1, author=annotator
    )
    assert result.transcript.status == after
    assert Transcript.objects.get(pk=transcript.pk).status == after


def test_a_restore_of_approved_content_sends_it_back_to_review_too(transcript, curator):
    from editor.revisions import restore_revision

    editing.edit_message(transcript, 1, {"content": "v2"}, expected_version=1, author=curator)
    approved = put_in(transcript, A)
    restore_revision(approved.revisions.get(number=1), expected_version=2, author=curator)
    assert Transcript.objects.get(pk=transcript.pk).status == R


def test_a_title_change_keeps_approval(transcript, curator):
    from editor.storage.save import save_transcript

    approved = put_in(transcript, A)
    save_transcript(approved, expected_version=1, author=curator, title="Renamed")
    assert Transcript.objects.get(pk=transcript.pk).status == A


def test_a_stale_transition_is_a_conflict(transcript, curator):
    from editor.errors import ConflictError

    editing.apply_transition(transcript, "submit", expected_version=1, author=curator)
    with pytest.raises(ConflictError):
        editing.apply_transition(
            Transcript.objects.select_related("dataset").get(pk=transcript.pk),
            "approve",
            expected_version=1,
            author=curator,
        )


# --- the page and the API ---------------------------------------------------------------------


def test_the_page_offers_the_moves_the_role_allows(client, transcript, annotator, curator):
    reviewable = put_in(transcript, R)
    client.force_login(annotator)
    html = client.get(f"/transcripts/{reviewable.pk}/").content.decode()
    assert 'data-action="approve"' not in html
    client.force_login(curator)
    html = client.get(f"/transcripts/{reviewable.pk}/").content.decode()
    assert 'data-action="approve"' in html and 'data-action="reject"' in html

    response = client.post(
        f"/transcripts/{reviewable.pk}/status/",
        {"name": "approve", "version": 1},
        headers={"HX-Request": "true"},
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="transcript-status"' in body and 'data-status="approved"' in body
    assert Transcript.objects.get(pk=transcript.pk).status == A


def test_a_viewer_gets_403_from_the_page_route(client, transcript, viewer):
    client.force_login(viewer)
    response = client.post(
        f"/transcripts/{transcript.pk}/status/", {"name": "submit", "version": 1}
    )
    assert response.status_code == 403


def test_the_api_lists_and_makes_moves(transcript, annotator, curator):
    from tests.api.conftest import api_client_for, assert_error

    as_annotator = api_client_for(annotator)
    assert [
        t["name"] for t in as_annotator.get(f"/transcripts/{transcript.pk}/transitions").json()
    ] == ["submit"]
    response = as_annotator.post(
        f"/transcripts/{transcript.pk}/transitions", {"name": "submit", "version": 1}
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "in_review"
    assert_error(
        as_annotator.post(
            f"/transcripts/{transcript.pk}/transitions", {"name": "approve", "version": 2}
        ),
        403,
        "forbidden",
    )
    as_curator = api_client_for(curator)
    assert_error(
        as_curator.post(
            f"/transcripts/{transcript.pk}/transitions", {"name": "submit", "version": 2}
        ),
        409,
        "transition-refused",
    )
    assert_error(
        as_curator.post(
            f"/transcripts/{transcript.pk}/transitions", {"name": "publish", "version": 2}
        ),
        422,
        "invalid-request",
    )


# --- an item several annotators worked on -----------------------------------------------------

SUB, APP, REJ, CLM, SKP = "submitted", "approved", "rejected", "claimed", "skipped"


@pytest.mark.parametrize(
    ("states", "required", "status"),
    [
        ((SUB,), 1, R),
        ((APP,), 1, A),
        ((REJ,), 1, J),
        ((APP, SUB), 2, R),  # one still waits for its review
        ((APP, APP), 2, A),  # every required submission approved
        ((APP, REJ), 2, J),  # one rejection is enough: the item goes back
        ((REJ, SUB), 2, J),
        ((REJ, APP, APP), 3, J),
        ((APP,), 2, R),  # the second place is not taken yet
        ((APP, CLM), 2, R),  # … or its annotator is still at work
        ((APP, SKP), 2, R),  # a skip gave the place back
        ((APP, APP, SKP), 2, A),
        ((APP, APP), 1, A),  # more approvals than required
    ],
)
def test_the_status_of_an_item_from_its_submissions(states, required, status):
    from editor.workflow import item_status

    assert item_status(states, required=required) == status
