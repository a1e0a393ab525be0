"""The Django admin shows transcripts, messages and revisions but never writes them: every
change goes through editor.storage (version check, revision, soft delete)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from editor import formats
from editor.models import Dataset, Message, Revision, Transcript
from editor.storage.create import create_transcript

from .samples import conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def transcript(dataset, curator):
    return create_transcript(dataset, text=conversation(), author=curator, title="Original")


def content_of(transcript: Transcript) -> tuple:
    """Everything the admin could have touched, to compare before and after a request."""
    transcript = Transcript.all_objects.get(pk=transcript.pk)
    return (
        transcript.title,
        transcript.status,
        transcript.version,
        transcript.deleted_at,
        [(m.index, m.role, m.content) for m in transcript.messages.order_by("index")],
        list(transcript.revisions.values_list("number", "note")),
    )


@pytest.mark.parametrize("model", ["transcript", "revision"])
def test_change_pages_show_the_object_without_a_save_button(admin_client, transcript, model):
    obj = transcript if model == "transcript" else transcript.revisions.get()
    response = admin_client.get(reverse(f"admin:editor_{model}_change", args=[obj.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert 'name="_save"' not in html and 'name="_continue"' not in html
    assert f"/admin/editor/{model}/{obj.pk}/delete/" not in html


def test_a_transcript_links_to_its_page_in_the_app(admin_client, transcript):
    link = f'href="/transcripts/{transcript.pk}/"'
    change = admin_client.get(reverse("admin:editor_transcript_change", args=[transcript.pk]))
    changelist = admin_client.get(reverse("admin:editor_transcript_changelist"))
    assert link in change.content.decode()
    assert link in changelist.content.decode()


def test_messages_are_listed_read_only_on_the_transcript_page(admin_client, transcript):
    html = admin_client.get(
        reverse("admin:editor_transcript_change", args=[transcript.pk])
    ).content.decode()
    assert "Question 0?" in html
    assert 'name="messages-0-content"' not in html and "<textarea" not in html


def test_the_transcript_page_reads_the_transcript_once_however_many_messages(
    admin_client, dataset, curator
):
    """Contents read from the source text (editor.db.message_text) come from the transcript
    shown, not from a query (and a decompression) for each message row."""
    messages = [
        formats.Message(role="user", content=f"Question {n}: where do the tides come from?")
        for n in range(40)
    ]
    text = formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=messages))
    transcript = create_transcript(dataset, text=text, author=curator)
    with CaptureQueriesContext(connection) as queries:
        html = admin_client.get(
            reverse("admin:editor_transcript_change", args=[transcript.pk])
        ).content.decode()
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "editor_transcript"' in q["sql"]]
    assert len(reads) <= 2, reads
    for message in transcript.canonical().messages:
        assert escape(message.content) in html


@pytest.mark.parametrize("model", ["transcript", "revision"])
def test_posting_a_change_is_refused_and_changes_nothing(admin_client, transcript, model):
    obj = transcript if model == "transcript" else transcript.revisions.get()
    before = content_of(transcript)
    response = admin_client.post(
        reverse(f"admin:editor_{model}_change", args=[obj.pk]),
        {
            "title": "Changed behind the domain's back",
            "note": "forged",
            "status": "approved",
            "messages-TOTAL_FORMS": "1",
            "messages-INITIAL_FORMS": "1",
            "messages-0-id": str(transcript.messages.first().pk),
            "messages-0-content": "forged",
            "_save": "Save",
        },
    )
    assert response.status_code == 403
    assert content_of(transcript) == before


@pytest.mark.parametrize("model", ["transcript", "revision"])
def test_deleting_is_refused_and_deletes_nothing(admin_client, transcript, model):
    obj = transcript if model == "transcript" else transcript.revisions.get()
    before = content_of(transcript)
    url = reverse(f"admin:editor_{model}_delete", args=[obj.pk])
    assert admin_client.get(url).status_code == 403
    assert admin_client.post(url, {"post": "yes"}).status_code == 403
    assert content_of(transcript) == before


@pytest.mark.parametrize("model", [Transcript, Revision])
def test_adding_is_refused(admin_client, dataset, transcript, model):
    url = reverse(f"admin:editor_{model._meta.model_name}_add")
    count = model._base_manager.count()
    assert admin_client.get(url).status_code == 403
    response = admin_client.post(
        url, {"dataset": dataset.pk, "transcript": transcript.pk, "spec": "chatml", "number": 9}
    )
    assert response.status_code == 403
    assert model._base_manager.count() == count


@pytest.mark.parametrize("model", ["transcript", "revision"])
def test_the_changelist_offers_no_bulk_delete(admin_client, transcript, model):
    url = reverse(f"admin:editor_{model}_changelist")
    assert "delete_selected" not in admin_client.get(url).content.decode()
    obj = transcript if model == "transcript" else transcript.revisions.get()
    before = content_of(transcript)
    admin_client.post(
        url, {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"}
    )
    assert content_of(transcript) == before


def test_message_rows_have_no_admin_of_their_own(admin_client, transcript):
    message = Message.objects.filter(transcript=transcript).first()
    response = admin_client.get(f"/admin/editor/message/{message.pk}/change/")
    assert response.status_code == 404


def test_datasets_stay_editable(admin_client, dataset):
    response = admin_client.post(
        reverse("admin:editor_dataset_change", args=[dataset.pk]),
        {
            "name": "Renamed",
            "slug": dataset.slug,
            "description": "",
            "default_spec": "chatml",
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    assert Dataset.objects.get(pk=dataset.pk).name == "Renamed"


def test_a_dataset_with_transcripts_cannot_be_deleted_here(admin_client, dataset, transcript):
    # Deleting the dataset would delete its transcripts with it, past the domain's soft delete.
    response = admin_client.post(
        reverse("admin:editor_dataset_delete", args=[dataset.pk]), {"post": "yes"}
    )
    assert response.status_code == 403
    assert Transcript.all_objects.filter(pk=transcript.pk).exists()


def test_an_empty_dataset_can_be_deleted(admin_client):
    empty = Dataset.objects.create(name="Empty", slug="empty")
    response = admin_client.post(
        reverse("admin:editor_dataset_delete", args=[empty.pk]), {"post": "yes"}
    )
    assert response.status_code == 302
    assert not Dataset.objects.filter(pk=empty.pk).exists()


def test_the_membership_log_is_listed_read_only(admin_client, dataset, curator, outsider):
    from editor.membership import add_member

    add_member(dataset, author=curator, username="outsider", role="reviewer")
    response = admin_client.get(reverse("admin:editor_membershipchange_changelist"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "outsider" in html and "Reviewer" in html
    assert admin_client.get(reverse("admin:editor_membershipchange_add")).status_code == 403


def test_memberships_are_read_only_here_so_every_change_is_recorded(
    admin_client, dataset, curator, outsider
):
    # Changes go through editor.membership (the dataset page, the API): recorded, and the
    # last curator kept. A form here would bypass both.
    from editor.models import Membership

    membership = Membership.objects.get(dataset=dataset, user=curator)
    assert admin_client.get(reverse("admin:editor_membership_add")).status_code == 403
    response = admin_client.post(
        reverse("admin:editor_membership_delete", args=[membership.pk]), {"post": "yes"}
    )
    assert response.status_code == 403
    page = admin_client.get(reverse("admin:editor_dataset_change", args=[dataset.pk]))
    assert page.status_code == 200
    assert 'name="memberships-0-role"' not in page.content.decode()
    assert Membership.objects.filter(pk=membership.pk, role=membership.role).exists()


def test_a_revisions_snapshot_is_shown_as_json(admin_client, transcript):
    revision = transcript.revisions.get()
    html = admin_client.get(
        reverse("admin:editor_revision_change", args=[revision.pk])
    ).content.decode()
    assert "<pre>{\n  &quot;current&quot;: true\n}</pre>" in html


@pytest.mark.parametrize("path", ["/admin/", "/admin/login/"])
def test_the_admin_has_the_apps_icon(client, admin_client, path):
    html = (admin_client if path == "/admin/" else client).get(path).content.decode()
    assert 'rel="icon"' in html and "favicon" in html
    assert html.count("<title>") == 1  # Django's page, with one more link, not a copy of it
