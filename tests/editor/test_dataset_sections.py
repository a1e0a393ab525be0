"""The dataset page's sections below the table (queues, members, import, export) come after
it (issue 34): the page holds a placeholder for each, which fetches its section (htmx); each
section's view decides what the caller may see as the page did; a page shown again with a
form's errors (no htmx to fetch anything) holds them all."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from editor.models import ExportTask, ImportTask, Invitation, MembershipChange, Role

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def placeholders(html: str) -> dict[str, str]:
    """Section name -> the URL its placeholder fetches."""
    found = re.findall(r'data-deferred-section="([^"]+)"\s+hx-get="([^"]+)"', html)
    return dict(found)


def test_the_page_holds_a_placeholder_per_section_not_the_sections(client, dataset, curator):
    client.force_login(curator)
    html = client.get(f"/datasets/{dataset.slug}/").content.decode()
    base = f"/datasets/{dataset.slug}/sections"
    assert placeholders(html) == {
        "queues": f"{base}/queues/",
        "members": f"{base}/members/",
        "import": f"{base}/import/",
        "export": f"{base}/export/",
    }
    for testid in ("members", "import-form", "export-form", "add-member-form"):
        assert f'data-testid="{testid}"' not in html
    assert 'data-testid="transcripts"' in html or "No transcripts yet." in html
    # Each placeholder sits where its section goes: the anchors (#members, #export) hold.
    for name in ("queues", "members", "import", "export"):
        assert f'id="{name}" data-deferred-section="{name}"' in html


def test_a_viewer_gets_no_import_placeholder_and_the_view_refuses_it(client, dataset, viewer):
    client.force_login(viewer)
    html = client.get(f"/datasets/{dataset.slug}/").content.decode()
    assert set(placeholders(html)) == {"queues", "members", "export"}
    # The decision is the view's, not only the template's.
    response = client.get(f"/datasets/{dataset.slug}/sections/import/", headers=HX)
    assert response.status_code == 403


def test_each_section_answers_its_partial(client, dataset, curator, viewer):
    Invitation.objects.create(
        dataset=dataset, username="someone", role=Role.VIEWER, invited_by=curator
    )
    client.force_login(curator)
    base = f"/datasets/{dataset.slug}/sections"
    members = client.get(f"{base}/members/", headers=HX).content.decode()
    assert members.lstrip().startswith('<section class="card" id="members"')
    assert 'data-testid="add-member-form"' in members and 'data-invitation="someone"' in members
    queues = client.get(f"{base}/queues/", headers=HX).content.decode()
    assert 'id="queues"' in queues and 'data-testid="queue-form"' in queues
    imported = client.get(f"{base}/import/", headers=HX).content.decode()
    assert 'data-testid="import-form"' in imported and 'name="csrfmiddlewaretoken"' in imported
    exported = client.get(f"{base}/export/", headers=HX).content.decode()
    assert 'data-testid="export-form"' in exported and 'id="export-preview"' in exported
    for partial in (members, queues, imported, exported):
        assert "<html" not in partial
    # A viewer's members section: no controls, no invitations (curators' only).
    client.force_login(viewer)
    members = client.get(f"{base}/members/", headers=HX).content.decode()
    assert 'data-member="curator"' in members
    assert 'data-testid="add-member-form"' not in members and "someone" not in members
    queues = client.get(f"{base}/queues/", headers=HX).content.decode()
    assert 'data-testid="queue-form"' not in queues
    exported = client.get(f"{base}/export/", headers=HX).content.decode()
    assert '<option value="end_user" selected>' in exported


def test_without_htmx_a_section_is_a_page_of_its_own(client, dataset, curator):
    client.force_login(curator)
    response = client.get(f"/datasets/{dataset.slug}/sections/members/")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html
    assert f'<a href="/datasets/{dataset.slug}/">' in html  # back to the dataset
    assert 'data-testid="add-member-form"' in html
    assert response["Vary"].count("HX-Request")


def test_outsiders_and_the_anonymous_get_nothing(client, dataset, outsider):
    url = f"/datasets/{dataset.slug}/sections/members/"
    assert client.get(url, headers=HX).status_code == 302  # to the login page
    client.force_login(outsider)
    for name in ("queues", "members", "import", "export"):
        url = f"/datasets/{dataset.slug}/sections/{name}/"
        assert client.get(url, headers=HX).status_code == 404
    assert client.post(f"/datasets/{dataset.slug}/sections/members/").status_code == 405


def test_a_page_shown_again_with_errors_holds_every_section(client, dataset, annotator):
    """The import form sent without a file: the page again (400), the form with its error,
    and no section left to fetch."""
    client.force_login(annotator)
    response = client.post(f"/datasets/{dataset.slug}/import/", {"on_conflict": "update"})
    html = response.content.decode()
    assert response.status_code == 400
    assert placeholders(html) == {}
    assert 'data-testid="import-form"' in html and 'class="errorlist' in html
    assert 'data-testid="members"' in html and 'data-testid="export-form"' in html
    assert 'id="queues"' in html


def test_the_page_reads_nothing_of_the_sections(client, dataset, curator):
    """The members' changes, the invitations, the import and export tasks are the sections'
    queries, not the page's."""
    client.force_login(curator)
    MembershipChange.objects.create(
        dataset=dataset, actor=curator, username="x", action="added", new_role=Role.VIEWER
    )
    client.get(f"/datasets/{dataset.slug}/")  # sessions and such read once
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/datasets/{dataset.slug}/").status_code == 200
    sql = " ".join(query["sql"] for query in queries.captured_queries)
    for model in (MembershipChange, Invitation, ImportTask, ExportTask):
        assert model._meta.db_table not in sql, model
