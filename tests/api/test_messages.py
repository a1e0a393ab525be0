"""The editing routes: message-level writes, quick fixes, raw source and draft validation."""

from __future__ import annotations

import pytest

from editor.models import Transcript
from editor.storage.create import create_transcript
from tests.api.conftest import api_client_for, assert_error
from tests.editor.samples import demo_texts

pytestmark = pytest.mark.django_db

CALL_WITHOUT_ID = (
    "version: 2.2\n"
    "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{}<|call|>\n"
    "<|start|>tool name=functions.f<|channel|>commentary<|message|>{}<|end|>"
)


@pytest.fixture
def weather(dataset, annotator):
    return create_transcript(
        dataset, text=demo_texts()["openchatml-2.2"], spec="openchatml-2.2", author=annotator
    )


def stored(transcript) -> Transcript:
    return Transcript.objects.get(pk=transcript.pk)


def test_patch_changes_only_the_fields_sent(as_annotator, weather):
    response = as_annotator.client.patch(
        f"/api/v1/transcripts/{weather.pk}/messages/7",
        '{"version": 1, "content": "Sunny, 20 °C.", "note": "shorter"}',
        content_type="application/json",
        headers=as_annotator.headers,
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 2
    assert body["message"] == {
        "role": "assistant",
        "content": "Sunny, 20 °C.",
        "channel": "final",
        "end": "return",
    }
    assert body["message_count"] == 8
    assert isinstance(body["diagnostics"], list)
    assert stored(weather).revisions.get(number=2).note == "shorter"


def patch(client, path, body, **headers):
    import json

    return client.client.patch(
        "/api/v1" + path,
        json.dumps(body),
        content_type="application/json",
        headers={**client.headers, **headers},
    )


def test_patch_null_clears_a_field_and_end_null_truncates(as_annotator, weather):
    response = patch(
        as_annotator, f"/transcripts/{weather.pk}/messages/4", {"version": 1, "intent": None}
    )
    assert response.status_code == 200, response.content
    assert "intent" not in response.json()["message"]
    response = patch(
        as_annotator, f"/transcripts/{weather.pk}/messages/4", {"version": 2, "end": None}
    )
    assert "end" not in response.json()["message"]


def test_version_from_if_match(as_annotator, weather):
    response = patch(
        as_annotator,
        f"/transcripts/{weather.pk}/messages/2",
        {"content": "Weather in Kyoto?"},
        **{"If-Match": '"1"'},
    )
    assert response.status_code == 200, response.content
    assert response.json()["version"] == 2


def test_a_write_without_a_version_is_428(as_annotator, weather):
    response = patch(as_annotator, f"/transcripts/{weather.pk}/messages/2", {"content": "x"})
    assert_error(response, 428, "version-required")
    assert stored(weather).version == 1


def test_stale_version_is_409_with_the_current_version(as_annotator, as_curator, weather):
    first = patch(
        as_curator, f"/transcripts/{weather.pk}/messages/2", {"version": 1, "content": "A"}
    )
    assert first.status_code == 200
    response = patch(
        as_annotator, f"/transcripts/{weather.pk}/messages/2", {"version": 1, "content": "B"}
    )
    body = assert_error(response, 409, "version-conflict")
    assert body["details"]["current_version"] == 2
    assert body["details"]["current"]["transcript"]["messages"][2]["content"] == "A"


def test_invalid_field_values_are_422(as_annotator, weather):
    response = patch(
        as_annotator, f"/transcripts/{weather.pk}/messages/2", {"version": 1, "end": "stop"}
    )
    assert_error(response, 422, "invalid-request")
    response = patch(
        as_annotator, f"/transcripts/{weather.pk}/messages/2", {"version": 1, "role": ""}
    )
    assert_error(response, 422, "invalid-message")


def test_missing_message_is_404(as_annotator, weather):
    response = patch(
        as_annotator, f"/transcripts/{weather.pk}/messages/8", {"version": 1, "content": "x"}
    )
    assert_error(response, 404, "message-not-found")


def test_insert_move_duplicate_delete(as_annotator, weather):
    pk = weather.pk
    response = as_annotator.post(
        f"/transcripts/{pk}/messages",
        {"version": 1, "after": 2, "message": {"role": "user", "content": "Also Osaka?"}},
    )
    assert response.status_code == 201, response.content
    assert response.json()["message"]["content"] == "Also Osaka?"
    assert response.json()["message_count"] == 9

    response = as_annotator.post(f"/transcripts/{pk}/messages", {"version": 2})
    assert response.status_code == 201
    assert response.json()["message"] == {"role": "user", "content": "", "end": "end"}

    response = as_annotator.post(f"/transcripts/{pk}/messages/1/move", {"version": 3, "to": 0})
    assert response.status_code == 200, response.content
    assert response.json()["message"]["role"] == "system"

    response = as_annotator.post(f"/transcripts/{pk}/messages/4/duplicate", {"version": 4})
    assert response.status_code == 201, response.content
    assert response.json()["message_count"] == 11

    response = as_annotator.delete(f"/transcripts/{pk}/messages/4", {"version": 5})
    assert response.status_code == 200, response.content
    assert response.json()["message_count"] == 10
    roles = [m.role for m in stored(weather).canonical().messages]
    assert roles[:5] == ["system", "user", "developer", "user", "user"]


def test_delete_takes_if_match(as_annotator, weather):
    response = as_annotator.client.delete(
        f"/api/v1/transcripts/{weather.pk}/messages/0",
        headers={**as_annotator.headers, "If-Match": 'W/"1"'},
    )
    assert response.status_code == 200, response.content
    assert response.json()["version"] == 2


def test_get_one_message(as_annotator, as_viewer, weather):
    response = as_annotator.get(f"/transcripts/{weather.pk}/messages/3")
    assert response.json() == {
        "index": 3,
        "message": {
            "role": "assistant",
            "content": "Call functions.get_current_weather with location Tokyo.",
            "channel": "analysis",
            "end": "end",
        },
    }
    # A viewer may not read a hidden message through this route.
    assert_error(as_viewer.get(f"/transcripts/{weather.pk}/messages/3"), 403, "E-PERM-VISIBILITY")


def test_viewers_may_not_write_and_outsiders_get_404(as_viewer, as_outsider, weather):
    assert_error(
        patch(as_viewer, f"/transcripts/{weather.pk}/messages/2", {"version": 1, "content": "x"}),
        403,
        "E-PERM-VISIBILITY",
    )
    assert_error(
        patch(as_outsider, f"/transcripts/{weather.pk}/messages/2", {"version": 1, "content": "x"}),
        404,
        "not-found",
    )
    assert_error(
        as_outsider.post(
            f"/transcripts/{weather.pk}/fixes",
            {"version": 1, "code": "X", "message_index": 0, "fix_id": "x"},
        ),
        404,
        "not-found",
    )
    assert stored(weather).version == 1


def test_a_viewer_with_full_visibility_is_still_refused_by_the_domain(weather, viewer, dataset):
    """Edit rights are the domain's decision (``Dataset.can_edit``), not only visibility's."""
    from editor.models import Membership, Role

    Membership.objects.filter(user=viewer).update(role=Role.REVIEWER)
    client = api_client_for(viewer)
    response = patch(
        client, f"/transcripts/{weather.pk}/messages/2", {"version": 1, "content": "x"}
    )
    assert response.status_code == 200  # reviewers edit
    Membership.objects.filter(user=viewer).update(role=Role.VIEWER)
    response = patch(
        client, f"/transcripts/{weather.pk}/messages/2", {"version": 2, "content": "y"}
    )
    assert response.status_code == 403


def test_apply_a_quick_fix(as_annotator, dataset, annotator):
    transcript = create_transcript(
        dataset, text=CALL_WITHOUT_ID, spec="openchatml-2.2", author=annotator
    )
    diagnostic = next(d for d in transcript.diagnostics if d.get("fix"))
    response = as_annotator.post(
        f"/transcripts/{transcript.pk}/fixes",
        {
            "version": 1,
            "code": diagnostic["code"],
            "message_index": diagnostic["message_index"],
            "fix_id": diagnostic["fix"]["id"],
        },
    )
    assert response.status_code == 200, response.content
    assert response.json()["version"] == 2
    assert "call_id=call_1" in stored(transcript).source_text

    again = as_annotator.post(
        f"/transcripts/{transcript.pk}/fixes",
        {
            "version": 2,
            "code": diagnostic["code"],
            "message_index": diagnostic["message_index"],
            "fix_id": diagnostic["fix"]["id"],
        },
    )
    assert_error(again, 409, "fix-not-found")


def test_raw_source_refuses_errors_then_saves_a_draft(as_annotator, weather):
    broken = "<|start|>user<|message|>hi<|end|>\n<|start|><|message|>no role<|end|>"
    response = as_annotator.post(
        f"/transcripts/{weather.pk}/source", {"version": 1, "text": broken}
    )
    body = assert_error(response, 422, "has-errors")
    assert any(d["code"] == "E-PARSE-ROLE-MISSING" for d in body["details"]["diagnostics"])

    response = as_annotator.post(
        f"/transcripts/{weather.pk}/source", {"version": 1, "text": broken, "draft": True}
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "draft"
    assert response.json()["error_count"] >= 1
    assert stored(weather).source_text == broken


def test_raw_source_converted(as_annotator, weather):
    response = as_annotator.post(
        f"/transcripts/{weather.pk}/source",
        {"version": 1, "text": weather.source_text, "convert_to": "openai-messages"},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert stored(weather).spec == "openai-messages"
    assert body["losses"], "2.2 → openai-messages loses the header at least"


def test_draft_validation_of_a_message_and_of_a_text(as_annotator, weather):
    response = as_annotator.post(
        f"/transcripts/{weather.pk}/drafts/validate",
        {"index": 5, "fields": {"content": "{not json"}},
    )
    assert response.status_code == 200, response.content
    codes = [d["code"] for d in response.json()["diagnostics"]]
    assert "E-BODY-CONSTRAINT-VIOLATION" in codes

    response = as_annotator.post(
        f"/transcripts/{weather.pk}/drafts/validate",
        {"text": "<|start|>user<|message|>hi<|end|>"},
    )
    assert response.json()["error_count"] == 0
    assert_error(
        as_annotator.post(f"/transcripts/{weather.pk}/drafts/validate", {}),
        422,
        "invalid-request",
    )
    assert stored(weather).version == 1


def test_session_writes_need_csrf(client, annotator, weather):
    client.force_login(annotator)
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(annotator)
    response = strict.patch(
        f"/api/v1/transcripts/{weather.pk}/messages/2",
        '{"version": 1, "content": "x"}',
        content_type="application/json",
    )
    assert_error(response, 403, "csrf-failed")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/messages/1", None),
        ("patch", "/messages/1", {"version": 1, "content": "x"}),
        ("delete", "/messages/1", None),
        ("post", "/messages", {"version": 1}),
        ("post", "/messages/1/move", {"version": 1, "to": 0}),
        ("post", "/messages/1/duplicate", {"version": 1}),
        ("post", "/fixes", {"version": 1, "code": "X", "message_index": 0, "fix_id": "x"}),
        ("post", "/source", {"version": 1, "text": "<|start|>user<|message|>x<|end|>"}),
        ("post", "/drafts/validate", {"text": "x"}),
        ("get", "/transitions", None),
        ("post", "/transitions", {"version": 1, "name": "submit"}),
    ],
)
def test_every_editing_route_is_404_for_outsiders_and_stale_writes_are_409(
    as_outsider, as_curator, weather, method, path, body
):
    import json

    def send(client, data):
        url = f"/api/v1/transcripts/{weather.pk}{path}"
        if method == "delete":
            return client.client.delete(url + "?version=1", headers=client.headers)
        if method == "get":
            return client.client.get(url, headers=client.headers)
        return getattr(client.client, method)(
            url, json.dumps(data), content_type="application/json", headers=client.headers
        )

    assert_error(send(as_outsider, body), 404, "not-found")
    if method != "get" and path != "/drafts/validate":
        Transcript.objects.filter(pk=weather.pk).update(version=5)
        stale = send(as_curator, body)
        assert stale.status_code == 409, stale.content
    assert stored(weather).revisions.count() == 1
