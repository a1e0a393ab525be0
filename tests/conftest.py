"""Shared fixtures: users and a dataset with one member per role."""

from __future__ import annotations

import pytest

from editor.models import Dataset, Membership, Role


@pytest.fixture
def curator(django_user_model):
    return django_user_model.objects.create_user("curator", password="pw-curator-1")


@pytest.fixture
def annotator(django_user_model):
    return django_user_model.objects.create_user("annotator", password="pw-annotator-1")


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user("viewer", password="pw-viewer-1")


@pytest.fixture
def outsider(django_user_model):
    return django_user_model.objects.create_user("outsider", password="pw-outsider-1")


@pytest.fixture
def dataset(curator, annotator, viewer):
    """A dataset where ``curator``, ``annotator`` and ``viewer`` hold those roles."""
    dataset = Dataset.objects.create(name="Support chats", slug="support-chats")
    Membership.objects.bulk_create(
        [
            Membership(user=curator, dataset=dataset, role=Role.CURATOR),
            Membership(user=annotator, dataset=dataset, role=Role.ANNOTATOR),
            Membership(user=viewer, dataset=dataset, role=Role.VIEWER),
        ]
    )
    return dataset
