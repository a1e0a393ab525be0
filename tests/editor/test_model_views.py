"""The dataset's Models page (editor/views/models.py): curators add, edit, delete and test
connections; a refused form never shows back what was typed as the key's variable."""

from __future__ import annotations

import pytest

from editor.models import ModelConnection, ModelRequest
from tests.support.openai_server import Reply

pytestmark = pytest.mark.django_db

SENTINEL = "sk-SENTINEL-typed-in-the-wrong-field-9d"
PAGE = "/datasets/support-chats/models/"


@pytest.fixture
def as_curator(client, curator, dataset):
    client.force_login(curator)
    return client


def form(openai_server, **changes):
    return {
        "name": "local",
        "base_url": openai_server.base_url,
        "model": "test-model",
        "api_key_env": "",
        "options": '{"temperature": 0.5}',
        "timeout_seconds": "30",
        "max_concurrency": "2",
        "requests_per_minute": "",
        **changes,
    }


def test_add_edit_delete(as_curator, openai_server):
    response = as_curator.post(PAGE + "add/", form(openai_server))
    assert response.status_code == 302
    connection = ModelConnection.objects.get()
    assert connection.options == {"temperature": 0.5} and connection.timeout_seconds == 30
    assert connection.requests_per_minute is None
    page = as_curator.get(PAGE, {"edit": connection.pk}).content.decode()
    assert 'value="local"' in page and "Save" in page
    response = as_curator.post(
        f"{PAGE}{connection.pk}/", form(openai_server, model="other", requests_per_minute="30")
    )
    assert response.status_code == 302
    connection.refresh_from_db()
    assert (connection.model, connection.requests_per_minute) == ("other", 30)
    assert as_curator.post(f"{PAGE}{connection.pk}/delete/").status_code == 302
    assert not ModelConnection.objects.exists()


def test_a_key_typed_as_the_variable_is_refused_and_not_shown(as_curator, openai_server):
    response = as_curator.post(PAGE + "add/", form(openai_server, api_key_env=SENTINEL))
    assert response.status_code == 422
    page = response.content.decode()
    assert 'data-code="invalid-model-connection"' in page and "never the key" in page
    assert SENTINEL not in page
    assert not ModelConnection.objects.exists()


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"options": "{not json"}, "not JSON"),
        ({"base_url": "ftp://x/v1"}, "http://"),
        ({"timeout_seconds": "soon"}, "must be a number"),
    ],
)
def test_bad_fields_are_said(as_curator, openai_server, changes, said):
    response = as_curator.post(PAGE + "add/", form(openai_server, **changes))
    assert response.status_code == 422
    assert said in response.content.decode()


def test_the_test_button_shows_the_answer_or_the_error(as_curator, openai_server, dataset):
    connection = ModelConnection.objects.create(
        dataset=dataset, name="local", base_url=openai_server.base_url, model="test-model"
    )
    openai_server.reply("Present.", Reply(status=401, error_message="Invalid API key"))
    url = f"{PAGE}{connection.pk}/test/"
    ok = as_curator.post(url, headers={"HX-Request": "true"}).content.decode()
    assert 'data-ok="true"' in ok and "Present." in ok and "<html" not in ok
    failed = as_curator.post(url).content.decode()
    assert 'data-ok="false"' in failed and "401: Invalid API key" in failed
    assert ModelRequest.objects.filter(purpose="test").count() == 2


def test_annotators_do_not_manage_connections(client, annotator, dataset):
    client.force_login(annotator)
    assert client.get(PAGE).status_code == 403


def test_regenerate_is_offered_on_assistant_messages_also_when_one_is_swapped_in(
    client, annotator, viewer, dataset, openai_server
):
    from editor.storage.create import create_transcript
    from tests.editor.samples import conversation

    transcript = create_transcript(
        dataset, author=annotator, text=conversation(), spec="openchatml-2.2"
    )
    page_url = f"/transcripts/{transcript.pk}/?audience=annotator"
    client.force_login(annotator)
    assert 'data-action="regenerate"' not in client.get(page_url).content.decode()
    ModelConnection.objects.create(
        dataset=dataset, name="local", base_url=openai_server.base_url, model="test-model"
    )
    page = client.get(page_url).content.decode()
    assert page.count('data-action="regenerate"') == 2  # the two answers, not the questions
    assert 'id="regenerate-config"' in page and "js/regenerate.js" in page
    card = client.get(
        f"/transcripts/{transcript.pk}/messages/1/?audience=annotator",
        headers={"HX-Request": "true"},
    ).content.decode()
    assert card.count('data-action="regenerate"') == 1
    client.force_login(viewer)
    assert (
        'data-action="regenerate"'
        not in client.get(f"/transcripts/{transcript.pk}/").content.decode()
    )


def test_the_dataset_total_of_tokens_by_purpose(as_curator, dataset, openai_server):
    assert 'data-testid="model-usage"' not in as_curator.get(PAGE).content.decode()
    local, other = (
        ModelConnection.objects.create(
            dataset=dataset, name=name, base_url=openai_server.base_url, model="m"
        )
        for name in ("local", "other")
    )
    for connection, purpose, tokens, ok in (
        (local, "regenerate", (100, 20), True),
        (other, "regenerate", (50, 5), True),
        (local, "judge", (300, 30), True),
        (local, "judge", (0, 0), False),
        (other, "test", (7, 3), True),
    ):
        ModelRequest.objects.create(
            connection=connection,
            dataset=dataset,
            purpose=purpose,
            tokens_in=tokens[0],
            tokens_out=tokens[1],
            ok=ok,
        )
    page = as_curator.get(PAGE).content.decode()
    usage = page[page.index('data-testid="model-usage"') :]
    rows = usage.split("<tr data-purpose=")[1:]
    assert [row.split(">")[0] for row in rows] == ['"test"', '"regenerate"', '"judge"', '"total"']
    assert "<td>150</td><td>25</td>" in rows[1]  # both connections' regenerations
    assert "(1 failed)" in rows[2] and "<td>300</td><td>30</td>" in rows[2]
    assert '<td data-testid="dataset-tokens-in">457</td>' in rows[3]
    assert '<td data-testid="dataset-tokens-out">58</td>' in rows[3]
