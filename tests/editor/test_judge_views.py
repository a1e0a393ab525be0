"""The Judges page (curators): attach a judge, start a run over the list's filters, the runs
with progress and tokens, cancel and resume; others are refused."""

from __future__ import annotations

import pytest

from editor.models import Judge, JudgeRun, Suggestion
from tests.support.judging import make_connection, make_schema, make_transcripts

pytestmark = pytest.mark.django_db(transaction=True)


def test_attach_run_and_resume_from_the_page(client, dataset, curator, annotator, openai_server):
    schema = make_schema(dataset, curator)
    connection = make_connection(dataset, openai_server, curator)
    chats = make_transcripts(dataset, annotator, 3)
    client.force_login(curator)
    page = client.get(f"/datasets/{dataset.slug}/judges/?q=number+1")
    assert page.status_code == 200
    html = page.content.decode()
    assert "{transcript}" in html and f'value="{schema.pk}:helpful"' in html
    assert f'value="{schema.pk}:harm"' not in html  # a span question is not offered
    attached = client.post(
        f"/datasets/{dataset.slug}/judges/attach/",
        {"question": f"{schema.pk}:helpful", "connection": connection.pk, "prompt_template": ""},
    )
    assert attached.status_code == 302
    judge = Judge.objects.get()
    openai_server.respond_with(lambda body: {"value": "no", "rationale": ""})
    started = client.post(
        f"/datasets/{dataset.slug}/judges/{judge.pk}/run/", {"filters": "q=number+1"}
    )
    assert started.status_code == 302
    run = JudgeRun.objects.get()
    assert run.transcript_ids == [chats[1].pk]
    assert Suggestion.objects.get().value == "no"
    page = client.get(f"/datasets/{dataset.slug}/judges/").content.decode()
    assert f'data-judge-run="{run.pk}"' in page and 'data-status="succeeded"' in page
    row = client.get(f"/judge-runs/{run.pk}/")
    assert row.status_code == 200 and b"1 / 1" in row.content
    refused = client.post(
        f"/datasets/{dataset.slug}/judges/attach/",
        {"question": f"{schema.pk}:harm", "connection": connection.pk},
    )
    assert refused.status_code == 422 and b"span" in refused.content
    # A resumed run with nothing left says so and changes nothing.
    assert client.post(f"/judge-runs/{run.pk}/resume/").status_code == 302
    assert JudgeRun.objects.get().status == "succeeded"


def test_only_curators(client, dataset, annotator):
    client.force_login(annotator)
    assert client.get(f"/datasets/{dataset.slug}/judges/").status_code == 403


def test_the_queue_item_shows_the_suggestion_and_its_key(client, dataset, curator, annotator):
    from editor import queues
    from editor.models import Annotation

    schema = make_schema(dataset, curator)
    chat = make_transcripts(dataset, annotator, 1)[0]
    queue = queues.create_queue(dataset, [chat], name="Q", author=curator)
    suggestion = Suggestion.objects.create(
        transcript=chat,
        schema_version=schema.current_version,
        question="helpful",
        value="no",
        model="judge-model",
    )
    client.force_login(annotator)
    item = client.post(f"/queues/{queue.pk}/claim/", headers={"HX-Request": "true"})
    html = item.content.decode()
    assert f'data-suggestion="{suggestion.pk}" data-source="model"' in html
    assert "Suggested by judge-model" in html and "<kbd>y</kbd>" in html
    assert not Annotation.objects.exists()
    accepted = client.post(
        f"/suggestions/{suggestion.pk}/accept/", headers={"HX-Request": "true"}
    ).content.decode()
    assert "accepted: your answer" in accepted and 'value="no" data-key="2" checked' in accepted
    assert Annotation.objects.get().annotator == annotator
