"""A transcript stored with a parse error can still be edited: the edit of another message,
and the edit that fixes the broken one, are saved (the error stays a diagnostic)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

NO_ROLE = {
    "chatml": "<|start|><|message|>Hi<|end_message|>\n<|start|>assistant<|message|>Yo<|end_message|>\n",
    "openchatml-0.1": "<|im_start|>\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n",
    "harmony": "<|start|><|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Yo<|return|>",
}


@pytest.fixture(params=sorted(NO_ROLE))
def without_a_role(request, as_curator, dataset):
    spec = request.param
    response = as_curator.post(
        f"/datasets/{dataset.slug}/transcripts", {"text": NO_ROLE[spec], "spec": spec}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert "E-PARSE-ROLE-MISSING" in {d["code"] for d in body["diagnostics"]}
    return body["id"]


def test_another_message_of_a_transcript_with_a_role_missing_can_be_edited(
    as_curator, without_a_role
):
    response = as_curator.patch(
        f"/transcripts/{without_a_role}/messages/1", {"version": 1, "content": "Hello again"}
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["message"]["content"] == "Hello again"
    assert "E-PARSE-ROLE-MISSING" in {d["code"] for d in body["diagnostics"]}


def test_the_edit_that_gives_the_role_back_fixes_the_transcript(as_curator, without_a_role):
    response = as_curator.patch(
        f"/transcripts/{without_a_role}/messages/0", {"version": 1, "role": "user"}
    )
    assert response.status_code == 200, response.content
    assert response.json()["error_count"] == 0
    stored = as_curator.get(f"/transcripts/{without_a_role}").json()
    assert stored["messages"][0]["role"] == "user"


def test_an_input_message_without_a_role_is_still_refused(as_curator, without_a_role):
    response = as_curator.patch(
        f"/transcripts/{without_a_role}/messages/1", {"version": 1, "role": ""}
    )
    assert response.status_code == 422, response.content
