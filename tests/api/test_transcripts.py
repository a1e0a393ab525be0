"""Transcripts over HTTP: add, list, read, save (with the 409 conflict), delete and undelete,
render per audience, export, validate."""

import pytest

from editor.models import Transcript
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.editor.samples import conversation

from .conftest import assert_error

pytestmark = pytest.mark.django_db

TRUNCATED = (
    "<|start|>user<|message|>Hi<|end|>\n<|start|>assistant<|channel|>final<|message|>Half an ans"
)


# --- create -------------------------------------------------------------------------------


def test_create_from_text_answers_201_with_the_transcript(as_annotator, dataset):
    text = conversation()
    response = as_annotator.post(
        f"/datasets/{dataset.slug}/transcripts",
        {
            "text": text,
            "spec": "openchatml-2.2",
            "title": "T",
            "external_id": "x-1",
            "metadata": {"k": 1},
        },
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["spec"] == "openchatml-2.2"
    assert body["source_text"] == text
    assert body["version"] == 1
    assert body["dataset"] == dataset.slug
    assert (body["title"], body["external_id"], body["metadata"]) == ("T", "x-1", {"k": 1})
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"] * 2
    assert Transcript.objects.get(pk=body["id"]).created_by.username == "annotator"


def test_create_from_a_canonical_transcript(as_annotator, dataset):
    canonical = {
        "spec": "openai-messages",
        "header": {},
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
    }
    response = as_annotator.post(f"/datasets/{dataset.slug}/transcripts", {"canonical": canonical})
    assert response.status_code == 201, response.content
    assert response.json()["messages"] == canonical["messages"]


def test_a_viewer_may_not_add_and_an_outsider_gets_404(as_viewer, as_outsider, dataset):
    body = {"text": conversation()}
    assert_error(as_viewer.post(f"/datasets/{dataset.slug}/transcripts", body), 403, "forbidden")
    assert_error(as_outsider.post(f"/datasets/{dataset.slug}/transcripts", body), 404, "not-found")
    assert not Transcript.objects.exists()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "invalid-request"),  # neither text nor canonical: the domain says so
        ({"text": "x", "canonical": {"messages": []}}, "invalid-request"),
        ({"text": "x", "spec": "no-such-spec"}, "invalid-request"),  # schema: not a spec id
        ({"text": "just words"}, "undetectable-spec"),
        ({"canonical": {"spec": "chatml", "messages": [{"content": "x"}]}}, "invalid-message"),
        ({"text": conversation(), "metadata": ["not", "an", "object"]}, "invalid-request"),
        ({"text": conversation(), "title": "t" * 301}, "field-too-long"),
    ],
)
def test_bad_input_is_a_422_in_the_error_shape(as_annotator, dataset, body, code):
    response = as_annotator.post(f"/datasets/{dataset.slug}/transcripts", body)
    assert_error(response, 422, code)


def test_a_body_that_is_not_json_is_refused_in_the_error_shape(as_annotator, dataset):
    response = as_annotator.client.post(
        f"/api/v1/datasets/{dataset.slug}/transcripts",
        "{not json",
        content_type="application/json",
        headers=as_annotator.headers,
    )
    assert response.status_code in (400, 422)
    assert set(response.json()) == {"code", "message", "details"}


# --- list ---------------------------------------------------------------------------------


def test_list_filters_and_paginates(as_viewer, dataset, annotator):
    good = [
        create_transcript(
            dataset, author=annotator, text=conversation(), spec="openchatml-2.2", title=f"ok {n}"
        )
        for n in range(3)
    ]
    broken = create_transcript(dataset, author=annotator, text=TRUNCATED, spec="openchatml-2.2")
    url = f"/datasets/{dataset.slug}/transcripts"

    body = as_viewer.get(url, {"limit": 2}).json()
    assert body["count"] == 4
    assert [t["id"] for t in body["items"]] == [good[0].pk, good[1].pk]
    assert body["items"][0]["message_count"] == 4

    assert [t["id"] for t in as_viewer.get(url, {"has_errors": True}).json()["items"]] == [
        broken.pk
    ]
    assert as_viewer.get(url, {"has_errors": False}).json()["count"] == 3
    assert as_viewer.get(url, {"status": "approved"}).json()["count"] == 0
    assert as_viewer.get(url, {"status": ["draft", "approved"]}).json()["count"] == 4
    assert as_viewer.get(url, {"spec": "chatml"}).json()["count"] == 0
    assert_error(as_viewer.get(url, {"status": "bogus"}), 422, "invalid-request")


def test_list_queries_are_bounded(as_viewer, dataset, annotator, django_assert_max_num_queries):
    for n in range(40):
        create_transcript(dataset, author=annotator, text=conversation(turns=n % 3 + 1))
    # token, dataset, count, page
    with django_assert_max_num_queries(5):
        response = as_viewer.get(f"/datasets/{dataset.slug}/transcripts", {"limit": 40})
    assert len(response.json()["items"]) == 40


# --- read -----------------------------------------------------------------------------------


def test_get_returns_the_canonical_transcript_and_what_is_stored(as_annotator, transcript):
    body = as_annotator.get(f"/transcripts/{transcript.pk}").json()
    assert body["id"] == transcript.pk
    assert body["spec"] == "openchatml-2.2"
    assert body["messages"][1]["content"] == "Answer 0."
    assert body["messages"][1]["channel"] == "final"
    assert body["source_text"] == transcript.source_text
    assert body["version"] == 1
    assert body["status"] == "draft"
    assert body["diagnostics"] == transcript.diagnostics
    assert body["external_id"] == "chat-1"
    assert body["metadata"] == {"source": "test"}


def test_a_viewer_reads_only_the_end_user_rendering(as_viewer, transcript):
    body = assert_error(as_viewer.get(f"/transcripts/{transcript.pk}"), 403, "E-PERM-VISIBILITY")
    assert body["details"]["allowed"] == ["end_user"]


def test_unknown_and_foreign_transcripts_are_404_and_bad_ids_422(as_outsider, transcript):
    assert_error(as_outsider.get(f"/transcripts/{transcript.pk}"), 404, "not-found")
    assert_error(as_outsider.get("/transcripts/999999"), 404, "not-found")
    assert_error(as_outsider.get("/transcripts/abc"), 422, "invalid-request")


# --- save: optimistic locking ---------------------------------------------------------------


def test_two_saves_from_the_same_version_one_wins_the_other_gets_409(
    as_annotator, as_curator, transcript
):
    url = f"/transcripts/{transcript.pk}"
    mine = as_annotator.put(url, {"expected_version": 1, "title": "Mine", "note": "retitled"})
    assert mine.status_code == 200, mine.content
    assert mine.json()["version"] == 2

    theirs = as_curator.put(
        url, {"expected_version": 1, "text": conversation(turns=1), "spec": "openchatml-2.2"}
    )
    body = assert_error(theirs, 409, "version-conflict")
    assert body["details"]["expected_version"] == 1
    assert body["details"]["current_version"] == 2
    assert body["details"]["current"]["title"] == "Mine"

    # Nothing lost: the winner's change is stored, the loser can retry on the current version.
    stored = as_annotator.get(url).json()
    assert (stored["title"], stored["version"], len(stored["messages"])) == ("Mine", 2, 4)
    retry = as_curator.put(
        url, {"expected_version": 2, "text": conversation(turns=1), "spec": "openchatml-2.2"}
    )
    assert retry.status_code == 200
    assert (retry.json()["title"], len(retry.json()["messages"])) == ("Mine", 2)


def test_save_messages_keeps_the_header_and_writes_a_revision(as_annotator, transcript):
    messages = as_annotator.get(f"/transcripts/{transcript.pk}").json()["messages"]
    messages[1]["content"] = "A better answer."
    response = as_annotator.put(
        f"/transcripts/{transcript.pk}",
        {"expected_version": 1, "messages": messages, "metadata": {"reviewed": True}},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["messages"][1]["content"] == "A better answer."
    assert body["metadata"] == {"reviewed": True}
    assert "A better answer." in body["source_text"]
    assert transcript.revisions.count() == 2


def test_save_needs_expected_version_and_editing_rights(as_annotator, as_viewer, transcript):
    url = f"/transcripts/{transcript.pk}"
    assert_error(as_annotator.put(url, {"title": "x"}), 422, "invalid-request")
    assert_error(as_viewer.put(url, {"expected_version": 1, "title": "x"}), 403, "forbidden")
    assert_error(
        as_annotator.put(url, {"expected_version": 1, "text": "x", "messages": []}),
        422,
        "invalid-request",
    )


# --- delete / undelete ----------------------------------------------------------------------


def test_delete_is_reversible_by_a_curator(as_annotator, as_curator, transcript):
    url = f"/transcripts/{transcript.pk}"
    assert_error(as_annotator.delete(url), 422, "invalid-request")  # expected_version needed
    assert_error(as_annotator.delete(url, {"expected_version": 7}), 409, "version-conflict")

    deleted = as_annotator.delete(url, {"expected_version": 1, "note": "duplicate"})
    assert deleted.status_code == 200
    assert deleted.json()["deleted_at"] is not None
    assert_error(as_annotator.get(url), 410, "transcript-deleted")
    listing = f"/datasets/{transcript.dataset.slug}/transcripts"
    assert as_annotator.get(listing).json()["count"] == 0
    assert [t["id"] for t in as_annotator.get(listing, {"deleted": True}).json()["items"]] == [
        transcript.pk
    ]

    assert_error(as_annotator.post(f"{url}/undelete"), 403, "forbidden")
    restored = as_curator.post(f"{url}/undelete", {"note": "not a duplicate"})
    assert restored.status_code == 200
    assert restored.json()["deleted_at"] is None
    assert restored.json()["version"] == 3
    assert_error(as_curator.post(f"{url}/undelete"), 400, "not-deleted")


# --- render, export, validate -----------------------------------------------------------------


def test_render_for_each_audience_the_role_allows(as_viewer, as_annotator, transcript):
    url = f"/transcripts/{transcript.pk}/render"
    end_user = as_viewer.get(url).json()
    assert end_user["audience"] == "end_user"
    assert [i["role"] for i in end_user["items"]] == ["user", "assistant"] * 2
    assert "source" not in end_user

    debug = as_annotator.get(url, {"audience": "debug"}).json()
    assert debug["source"] == transcript.source_text
    assert debug["spans"]
    assert as_annotator.get(url, {"audience": "annotator"}).status_code == 200


@pytest.mark.parametrize("audience", ["annotator", "debug"])
def test_a_viewer_asking_for_more_than_the_end_user_sees_gets_403(as_viewer, transcript, audience):
    response = as_viewer.get(f"/transcripts/{transcript.pk}/render", {"audience": audience})
    body = assert_error(response, 403, "E-PERM-VISIBILITY")
    assert body["details"] == {"audience": audience, "allowed": ["end_user"]}


def test_render_refuses_an_unknown_audience(as_annotator, transcript):
    response = as_annotator.get(f"/transcripts/{transcript.pk}/render", {"audience": "god"})
    assert_error(response, 422, "invalid-request")


def test_export_in_its_own_spec_is_the_source_text_and_others_report_losses(
    as_annotator, transcript
):
    url = f"/transcripts/{transcript.pk}/export"
    own = as_annotator.get(url).json()
    assert own == {"spec": "openchatml-2.2", "text": transcript.source_text, "losses": []}
    chatml = as_annotator.get(url, {"spec": "chatml"}).json()
    assert chatml["spec"] == "chatml"
    assert "Answer 1." in chatml["text"]
    assert all({"message_index", "field", "detail"} <= set(loss) for loss in chatml["losses"])
    assert_error(as_annotator.get(url, {"spec": "nope"}), 422, "invalid-request")


def test_a_viewer_exports_only_what_the_end_user_sees(as_viewer, transcript):
    url = f"/transcripts/{transcript.pk}/export"
    assert_error(as_viewer.get(url), 403, "E-PERM-VISIBILITY")
    response = as_viewer.get(url, {"audience": "end_user", "spec": "openai-messages"})
    assert response.status_code == 200
    assert "Answer 1." in response.json()["text"]


def test_validate_reports_parse_and_semantic_diagnostics(as_annotator, dataset, annotator):
    broken = create_transcript(dataset, author=annotator, text=TRUNCATED, spec="openchatml-2.2")
    body = as_annotator.get(f"/transcripts/{broken.pk}/validate").json()
    assert body["error_count"] >= 1
    assert "E-STREAM-TRUNCATED" in [d["code"] for d in body["diagnostics"]]
    assert body["diagnostics"] == broken.diagnostics


def test_validate_checks_a_transcript_whose_spec_cannot_say_everything(
    as_annotator, dataset, annotator
):
    chatml = create_transcript(
        dataset, author=annotator, text="<|im_start|>user\nHi<|im_end|>\n", spec="chatml"
    )
    saved = save_transcript(
        chatml,
        expected_version=1,
        author=annotator,
        messages=[{"role": "user", "content": "Hi", "channel": "analysis"}],
    )
    assert not saved.source_is_exact
    body = as_annotator.get(f"/transcripts/{chatml.pk}/validate").json()
    assert body["diagnostics"] == saved.diagnostics
