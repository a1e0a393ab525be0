"""The home page: a dashboard of the datasets a user belongs to and their transcripts."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from editor.formats import SPEC_IDS
from editor.models import Dataset, Membership, Transcript


@pytest.fixture
def demo(db):
    call_command("load_demo", verbosity=0)
    return Dataset.objects.get(slug="demo")


def test_anonymous_user_is_redirected_to_login(client, db):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


def test_login_page_and_static_files_need_no_login(client, db):
    assert client.get("/accounts/login/").status_code == 200


def test_demo_has_one_transcript_per_spec_id_and_loads_twice_without_duplicates(demo):
    call_command("load_demo", verbosity=0)
    specs = sorted(Transcript.objects.filter(dataset=demo).values_list("spec", flat=True))
    assert specs == sorted(SPEC_IDS)


def test_demo_samples_parse_without_errors(demo):
    for transcript in Transcript.objects.filter(dataset=demo):
        assert transcript.error_count == 0, (transcript.spec, transcript.diagnostics)


def test_superuser_sees_every_dataset_with_its_counts(client, demo, django_assert_max_num_queries):
    admin = get_user_model().objects.create_superuser("root", password="a-long-test-password")
    client.force_login(admin)
    # 4 for the page and the datasets, 4 for "my work" (editor.queues.my_work)
    with django_assert_max_num_queries(8):
        response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-dataset="demo"' in html
    assert f'<dd data-stat="transcripts">{len(SPEC_IDS)}</dd>' in html
    assert 'href="/datasets/demo/"' in html


def test_member_sees_only_their_datasets(client, demo):
    other = Dataset.objects.create(name="Private", slug="private")
    user = get_user_model().objects.create_user("ann", password="a-long-test-password")
    Membership.objects.create(user=user, dataset=demo, role="annotator")
    client.force_login(user)
    html = client.get("/").content.decode()
    assert 'data-dataset="demo"' in html
    assert f'data-dataset="{other.slug}"' not in html


def test_user_without_datasets_gets_a_helpful_empty_state(client, db):
    user = get_user_model().objects.create_user("lonely", password="a-long-test-password")
    client.force_login(user)
    assert "not a member of any dataset" in client.get("/").content.decode()


def test_local_login_command_prints_a_password_once(db, capsys):
    call_command("ensure_local_login", username="local")
    first = capsys.readouterr().out
    assert "Local login: local / " in first
    password = first.split("Local login: local / ")[1].split()[0]
    assert get_user_model().objects.get(username="local").check_password(password)
    call_command("ensure_local_login", username="local")
    again = capsys.readouterr().out
    assert password not in again
    assert get_user_model().objects.filter(username="local").count() == 1


def test_member_sees_their_role_on_dashboard_and_dataset_page(client, demo):
    user = get_user_model().objects.create_user("rev", password="a-long-test-password")
    Membership.objects.create(user=user, dataset=demo, role="reviewer")
    client.force_login(user)
    for url in ("/", "/datasets/demo/"):
        assert '<strong data-testid="role">reviewer</strong>' in client.get(url).content.decode()
