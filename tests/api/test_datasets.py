"""Datasets: the caller's list (paginated, bounded queries) and one with the caller's role."""

import pytest

from editor.models import Dataset, Membership, Role

from .conftest import assert_error

pytestmark = pytest.mark.django_db


def test_list_shows_the_callers_datasets_with_role_and_count(as_viewer, dataset, transcript):
    Dataset.objects.create(name="Not mine", slug="not-mine")
    body = as_viewer.get("/datasets").json()
    assert body["count"] == 1
    [item] = body["items"]
    assert item["slug"] == dataset.slug
    assert item["role"] == "viewer"
    assert item["transcript_count"] == 1


def test_list_paginates_by_limit_and_offset(as_annotator, annotator):
    for n in range(5):
        ds = Dataset.objects.create(name=f"Set {n}", slug=f"set-{n}")
        Membership.objects.create(user=annotator, dataset=ds, role=Role.ANNOTATOR)
    first = as_annotator.get("/datasets", {"limit": 2}).json()
    rest = as_annotator.get("/datasets", {"limit": 2, "offset": 4}).json()
    assert first["count"] == rest["count"] == 5
    assert [d["slug"] for d in first["items"]] == ["set-0", "set-1"]
    assert [d["slug"] for d in rest["items"]] == ["set-4"]


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 201}, {"offset": -1}])
def test_out_of_range_paging_is_a_422(as_annotator, params):
    assert_error(as_annotator.get("/datasets", params), 422, "invalid-request")


def test_list_queries_are_bounded(as_annotator, annotator, django_assert_max_num_queries):
    for n in range(30):
        ds = Dataset.objects.create(name=f"Set {n}", slug=f"set-{n}")
        Membership.objects.create(user=annotator, dataset=ds, role=Role.ANNOTATOR)
    # token lookup (+ last-used update), count, page
    with django_assert_max_num_queries(4):
        assert len(as_annotator.get("/datasets", {"limit": 30}).json()["items"]) == 30


def test_one_dataset_with_the_callers_role(as_curator, dataset):
    body = as_curator.get(f"/datasets/{dataset.slug}").json()
    assert body["name"] == "Support chats"
    assert body["role"] == "curator"


def test_an_outsider_cannot_tell_a_dataset_exists(as_outsider, dataset):
    assert_error(as_outsider.get(f"/datasets/{dataset.slug}"), 404, "not-found")
    assert_error(as_outsider.get("/datasets/no-such-set"), 404, "not-found")
