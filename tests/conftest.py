"""Shared fixtures: users and a dataset with one member per role.

Users have no password (hashing one costs a second per test); tests that log in with a
password set it themselves.
"""

from __future__ import annotations

import pytest

from editor.models import Dataset, Membership, Role


@pytest.fixture
def curator(django_user_model):
    return django_user_model.objects.create_user("curator")


@pytest.fixture
def annotator(django_user_model):
    return django_user_model.objects.create_user("annotator")


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user("viewer")


@pytest.fixture
def outsider(django_user_model):
    return django_user_model.objects.create_user("outsider")


@pytest.fixture
def reviewer(django_user_model, dataset):
    """A reviewer of ``dataset`` (not every test needs one, so not part of it)."""
    user = django_user_model.objects.create_user("reviewer")
    Membership.objects.create(user=user, dataset=dataset, role=Role.REVIEWER)
    return user


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
