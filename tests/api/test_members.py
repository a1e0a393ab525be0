"""Datasets and members over HTTP: create and edit a dataset, add members, change roles,
remove them; who may, the last-curator rule and the log of changes."""

import pytest
from django.contrib.auth import get_user_model

from editor.models import Dataset, Membership, MembershipChange, Role

from .conftest import api_client_for, assert_error

pytestmark = pytest.mark.django_db


def members(client, slug="support-chats") -> dict[str, str]:
    response = client.get(f"/datasets/{slug}/members")
    assert response.status_code == 200, response.content
    return {m["username"]: m["role"] for m in response.json()}


def patch(client, path, body):
    return client._send(client.client.patch, path, body)


# --- datasets -------------------------------------------------------------------------------


def test_any_user_creates_a_dataset_and_becomes_its_curator(as_outsider, outsider):
    response = as_outsider.post(
        "/datasets", {"name": "Evals", "slug": "evals-2.2", "default_spec": "harmony"}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["slug"], body["role"], body["default_spec"]) == ("evals-2.2", "curator", "harmony")
    assert members(as_outsider, "evals-2.2") == {"outsider": "curator"}
    change = MembershipChange.objects.get(dataset__slug="evals-2.2")
    assert (change.actor, change.username, change.action, change.new_role) == (
        outsider,
        "outsider",
        "added",
        "curator",
    )


def test_a_superuser_who_creates_one_is_its_curator_too():
    admin = get_user_model().objects.create_superuser("root")
    assert api_client_for(admin).post("/datasets", {"name": "A", "slug": "a"}).status_code == 201
    assert Membership.objects.get(dataset__slug="a").user == admin


def test_a_taken_slug_is_a_409_and_a_bad_one_a_422(as_outsider, dataset):
    assert_error(
        as_outsider.post("/datasets", {"name": "X", "slug": dataset.slug}), 409, "slug-taken"
    )
    body = assert_error(
        as_outsider.post("/datasets", {"name": "X", "slug": "no spaces"}), 422, "invalid-dataset"
    )
    assert "slug" in body["details"]
    assert Dataset.objects.count() == 1


def test_curators_edit_a_dataset_others_may_not(as_curator, as_annotator, as_outsider, dataset):
    path = f"/datasets/{dataset.slug}"
    response = patch(as_curator, path, {"name": "Renamed", "default_spec": "chatml"})
    assert response.status_code == 200, response.content
    assert (response.json()["name"], response.json()["description"]) == ("Renamed", "")
    assert_error(patch(as_annotator, path, {"name": "Mine"}), 403, "forbidden")
    assert_error(patch(as_outsider, path, {"name": "Mine"}), 404, "not-found")
    dataset.refresh_from_db()
    assert (dataset.name, dataset.default_spec) == ("Renamed", "chatml")
    # Recorded: who changed what, from what to what. Saving the same values again is no edit.
    assert patch(as_curator, path, {"name": "Renamed"}).status_code == 200
    edits = as_curator.get(f"{path}/edits").json()
    assert edits["count"] == 1
    edit = edits["items"][0]
    assert (edit["actor"], edit["created"]) == ("curator", False)
    assert edit["changes"] == {
        "name": ["Support chats", "Renamed"],
        "default_spec": ["openchatml-2.2", "chatml"],
    }
    assert as_outsider.get(f"{path}/edits").status_code == 404


def test_a_created_dataset_records_who_created_it(as_outsider):
    assert as_outsider.post("/datasets", {"name": "Mine", "slug": "mine"}).status_code == 201
    [edit] = as_outsider.get("/datasets/mine/edits").json()["items"]
    assert (edit["actor"], edit["created"], edit["changes"]) == ("outsider", True, {})


# --- members --------------------------------------------------------------------------------


def test_every_member_sees_the_members_an_outsider_gets_404(as_viewer, as_outsider, dataset):
    assert members(as_viewer) == {
        "curator": "curator",
        "annotator": "annotator",
        "viewer": "viewer",
    }
    assert_error(as_outsider.get(f"/datasets/{dataset.slug}/members"), 404, "not-found")


def test_a_curator_invites_changes_and_removes_a_member(
    as_curator, as_outsider, curator, outsider, dataset
):
    path = f"/datasets/{dataset.slug}/members"
    response = as_curator.post(path, {"username": "outsider", "role": "reviewer"})
    assert response.status_code == 202, response.content
    assert response.json()["role"] == "reviewer"
    assert dataset.role_of(outsider) is None  # not before they accept
    invitation = as_outsider.get("/invitations").json()["items"][0]
    assert (invitation["dataset"], invitation["invited_by"]) == (dataset.slug, "curator")
    response = as_outsider.post(f"/invitations/{invitation['id']}/accept")
    assert response.status_code == 200, response.content
    assert dataset.role_of(outsider) == Role.REVIEWER
    assert as_outsider.get("/invitations").json()["count"] == 0

    response = patch(as_curator, f"{path}/outsider", {"role": "annotator"})
    assert response.status_code == 200, response.content
    assert dataset.role_of(outsider) == Role.ANNOTATOR

    assert as_curator.delete(f"{path}/outsider").status_code == 204
    assert dataset.role_of(outsider) is None

    log = list(MembershipChange.objects.filter(dataset=dataset).order_by("pk"))
    assert [(c.actor, c.username, c.action, c.old_role, c.new_role) for c in log] == [
        (curator, "outsider", "added", "", "reviewer"),
        (curator, "outsider", "role_changed", "reviewer", "annotator"),
        (curator, "outsider", "removed", "annotator", ""),
    ]
    # The same record through the API, newest first.
    changes = as_curator.get(f"/datasets/{dataset.slug}/member-changes").json()
    assert changes["count"] == 3
    assert [
        {k: c[k] for k in ("actor", "username", "action", "old_role", "new_role")}
        for c in changes["items"]
    ] == [
        {
            "actor": "curator",
            "username": "outsider",
            "action": "removed",
            "old_role": "annotator",
            "new_role": None,
        },
        {
            "actor": "curator",
            "username": "outsider",
            "action": "role_changed",
            "old_role": "reviewer",
            "new_role": "annotator",
        },
        {
            "actor": "curator",
            "username": "outsider",
            "action": "added",
            "old_role": None,
            "new_role": "reviewer",
        },
    ]


@pytest.mark.parametrize("role", ["annotator", "viewer"])
def test_non_curators_get_403_on_every_change(role, dataset, annotator, viewer):
    client = api_client_for(annotator if role == "annotator" else viewer)
    path = f"/datasets/{dataset.slug}/members"
    assert_error(client.post(path, {"username": "curator"}), 403, "forbidden")
    assert_error(patch(client, f"{path}/viewer", {"role": "curator"}), 403, "forbidden")
    assert_error(client.delete(f"{path}/curator"), 403, "forbidden")
    assert not MembershipChange.objects.exists()


def test_a_reviewer_may_not_change_members_either(dataset, outsider):
    Membership.objects.create(dataset=dataset, user=outsider, role=Role.REVIEWER)
    client = api_client_for(outsider)
    assert_error(client.delete(f"/datasets/{dataset.slug}/members/viewer"), 403, "forbidden")


def test_outsiders_get_404_on_every_change(as_outsider, dataset):
    path = f"/datasets/{dataset.slug}/members"
    assert_error(as_outsider.post(path, {"username": "outsider"}), 404, "not-found")
    assert_error(patch(as_outsider, f"{path}/viewer", {"role": "curator"}), 404, "not-found")
    assert_error(as_outsider.delete(f"{path}/viewer"), 404, "not-found")


def test_the_last_curator_can_be_neither_demoted_nor_removed(as_curator, curator, dataset):
    path = f"/datasets/{dataset.slug}/members"
    assert_error(patch(as_curator, f"{path}/curator", {"role": "viewer"}), 409, "last-curator")
    assert_error(as_curator.delete(f"{path}/curator"), 409, "last-curator")
    assert dataset.role_of(curator) == Role.CURATOR

    # With a second curator, the first may step down.
    assert patch(as_curator, f"{path}/annotator", {"role": "curator"}).status_code == 200
    assert patch(as_curator, f"{path}/curator", {"role": "viewer"}).status_code == 200
    assert dataset.role_of(curator) == Role.VIEWER


def test_a_superuser_who_is_no_member_does_not_count_as_a_curator(dataset):
    admin = api_client_for(get_user_model().objects.create_superuser("root"))
    path = f"/datasets/{dataset.slug}/members/curator"
    assert_error(admin.delete(path), 409, "last-curator")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"username": "viewer"}, 409, "already-member"),
        ({"username": ""}, 422, "invalid-username"),
        ({"username": "outsider", "role": "owner"}, 422, "invalid-request"),
    ],
)
def test_adding_refusals(as_curator, outsider, dataset, body, status, code):
    assert_error(as_curator.post(f"/datasets/{dataset.slug}/members", body), status, code)


def test_changing_someone_who_is_no_member_is_a_404(as_curator, outsider, dataset):
    path = f"/datasets/{dataset.slug}/members/outsider"
    assert_error(patch(as_curator, path, {"role": "viewer"}), 404, "not-a-member")
    assert_error(as_curator.delete(path), 404, "not-a-member")


def test_the_member_changes_are_for_members_only(as_viewer, as_outsider, dataset):
    assert as_viewer.get(f"/datasets/{dataset.slug}/member-changes").status_code == 200
    assert as_outsider.get(f"/datasets/{dataset.slug}/member-changes").status_code == 404


def test_inviting_tells_nothing_of_whether_the_user_exists(as_curator, dataset, outsider):
    path = f"/datasets/{dataset.slug}/members"
    real = as_curator.post(path, {"username": "outsider"})
    made_up = as_curator.post(path, {"username": "nobody-of-that-name"})
    assert real.status_code == made_up.status_code == 202
    assert set(real.json()) == set(made_up.json())
    assert {
        i["username"]
        for i in as_curator.get(f"/datasets/{dataset.slug}/invitations").json()["items"]
    } == {"outsider", "nobody-of-that-name"}
    assert (
        as_curator.delete(f"/datasets/{dataset.slug}/invitations/nobody-of-that-name").status_code
        == 204
    )
    assert_error(
        as_curator.delete(f"/datasets/{dataset.slug}/invitations/nobody-of-that-name"),
        404,
        "not-found",
    )


def test_an_invitation_is_declined_or_answered_only_by_its_user(
    as_curator, as_outsider, dataset, outsider, annotator
):
    as_curator.post(f"/datasets/{dataset.slug}/members", {"username": "outsider"})
    invitation = as_outsider.get("/invitations").json()["items"][0]["id"]
    someone_else = api_client_for(annotator)
    assert_error(someone_else.post(f"/invitations/{invitation}/accept"), 404, "not-found")
    assert as_outsider.post(f"/invitations/{invitation}/decline").status_code == 204
    assert_error(as_outsider.post(f"/invitations/{invitation}/accept"), 404, "not-found")
    assert dataset.role_of(outsider) is None


def test_only_curators_see_a_datasets_invitations(dataset, annotator):
    client = api_client_for(annotator)
    assert_error(client.get(f"/datasets/{dataset.slug}/invitations"), 403, "forbidden")


def test_an_invitation_id_out_of_any_range_is_a_404(as_outsider):
    assert_error(as_outsider.post(f"/invitations/{2**70}/accept"), 404, "not-found")
