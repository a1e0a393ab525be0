"""The webhooks and versions pages: a disabled endpoint told to curators (banner and one
message), a version created from the dataset page's filter, two versions compared with the
history link of a changed transcript."""

from __future__ import annotations

import pytest
from django.utils import timezone

from editor import editing
from editor.models import DatasetVersion, Transcript, WebhookEndpoint
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db


def test_a_disabled_webhook_is_told_to_curators_once(client, dataset, curator, annotator):
    WebhookEndpoint.objects.create(
        dataset=dataset,
        url="http://93.184.216.34/in",
        secret="whsec_AA",
        disabled_at=timezone.now(),
        disabled_reason="Disabled after 10 failed deliveries in a row.",
    )
    client.force_login(curator)
    first = client.get(f"/datasets/{dataset.slug}/").content.decode()
    assert 'data-testid="webhooks-disabled"' in first
    assert "was disabled: Disabled after 10 failed deliveries" in first  # the message
    second = client.get(f"/datasets/{dataset.slug}/").content.decode()
    assert 'data-testid="webhooks-disabled"' in second
    assert "was disabled:" not in second  # told once per session
    page = client.get(f"/datasets/{dataset.slug}/webhooks/").content.decode()
    assert "whsec_AA" in page and 'data-action="enable"' in page
    client.force_login(annotator)
    assert (
        'data-testid="webhooks-disabled"'
        not in client.get(f"/datasets/{dataset.slug}/").content.decode()
    )


def test_a_version_from_the_filter_and_a_comparison(client, dataset, curator):
    one = create_transcript(dataset, author=curator, text=conversation(), spec="openchatml-2.2")
    create_transcript(dataset, author=curator, text=conversation(), spec="openchatml-2.2")
    editing.apply_transition(one, "submit", expected_version=one.version, author=curator)
    client.force_login(curator)
    response = client.post(
        f"/datasets/{dataset.slug}/version-create/",
        {"name": "review", "filter": "status=in_review&page=2", "use_filter": "1"},
    )
    assert response.status_code == 302
    version = DatasetVersion.objects.get(name="review")
    assert version.filters == {"status": ["in_review"]} and version.transcript_count == 1
    client.post(f"/datasets/{dataset.slug}/version-create/", {"name": "all"})
    current = Transcript.objects.get(pk=one.pk)
    editing.edit_message(
        current, 1, {"content": "x"}, expected_version=current.version, author=curator
    )
    client.post(f"/datasets/{dataset.slug}/version-create/", {"name": "after"})
    page = client.get(f"/datasets/{dataset.slug}/versions/all/compare/?to=after").content.decode()
    assert f"/transcripts/{one.pk}/history/?from=2&amp;to=3" in page
    refused = client.post(f"/datasets/{dataset.slug}/version-create/", {"name": "all"})
    assert refused.status_code == 409 and b'data-code="version-name-taken"' in refused.content
