"""The OpenAPI schema lists every route with its error responses; the docs page renders."""

import ninja.main
import pytest

from api.api import api
from editor.presentation.render_pages import RENDER_PAGE_MAX

from .conftest import PREFIX

pytestmark = pytest.mark.django_db

ROUTES = {
    ("get", "/datasets"): {401, 422},
    ("get", "/datasets/{slug}"): {401, 404},
    ("post", "/datasets"): {401, 409, 422},
    ("patch", "/datasets/{slug}"): {401, 403, 404, 422},
    ("delete", "/datasets/{slug}"): {401, 403, 404},
    ("get", "/datasets/{slug}/members"): {401, 404},
    ("get", "/datasets/{slug}/member-changes"): {401, 404, 422},
    ("get", "/datasets/{slug}/edits"): {401, 404, 422},
    ("post", "/datasets/{slug}/members"): {401, 403, 404, 409, 422},
    ("get", "/datasets/{slug}/invitations"): {401, 403, 404, 422},
    ("delete", "/datasets/{slug}/invitations/{username}"): {401, 403, 404},
    ("get", "/invitations"): {401, 422},
    ("post", "/invitations/{invitation_id}/accept"): {401, 404, 422},
    ("post", "/invitations/{invitation_id}/decline"): {401, 404, 422},
    ("patch", "/datasets/{slug}/members/{username}"): {401, 403, 404, 409, 422},
    ("delete", "/datasets/{slug}/members/{username}"): {401, 403, 404, 409},
    ("get", "/datasets/{slug}/export"): {401, 403, 404, 422, 429},
    ("get", "/datasets/{slug}/transcripts"): {401, 404, 422, 429},
    ("post", "/datasets/{slug}/transcripts"): {401, 403, 404, 409, 422},
    ("post", "/datasets/{slug}/imports"): {401, 403, 404, 422, 503},
    ("get", "/imports/{pk}"): {401, 404, 422},
    ("get", "/transcripts/{pk}"): {401, 403, 404, 410, 422},
    ("put", "/transcripts/{pk}"): {401, 403, 404, 409, 410, 422},
    ("delete", "/transcripts/{pk}"): {401, 403, 404, 409, 410, 422},
    ("post", "/transcripts/{pk}/undelete"): {400, 401, 403, 404, 422},
    ("get", "/transcripts/{pk}/render"): {401, 403, 404, 410, 422, 429},
    ("get", "/transcripts/{pk}/export"): {401, 403, 404, 410, 422, 429},
    ("get", "/transcripts/{pk}/validate"): {401, 403, 404, 410, 422},
    ("get", "/transcripts/{pk}/revisions"): {401, 404, 422},
    ("get", "/transcripts/{pk}/revisions/{number}"): {401, 403, 404, 422},
    ("get", "/transcripts/{pk}/diff"): {401, 403, 404, 422},
    ("post", "/transcripts/{pk}/revisions/{number}/restore"): {401, 403, 404, 409, 410, 422},
    ("get", "/transcripts/{pk}/messages/{index}"): {401, 403, 404, 410, 422},
    ("patch", "/transcripts/{pk}/messages/{index}"): {401, 403, 404, 409, 410, 422, 428},
    ("delete", "/transcripts/{pk}/messages/{index}"): {401, 403, 404, 409, 410, 422, 428},
    ("post", "/transcripts/{pk}/messages"): {401, 403, 404, 409, 410, 422, 428},
    ("post", "/transcripts/{pk}/messages/{index}/move"): {401, 403, 404, 409, 410, 422, 428},
    ("post", "/transcripts/{pk}/messages/{index}/duplicate"): {401, 403, 404, 409, 410, 422, 428},
    ("post", "/transcripts/{pk}/fixes"): {401, 403, 404, 409, 410, 422, 428},
    ("post", "/transcripts/{pk}/source"): {401, 403, 404, 409, 410, 422, 428},
    ("post", "/transcripts/{pk}/drafts/validate"): {401, 403, 404, 410, 422, 429},
    ("get", "/transcripts/{pk}/transitions"): {401, 404, 410, 422},
    ("post", "/transcripts/{pk}/transitions"): {401, 403, 404, 409, 410, 422, 428},
    ("get", "/datasets/{slug}/queues"): {401, 404, 422},
    ("post", "/datasets/{slug}/queues"): {401, 403, 404, 422},
    ("get", "/queues/{pk}"): {401, 404, 422},
    ("post", "/queues/{pk}/claim"): {401, 403, 404, 422},
    ("get", "/queues/{pk}/figures"): {401, 403, 404, 422},
    ("put", "/queues/{pk}/schemas"): {401, 403, 404, 422},
    ("get", "/queues/{pk}/assignments"): {401, 404, 422},
    ("post", "/assignments/{pk}/submit"): {401, 403, 404, 409, 422},
    ("post", "/assignments/{pk}/skip"): {401, 403, 404, 409, 422},
    ("post", "/assignments/{pk}/review"): {401, 403, 404, 409, 422},
    ("get", "/datasets/{slug}/label-schemas"): {401, 404, 422},
    ("post", "/datasets/{slug}/label-schemas"): {401, 403, 404, 409, 422},
    ("get", "/label-schemas/{pk}"): {401, 404, 422},
    ("post", "/label-schemas/{pk}/versions"): {401, 403, 404, 409, 422},
    ("get", "/label-schemas/{pk}/versions"): {401, 404, 422},
    ("get", "/label-schemas/{pk}/versions/{number}"): {401, 404, 422},
    ("post", "/label-schemas/{pk}/archive"): {401, 403, 404, 422},
    ("get", "/transcripts/{pk}/annotations"): {401, 403, 404, 410, 422},
    ("post", "/transcripts/{pk}/annotations"): {401, 403, 404, 409, 410, 422},
    ("get", "/annotations/{pk}"): {401, 403, 404, 422},
    ("put", "/annotations/{pk}"): {401, 403, 404, 409, 410, 422},
    ("post", "/annotations/{pk}/submit"): {401, 403, 404, 410, 422},
    ("delete", "/annotations/{pk}"): {401, 403, 404, 409, 410, 422},
    ("post", "/datasets/{slug}/exports"): {401, 403, 404, 422, 429},
    ("post", "/datasets/{slug}/bulk"): {401, 403, 404, 409, 422},
    ("get", "/bulk/{pk}"): {401, 404, 422},
    ("get", "/exports/{pk}"): {401, 403, 404, 422},
    ("get", "/exports/{pk}/download"): {302, 401, 403, 404, 409, 422, 503},
    ("get", "/formats/specs"): {401},
    ("post", "/formats/detect"): {401, 413, 422, 429},
    ("post", "/formats/parse"): {400, 401, 413, 422, 429},
    ("post", "/validate"): {401, 413, 422, 429},
    ("post", "/convert"): {401, 413, 422, 429},
    ("post", "/render"): {401, 413, 422, 429},
    ("get", "/transcripts/{pk}/pairs"): {401, 403, 404, 410, 422},
    ("get", "/datasets/{slug}/pairs"): {401, 403, 404, 422},
    ("post", "/pairs/{pk}/exclude"): {401, 403, 404, 422},
    ("post", "/pairs/{pk}/include"): {401, 403, 404, 422},
    ("get", "/datasets/{slug}/tokenizer"): {401, 404, 422},
    ("put", "/datasets/{slug}/tokenizer"): {401, 403, 404, 422},
    ("post", "/datasets/{slug}/tokenizer"): {401, 403, 404, 422},
    ("delete", "/datasets/{slug}/tokenizer"): {401, 403, 404, 422},
    ("get", "/datasets/{slug}/model-connections"): {401, 403, 404, 422},
    ("post", "/datasets/{slug}/model-connections"): {401, 403, 404, 409, 422},
    ("get", "/datasets/{slug}/model-connections/{pk}"): {401, 403, 404, 422},
    ("patch", "/datasets/{slug}/model-connections/{pk}"): {401, 403, 404, 409, 422},
    ("delete", "/datasets/{slug}/model-connections/{pk}"): {401, 403, 404, 409, 422},
    ("post", "/datasets/{slug}/model-connections/{pk}/test"): {401, 403, 404, 422, 429},
    ("post", "/transcripts/{pk}/messages/{index}/regenerate"): {
        401,
        403,
        404,
        410,
        422,
        429,
        502,
    },
    ("get", "/datasets/{slug}/webhooks"): {401, 403, 404, 422},
    ("post", "/datasets/{slug}/webhooks"): {401, 403, 404, 422},
    ("get", "/datasets/{slug}/webhooks/{pk}"): {401, 403, 404, 422},
    ("patch", "/datasets/{slug}/webhooks/{pk}"): {401, 403, 404, 422},
    ("delete", "/datasets/{slug}/webhooks/{pk}"): {401, 403, 404, 422},
    ("get", "/datasets/{slug}/webhooks/{pk}/deliveries"): {401, 403, 404, 422},
    ("post", "/datasets/{slug}/webhooks/{pk}/deliveries/{delivery_id}/resend"): {
        401,
        403,
        404,
        422,
    },
    ("get", "/datasets/{slug}/versions"): {401, 404, 422},
    ("post", "/datasets/{slug}/versions"): {401, 403, 404, 409, 422},
    ("get", "/datasets/{slug}/versions/{name}"): {401, 404, 422},
    ("get", "/datasets/{slug}/versions/{name}/export"): {401, 403, 404, 422, 429},
    ("get", "/datasets/{slug}/versions/{name}/diff/{other}"): {401, 404, 422},
    ("get", "/datasets/{slug}/judges"): {401, 403, 404, 422},
    ("post", "/datasets/{slug}/judges"): {401, 403, 404, 422},
    ("get", "/datasets/{slug}/judges/{pk}"): {401, 403, 404, 422},
    ("patch", "/datasets/{slug}/judges/{pk}"): {401, 403, 404, 422},
    ("delete", "/datasets/{slug}/judges/{pk}"): {401, 403, 404, 422},
    ("post", "/judge-runs"): {401, 403, 404, 422},
    ("get", "/judge-runs"): {401, 403, 404, 422},
    ("get", "/judge-runs/{pk}"): {401, 403, 404, 422},
    ("post", "/judge-runs/{pk}/cancel"): {401, 403, 404, 422},
    ("post", "/judge-runs/{pk}/resume"): {401, 403, 404, 409, 422},
    ("get", "/transcripts/{pk}/suggestions"): {401, 403, 404, 410, 422},
    ("post", "/suggestions/{pk}/accept"): {401, 403, 404, 409, 422},
    ("get", "/queues/{pk}/judge-agreement"): {401, 403, 404, 422},
    ("get", "/transcripts/{pk}/alternatives"): {401, 403, 404, 410, 422},
    ("post", "/transcripts/{pk}/alternatives"): {401, 403, 404, 410, 422},
    ("delete", "/transcripts/{pk}/alternatives/{alt_id}"): {401, 403, 404, 409, 410, 422},
    ("post", "/transcripts/{pk}/alternatives/{alt_id}/promote"): {
        401,
        403,
        404,
        409,
        410,
        422,
        428,
    },
}


@pytest.fixture
def schema(as_viewer):
    response = as_viewer.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_the_document_is_built_once_per_process(as_viewer, monkeypatch):
    """django-ninja builds the document again on each request (0.5 s): it is kept."""
    built = []
    build = ninja.main.get_schema
    monkeypatch.setattr(ninja.main, "get_schema", lambda **kw: built.append(kw) or build(**kw))
    monkeypatch.setattr(api, "_schemas", {})
    first, second = as_viewer.get("/openapi.json"), as_viewer.get("/openapi.json")
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json() and first.json()["paths"]
    assert len(built) == 1


def test_every_route_is_listed_with_its_error_responses(schema):
    listed = {
        (method, path.removeprefix(PREFIX)): {int(code) for code in op["responses"]}
        - {200, 201, 202, 204}
        for path, operations in schema["paths"].items()
        for method, op in operations.items()
    }
    assert listed == ROUTES


def test_error_responses_use_the_one_error_shape(schema):
    for operations in schema["paths"].values():
        for op in operations.values():
            for code, response in op["responses"].items():
                if int(code) >= 400:
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref.endswith("/ErrorOut")


def test_both_ways_to_authenticate_are_documented(schema):
    schemes = schema["components"]["securitySchemes"]
    assert {s["type"] for s in schemes.values()} == {"http", "apiKey"}


def test_the_docs_page_renders(client, annotator):
    client.force_login(annotator)
    response = client.get(f"{PREFIX}/docs")
    assert response.status_code == 200
    assert b"openapi.json" in response.content


def test_the_render_route_documents_its_paging(schema):
    """``offset`` and ``limit`` (at most RENDER_PAGE_MAX) in, ``total`` and ``next`` out."""
    op = schema["paths"][f"{PREFIX}/transcripts/{{pk}}/render"]["get"]
    params = {p["name"]: p["schema"] for p in op["parameters"] if p["in"] == "query"}
    assert params["limit"]["maximum"] == RENDER_PAGE_MAX
    assert params["limit"]["default"] == RENDER_PAGE_MAX
    assert params["offset"]["minimum"] == 0
    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    fields = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]
    assert {"total", "offset", "limit", "next", "source_offset"} <= set(fields)
