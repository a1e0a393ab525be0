"""Errors no view handled get a page that looks like the app (never a traceback) or, under
/api/, the API's JSON error; a body over the size limit is a 413, not a 400 or a 500."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory, override_settings
from django.urls import reverse

from editor.views import errors as error_views
from ocm_site import urls

pytestmark = pytest.mark.django_db

SMALL_LIMIT = 1_000


def test_an_unknown_page_is_the_apps_404(client, curator):
    client.force_login(curator)
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert response.templates[0].name == "404.html"
    assert b'data-testid="error-page"' in response.content
    assert b"css/app.css" in response.content


def test_an_unknown_api_address_is_a_json_404(client):
    response = client.get("/api/v1/no-such-route")
    assert response.status_code == 404
    assert response.json()["code"] == "not-found"


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=SMALL_LIMIT)
def test_a_form_body_over_the_limit_is_a_413_page(client, curator, dataset):
    client.force_login(curator)
    response = client.post(
        reverse("dataset-import", args=[dataset.slug]), {"spec": "x" * (2 * SMALL_LIMIT)}
    )
    assert response.status_code == 413
    assert response.templates[0].name == "413.html"


@override_settings(DATA_UPLOAD_MAX_NUMBER_FIELDS=10)
def test_too_many_form_fields_is_a_413_page(client, curator, dataset):
    client.force_login(curator)
    fields = {f"field{i}": "x" for i in range(20)}
    response = client.post(reverse("dataset-import", args=[dataset.slug]), fields)
    assert response.status_code == 413


def test_a_multipart_body_without_a_boundary_is_a_400_page(client, curator, dataset):
    client.force_login(curator)
    response = client.post(
        reverse("dataset-import", args=[dataset.slug]),
        b"--x\r\n",
        content_type="multipart/form-data",
    )
    assert response.status_code == 400
    assert response.templates[0].name == "400.html"


def test_the_500_page_shows_no_traceback():
    assert urls.handler500 == "editor.views.errors.server_error"
    try:
        raise RuntimeError("secret detail of the crash")
    except RuntimeError:
        response = error_views.server_error(RequestFactory().get("/transcripts/1/"))
    assert response.status_code == 500
    assert b"Something went wrong" in response.content
    assert b"secret detail" not in response.content
    assert b"Traceback" not in response.content


@pytest.mark.parametrize("status", [400, 403, 404, 413, 500])
def test_every_error_page_renders_without_a_request_context(status):
    # A 500 page must not depend on what may have broken: it is rendered from nothing.
    response = error_views._answer(RequestFactory().get("/"), status)
    assert response.status_code == status
    assert b"<h1>" in response.content


def test_a_csrf_failure_is_the_apps_page():
    response = Client(enforce_csrf_checks=True).post(
        reverse("login"), {"username": "x", "password": "y"}
    )
    assert response.status_code == 403
    assert response.templates[0].name == "403_csrf.html"
