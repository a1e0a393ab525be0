"""The dashboard's counts, the dataset page's paginated, sorted and filtered table (htmx), and
datasets and members managed in the UI."""

import re

import pytest
from django.contrib.auth import get_user_model

from editor.models import (
    Dataset,
    Invitation,
    Membership,
    MembershipChange,
    Role,
    Status,
    Transcript,
)
from editor.storage.content import TranscriptContent
from editor.storage.create import NewTranscript, create_transcripts
from tests.editor.dataset_page import whole_page
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def add_transcripts(dataset, author, n: int, **fields) -> None:
    content = TranscriptContent.from_text(conversation())
    create_transcripts(
        dataset,
        [NewTranscript(content, title=f"t{i:04}", **fields) for i in range(n)],
        author=author,
    )


def row_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'data-transcript="(\d+)"', html)]


def stat(html: str, slug: str, name: str) -> str:
    card = html.split(f'data-dataset="{slug}"', 1)[1]
    return re.search(rf'data-stat="{name}"[^>]*>(?:<a [^>]*>)?([^<]*)', card).group(1)


# --- dashboard ------------------------------------------------------------------------------


def test_dashboard_counts_per_status_errors_and_activity(client, curator, dataset, varied):
    Transcript.objects.filter(title="json").update(status=Status.IN_REVIEW)
    varied["analysis"].deleted_at = varied["analysis"].updated_at  # deleted: not counted
    varied["analysis"].save(update_fields=["deleted_at"])
    client.force_login(curator)
    html = client.get("/").content.decode()
    assert stat(html, dataset.slug, "transcripts") == "5"
    assert stat(html, dataset.slug, "draft") == "3"
    assert stat(html, dataset.slug, "in_review") == "1"
    assert stat(html, dataset.slug, "approved") == "1"
    assert stat(html, dataset.slug, "rejected") == "0"
    assert stat(html, dataset.slug, "errors") == "1"
    assert stat(html, dataset.slug, "warnings") == "1"
    newest = Transcript.all_objects.order_by("-updated_at").first().updated_at
    assert stat(html, dataset.slug, "last-activity") == newest.strftime("%Y-%m-%d %H:%M")
    assert f'href="/datasets/{dataset.slug}/?status=approved"' in html
    assert f'href="/datasets/{dataset.slug}/?has_errors=true"' in html


def test_dashboard_queries_do_not_grow_with_transcripts(
    client, curator, dataset, django_assert_max_num_queries
):
    other = Dataset.objects.create(name="Other", slug="other")
    Membership.objects.create(dataset=other, user=curator, role=Role.VIEWER)
    add_transcripts(dataset, curator, 600)
    add_transcripts(other, curator, 400)
    client.force_login(curator)
    # session, user, the datasets with every count (one aggregate query); "my work": the
    # queues, returned items, reviews waiting, last edits (editor.queues.my_work); the
    # invitations waiting for an answer
    with django_assert_max_num_queries(8):
        html = client.get("/").content.decode()
    assert stat(html, dataset.slug, "transcripts") == "600"
    assert stat(html, "other", "transcripts") == "400"
    assert "t0001" not in html  # no transcript row is loaded


def test_anyone_logged_in_creates_a_dataset_and_becomes_its_curator(client, outsider):
    client.force_login(outsider)
    response = client.post(
        "/datasets/", {"name": "Evals", "slug": "evals", "description": "", "default_spec": "mms"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/datasets/evals/"
    dataset = Dataset.objects.get(slug="evals")
    assert (dataset.default_spec, dataset.role_of(outsider)) == ("mms", Role.CURATOR)
    assert MembershipChange.objects.filter(dataset=dataset, actor=outsider).count() == 1


def test_a_bad_or_taken_slug_shows_the_form_again(client, outsider, dataset):
    client.force_login(outsider)
    for slug in ("has space", dataset.slug):
        response = client.post("/datasets/", {"name": "X", "slug": slug, "default_spec": "mms"})
        assert response.status_code == 400
        assert "errorlist" in response.content.decode()
    assert Dataset.objects.count() == 1


def test_creating_a_dataset_needs_a_login(client, db):
    response = client.post("/datasets/", {"name": "X", "slug": "x", "default_spec": "mms"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Dataset.objects.exists()


# --- the dataset page: pages, sorting, filters ---------------------------------------------


def test_pages_of_fifty_without_overlap(client, viewer, annotator, dataset):
    add_transcripts(dataset, annotator, 120)
    client.force_login(viewer)
    pages = [
        client.get(f"/datasets/{dataset.slug}/", {"sort": "title", "page": n}) for n in (1, 2, 3)
    ]
    ids = [row_ids(page.content.decode()) for page in pages]
    assert [len(page) for page in ids] == [50, 50, 20]
    assert [pk for page in ids for pk in page] == list(
        Transcript.objects.order_by("title", "pk").values_list("pk", flat=True)
    )
    html = pages[1].content.decode()
    assert "page 2 of 3" in html
    # links keep the filters and the sort
    assert f'href="/datasets/{dataset.slug}/?sort=title&amp;page=3"' in html


def test_sort_links_flip_the_direction(client, viewer, dataset, varied):
    client.force_login(viewer)
    html = client.get(f"/datasets/{dataset.slug}/", {"sort": "-messages"}).content.decode()
    titles = re.findall(
        r'data-transcript="\d+".*?<a href="/transcripts/\d+/"[^>]*>([^<]*)</a>', html, re.S
    )
    assert titles[0] == "json"
    # the messages header now sorts the other way
    assert f'href="/datasets/{dataset.slug}/?sort=messages"' in html
    assert f'href="/datasets/{dataset.slug}/?sort=title"' in html


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        ("status=approved", {"system prompt"}),
        (
            "status=approved&status=draft",
            {"plain", "tool call", "analysis", "system prompt", "truncated", "json"},
        ),
        ("spec=openai-messages", {"json"}),
        ("has_errors=true", {"truncated"}),
        ("code=W-HEADER-MISSING", {"tool call"}),
        ("has=tool_calls", {"tool call"}),
        ("has=analysis", {"analysis"}),
        ("has=system_prompt", {"system prompt"}),
        ("updated_by=curator", {"system prompt"}),
        (
            "updated_since=2021-01-01&has_errors=false",
            {"tool call", "analysis", "system prompt", "json"},
        ),
    ],
)
def test_each_filter_in_the_query_string(client, annotator, dataset, varied, query, titles):
    client.force_login(annotator)
    html = client.get(f"/datasets/{dataset.slug}/?{query}").content.decode()
    assert set(row_ids(html)) == {varied[title].pk for title in titles}


@pytest.mark.parametrize("query", ["code=W-HEADER-MISSING", "has=analysis", "has=tool_calls"])
def test_a_viewer_cannot_filter_by_what_they_are_not_shown(client, viewer, dataset, varied, query):
    """Which transcripts hold hidden parts or which codes point into them would be told by the
    rows a filter leaves: for a viewer the filter is left out, and the page says so."""
    client.force_login(viewer)
    html = client.get(f"/datasets/{dataset.slug}/?{query}").content.decode()
    assert set(row_ids(html)) == {t.pk for t in varied.values()}
    assert 'data-code="filter-not-allowed"' in html
    assert 'name="has"' not in html and 'name="code"' not in html
    assert 'data-testid="code-facet"' not in html
    assert 'class="code-badge' not in html  # the rows' codes: what the diagnostics point at


def test_an_invalid_filter_is_shown_and_ignored(client, viewer, dataset, varied):
    client.force_login(viewer)
    response = client.get(
        f"/datasets/{dataset.slug}/", {"updated_since": "soon", "spec": "openai-messages"}
    )
    assert response.status_code == 200
    assert "Enter a valid date" in response.content.decode()
    assert row_ids(response.content.decode()) == [varied["json"].pk]


def test_rows_carry_their_hooks(client, viewer, dataset, varied):
    client.force_login(viewer)
    html = client.get(f"/datasets/{dataset.slug}/", {"has": "system_prompt"}).content.decode()
    row = varied["system prompt"]
    assert f'<tr data-transcript="{row.pk}" data-spec="{row.spec}" data-status="approved">' in html


def test_htmx_gets_only_the_table_and_the_filters(client, viewer, dataset, varied):
    client.force_login(viewer)
    query = {"sort": "title", "code": "", "spec": ""}  # a form sends its empty fields too
    response = client.get(f"/datasets/{dataset.slug}/", query, headers=HX)
    html = response.content.decode()
    assert "<html" not in html
    assert html.lstrip().startswith('<div id="transcript-table"')
    assert '<div id="filter-fields" class="filter-fields" hx-swap-oob="true">' in html
    assert '<option value="title" selected>' in html
    assert len(row_ids(html)) == 6
    assert "HX-Request" in response["Vary"]
    assert response["HX-Push-Url"] == f"/datasets/{dataset.slug}/?sort=title"
    restore = client.get(
        f"/datasets/{dataset.slug}/", headers={**HX, "HX-History-Restore-Request": "true"}
    )
    assert "<html" in restore.content.decode()


def test_the_page_queries_do_not_grow_with_transcripts(
    client, curator, dataset, django_assert_max_num_queries
):
    add_transcripts(dataset, curator, 1000)
    client.force_login(curator)
    # session, user, dataset with role, label questions, members, their recent changes, the
    # dataset's edits, count, page (with authors and codes), the codes' facet (and its cache's
    # check), imports, your exports, queues, the schemas a new queue may ask, the invitations
    # not yet answered (the disabled webhooks' banner: checked in the dataset's query)
    with django_assert_max_num_queries(16):
        response = client.get(f"/datasets/{dataset.slug}/", {"page": 3, "sort": "-updated"})
    assert len(row_ids(response.content.decode())) == 50
    with django_assert_max_num_queries(16):
        response = client.get(f"/datasets/{dataset.slug}/", {"page": 20, "has_errors": "false"})
    assert len(row_ids(response.content.decode())) == 50


def test_an_outsider_gets_404(client, outsider, dataset):
    client.force_login(outsider)
    assert client.get(f"/datasets/{dataset.slug}/").status_code == 404


# --- editing the dataset and its members in the UI -----------------------------------------


def test_a_curator_edits_the_dataset_others_get_403(client, curator, annotator, dataset):
    client.force_login(annotator)
    form = {"name": "Renamed", "description": "d", "default_spec": "harmony"}
    assert client.post(f"/datasets/{dataset.slug}/edit/", form).status_code == 403
    client.force_login(curator)
    assert (
        'data-testid="edit-dataset-form"'
        in client.get(f"/datasets/{dataset.slug}/").content.decode()
    )
    assert client.post(f"/datasets/{dataset.slug}/edit/", form).status_code == 302
    dataset.refresh_from_db()
    assert (dataset.name, dataset.description, dataset.default_spec) == ("Renamed", "d", "harmony")
    edits = client.get(f"/datasets/{dataset.slug}/").content.decode()
    edits = edits[edits.index('data-testid="dataset-edits"') :]
    assert (
        "curator changed the name (“Support chats” → “Renamed”), the description, the default "
        "spec (openchatml-2.2 → harmony)"
    ) in edits


def test_a_curator_adds_changes_and_removes_members_through_htmx(
    client, curator, outsider, dataset
):
    client.force_login(curator)
    base = f"/datasets/{dataset.slug}/members/"
    response = client.post(base, {"username": "outsider", "role": "reviewer"}, headers=HX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section class="card" id="members"')
    assert '<li data-invitation="outsider" data-role="reviewer">' in html
    assert 'data-member="outsider"' not in html  # invited, not a member until they accept
    # The invited user accepts on their dashboard.
    client.force_login(outsider)
    dashboard = client.get("/").content.decode()
    invitation = Invitation.objects.get(username="outsider")
    assert f'data-invitation="{invitation.pk}"' in dashboard
    response = client.post(f"/invitations/{invitation.pk}/accept/")
    assert response["Location"] == f"/datasets/{dataset.slug}/"
    assert dataset.role_of(outsider) == Role.REVIEWER
    client.force_login(curator)
    client.post(f"{base}outsider/", {"role": "annotator"}, headers=HX)
    assert dataset.role_of(outsider) == Role.ANNOTATOR
    html = client.post(f"{base}outsider/remove/", headers=HX).content.decode()
    assert dataset.role_of(outsider) is None
    actions = MembershipChange.objects.filter(dataset=dataset).values_list("action", flat=True)
    assert sorted(actions) == ["added", "removed", "role_changed"]
    # The section says who did what, newest first.
    log = html[html.index('data-testid="member-log"') :]
    assert log.index('data-action="removed"') < log.index('data-action="role_changed"')
    assert (
        "<strong>curator</strong> changed the role of <strong>outsider</strong>: reviewer → annotator"
        in log
    )
    assert "<strong>curator</strong> removed <strong>outsider</strong> (annotator)" in log


def test_refusals_are_shown_in_the_members_section(client, curator, dataset):
    client.force_login(curator)
    base = f"/datasets/{dataset.slug}/members/"
    response = client.post(f"{base}curator/", {"role": "viewer"}, headers=HX)
    assert response.status_code == 409
    assert 'data-code="last-curator"' in response.content.decode()
    response = client.post(base, {"username": "viewer", "role": "viewer"}, headers=HX)
    assert response.status_code == 409
    assert 'data-code="already-member"' in response.content.decode()
    assert 'value="viewer"' in response.content.decode()  # what was typed is kept
    # Nobody of that name: the same answer as for a real user (no username is learnt).
    made_up = client.post(base, {"username": "nobody", "role": "viewer"}, headers=HX)
    real = client.post(base, {"username": "outsider", "role": "viewer"}, headers=HX)
    assert made_up.status_code == real.status_code == 200
    assert 'data-testid="member-notice"' in made_up.content.decode()


def test_a_curator_who_steps_down_loses_the_controls_at_once(client, curator, annotator, dataset):
    Membership.objects.filter(user=annotator).update(role=Role.CURATOR)
    client.force_login(curator)
    base = f"/datasets/{dataset.slug}/members/"
    html = client.post(f"{base}curator/", {"role": "viewer"}, headers=HX).content.decode()
    assert '<tr data-member="curator" data-role="viewer">' in html
    assert 'data-testid="add-member-form"' not in html
    client.force_login(annotator)
    response = client.post(f"{base}annotator/remove/", headers=HX)
    assert response.status_code == 409  # the last curator now
    client.post(f"{base}curator/", {"role": "curator"}, headers=HX)
    response = client.post(f"{base}annotator/remove/", headers=HX)
    assert response["HX-Redirect"] == "/"  # left the dataset: back to the dashboard
    assert dataset.role_of(annotator) is None


def test_without_htmx_a_change_goes_back_to_the_dataset_page(client, curator, outsider, dataset):
    client.force_login(curator)
    response = client.post(f"/datasets/{dataset.slug}/members/", {"username": "outsider"})
    assert response.status_code == 302
    assert response["Location"] == f"/datasets/{dataset.slug}/#members"
    assert Invitation.objects.filter(dataset=dataset, username="outsider").exists()


@pytest.mark.parametrize("who", ["annotator", "viewer"])
def test_non_curators_get_403_and_no_controls(client, dataset, who):
    client.force_login(get_user_model().objects.get(username=who))
    base = f"/datasets/{dataset.slug}/members/"
    assert client.post(base, {"username": "outsider"}, headers=HX).status_code == 403
    assert client.post(f"{base}viewer/", {"role": "curator"}, headers=HX).status_code == 403
    assert client.post(f"{base}curator/remove/", headers=HX).status_code == 403
    html = whole_page(client, f"/datasets/{dataset.slug}/")
    assert 'data-member="curator"' in html
    assert 'data-testid="add-member-form"' not in html
    assert not MembershipChange.objects.exists()


def test_outsiders_get_404_on_member_changes(client, outsider, dataset):
    client.force_login(outsider)
    assert (
        client.post(f"/datasets/{dataset.slug}/members/", {"username": "outsider"}).status_code
        == 404
    )
    assert client.post(f"/datasets/{dataset.slug}/members/viewer/remove/").status_code == 404


def test_the_members_url_opened_shows_the_members_section(client, curator, outsider, dataset):
    client.force_login(curator)
    response = client.get(f"/datasets/{dataset.slug}/members/", follow=True)
    assert response.redirect_chain == [(f"/datasets/{dataset.slug}/#members", 302)]
    assert 'id="members"' in response.content.decode()
    client.force_login(outsider)
    response = client.get(f"/datasets/{dataset.slug}/members/", follow=True)
    assert response.status_code == 404  # the dataset page decides, as for any other slug
