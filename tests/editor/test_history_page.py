"""The history page: a readable diff between any two revisions, and restore."""

import pytest

from editor.models import Revision, RevisionKind
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript

FIRST = "<|start|>user<|message|>What is 2 + 2?<|end|>\n<|start|>assistant<|channel|>final<|message|>5.<|end|>\n"
FIXED = FIRST.replace("5.", "4.")


@pytest.fixture
def edited(dataset, curator):
    transcript = create_transcript(
        dataset, author=curator, text=FIRST, spec="openchatml-2.2", title="Sum"
    )
    return save_transcript(
        transcript, expected_version=1, author=curator, text=FIXED, note="fix the sum"
    )


def test_default_diff_is_the_last_change(client, edited, annotator):
    client.force_login(annotator)
    html = client.get(f"/transcripts/{edited.pk}/history/").content.decode()
    assert "From revision 1 to revision 2" in html
    assert 'data-change="changed" data-role="assistant"' in html
    assert '<span class="del">-5.</span>' in html and '<span class="add">+4.</span>' in html
    assert "fix the sum" in html


def test_restore_makes_a_new_revision(client, edited, annotator):
    client.force_login(annotator)
    response = client.post(
        f"/transcripts/{edited.pk}/revisions/1/restore/", {"expected_version": 2}
    )
    assert response.status_code == 302
    edited.refresh_from_db()
    assert edited.version == 3 and "5." in edited.source_text
    latest = Revision.objects.for_transcript(edited).first()
    assert latest.kind == RevisionKind.RESTORE


def test_stale_restore_is_a_conflict_and_changes_nothing(client, edited, annotator):
    client.force_login(annotator)
    response = client.post(
        f"/transcripts/{edited.pk}/revisions/1/restore/", {"expected_version": 1}
    )
    assert response.status_code == 409
    assert 'data-code="version-conflict"' in response.content.decode()
    edited.refresh_from_db()
    assert edited.version == 2 and "4." in edited.source_text


def test_viewer_may_not_see_old_states(client, edited, viewer):
    client.force_login(viewer)
    assert client.get(f"/transcripts/{edited.pk}/history/").status_code == 403
    assert (
        client.post(
            f"/transcripts/{edited.pk}/revisions/1/restore/", {"expected_version": 2}
        ).status_code
        == 403
    )


def test_outsider_gets_404(client, edited, outsider):
    client.force_login(outsider)
    assert client.get(f"/transcripts/{edited.pk}/history/").status_code == 404


def test_restore_asks_for_confirmation_first(client, edited, annotator, viewer):
    client.force_login(annotator)
    html = client.get(f"/transcripts/{edited.pk}/history/", {"from": 1, "to": 2}).content.decode()
    assert (
        'data-action="restore"' in html
        and '<form method="post"'
        not in html.split('data-action="restore"')[0].rsplit("Revisions", 1)[-1]
    )
    confirm = client.get(f"/transcripts/{edited.pk}/revisions/1/restore/")
    page = confirm.content.decode()
    assert confirm.status_code == 200
    assert 'data-action="confirm-restore"' in page and "message #1 changed" in page
    edited.refresh_from_db()
    assert edited.version == 2  # asking changes nothing
    client.force_login(viewer)
    assert client.get(f"/transcripts/{edited.pk}/revisions/1/restore/").status_code == 403
