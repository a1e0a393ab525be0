"""The API's side of a queue's label schemas: ``schemas`` in QueueIn and QueueOut, and
``PUT /queues/{id}/schemas``."""

from __future__ import annotations

import pytest

from editor.labels import create_label_schema
from tests.api.conftest import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def schemas(dataset, curator):
    question = {
        "key": "ok",
        "kind": "choice",
        "prompt": "OK?",
        "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}],
    }
    return [
        create_label_schema(dataset, author=curator, name=name, questions=[question]).pk
        for name in ("Tone", "Facts")
    ]


def test_a_queue_is_created_with_its_schemas_and_they_can_change(as_curator, schemas):
    created = as_curator.post(
        "/datasets/support-chats/queues", {"name": "API", "schemas": [schemas[1]]}
    )
    assert created.status_code == 201, created.content
    queue = created.json()
    assert queue["schemas"] == [schemas[1]]

    changed = as_curator.put(f"/queues/{queue['id']}/schemas", {"schemas": schemas})
    assert changed.status_code == 200 and changed.json()["schemas"] == sorted(schemas)
    listed = as_curator.get("/datasets/support-chats/queues").json()
    assert listed["items"][0]["schemas"] == sorted(schemas)
    assert as_curator.get(f"/queues/{queue['id']}").json()["schemas"] == sorted(schemas)

    emptied = as_curator.put(f"/queues/{queue['id']}/schemas", {"schemas": []})
    assert emptied.json()["schemas"] == []  # every active schema again


def test_unknown_schemas_and_other_roles_are_refused(as_curator, as_annotator, schemas):
    assert_error(
        as_curator.post("/datasets/support-chats/queues", {"name": "X", "schemas": [999999]}),
        422,
        "unknown-schema",
    )
    queue = as_curator.post("/datasets/support-chats/queues", {"name": "Y"}).json()
    assert queue["schemas"] == []
    assert_error(
        as_curator.put(f"/queues/{queue['id']}/schemas", {"schemas": [999999]}),
        422,
        "unknown-schema",
    )
    assert_error(
        as_annotator.put(f"/queues/{queue['id']}/schemas", {"schemas": schemas}), 403, "forbidden"
    )
