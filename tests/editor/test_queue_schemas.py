"""A queue chooses which label schemas it asks: the model, the questions the queue page and
the figures use, submitting (only the queue's required questions), the dataset page's form.
The API's side: tests/api/test_queue_schemas.py."""

from __future__ import annotations

import pytest

from editor import queues
from editor.errors import InvalidContent, MissingAnswers, NotAllowed
from editor.labels import create_label_schema, new_schema_version, set_archived
from editor.labels.annotations import answer
from editor.models import Dataset, LabelSchema, ReviewQueue
from editor.storage.create import create_transcript
from tests.editor.dataset_page import whole_page
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


def choice(key: str, prompt: str, *, required: bool = False) -> dict:
    return {
        "key": key,
        "kind": "choice",
        "prompt": prompt,
        "required": required,
        "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}],
    }


@pytest.fixture
def schemas(dataset, curator):
    return {
        name: create_label_schema(
            dataset, author=curator, name=name, questions=[choice(key, prompt, required=True)]
        )
        for name, key, prompt in (
            ("Tone", "kind", "Is the assistant kind?"),
            ("Facts", "true", "Is every fact true?"),
        )
    }


@pytest.fixture
def transcripts(dataset, curator):
    return [
        create_transcript(
            dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"T{n}"
        )
        for n in range(2)
    ]


def asked(queue) -> list[str]:
    return [question.key for _, question in queues.queue_questions(queue)]


def test_a_queue_asks_its_schemas_or_every_active_one(dataset, curator, schemas, transcripts):
    everything = queues.create_queue(dataset, transcripts, name="All", author=curator)
    tone_only = queues.create_queue(
        dataset, transcripts, name="Tone", author=curator, schemas=[schemas["Tone"]]
    )
    assert sorted(asked(everything)) == ["kind", "true"]
    assert asked(tone_only) == ["kind"]

    # a new version of a chosen schema: the queue asks that version
    new_schema_version(
        schemas["Tone"], author=curator, questions=[choice("polite", "Is it polite?")]
    )
    assert asked(tone_only) == ["polite"]
    # archived: it takes no answers, so the queue asks none of its questions
    set_archived(schemas["Tone"], author=curator, archived=True)
    assert asked(tone_only) == [] and asked(everything) == ["true"]


def test_only_schemas_of_the_queues_dataset(dataset, curator, schemas, transcripts):
    other = Dataset.objects.create(name="Other", slug="other")
    stranger = LabelSchema.objects.create(dataset=other, name="Stranger")
    with pytest.raises(InvalidContent, match="Not a schema of the dataset: Stranger"):
        queues.create_queue(dataset, transcripts, name="X", author=curator, schemas=[stranger])
    with pytest.raises(InvalidContent, match="No such label schema in the dataset"):
        queues.schemas_by_id(dataset, [schemas["Tone"].pk, stranger.pk])
    with pytest.raises(InvalidContent, match=str(2**70)):  # not a database integer: no 500
        queues.schemas_by_id(dataset, [2**70, -1])
    queue = queues.create_queue(dataset, transcripts, name="X", author=curator)
    annotator = queue.dataset.memberships.get(role="annotator").user
    with pytest.raises(NotAllowed):
        queues.set_schemas(queue, [schemas["Tone"]], author=annotator)
    queues.set_schemas(queue, [schemas["Facts"]], author=curator)
    assert asked(queue) == ["true"]


def test_submitting_needs_only_the_queues_required_answers(
    dataset, curator, annotator, schemas, transcripts
):
    queue = queues.create_queue(
        dataset, transcripts, name="Tone", author=curator, schemas=[schemas["Tone"]]
    )
    assignment = queues.claim_next(queue, annotator)
    with pytest.raises(MissingAnswers, match="kind"):
        queues.submit(assignment, annotator)
    answer(
        assignment.item.transcript,
        annotator=annotator,
        schema=schemas["Tone"],
        question="kind",
        value="yes",
    )
    # "Facts" is required too, but this queue does not ask it
    assert queues.submit(assignment, annotator).state == "submitted"
    figures = queues.label_figures(queue)
    assert [f["question"].key for f in figures] == ["kind"]


def test_the_queue_page_shows_only_the_queues_questions(
    client, dataset, curator, annotator, schemas, transcripts
):
    queue = queues.create_queue(
        dataset, transcripts, name="Facts", author=curator, schemas=[schemas["Facts"]]
    )
    client.force_login(annotator)
    page = client.post(f"/queues/{queue.pk}/claim/", headers=HX).content.decode()
    assert 'data-question="true"' in page
    assert 'data-question="kind"' not in page


def test_curators_choose_the_schemas_on_the_dataset_page(
    client, dataset, curator, annotator, schemas, transcripts
):
    client.force_login(curator)
    page = whole_page(client, "/datasets/support-chats/")
    assert f'name="schemas" value="{schemas["Tone"].pk}"' in page
    response = client.post(
        "/datasets/support-chats/queues/",
        {"name": "Toned", "schemas": [schemas["Tone"].pk], "overlap": 1},
    )
    assert response.status_code == 302
    queue = ReviewQueue.objects.get(name="Toned")
    assert list(queue.schemas.all()) == [schemas["Tone"]]
    page = whole_page(client, "/datasets/support-chats/")
    assert f'<span class="badge" data-schema="{schemas["Tone"].pk}">Tone v1</span>' in page

    client.post(f"/queues/{queue.pk}/schemas/", {"schemas": [schemas["Facts"].pk]})
    assert list(queue.schemas.all()) == [schemas["Facts"]]
    client.post(f"/queues/{queue.pk}/schemas/", {})
    assert not queue.schemas.exists()  # back to every schema
    bad = client.post(f"/queues/{queue.pk}/schemas/", {"schemas": ["999999"]}, follow=True)
    assert "No such label schema in the dataset: 999999" in bad.content.decode()
    refused = client.post(
        "/datasets/support-chats/queues/", {"name": "Bad", "schemas": ["x"]}, follow=True
    )
    assert "must be numbers" in refused.content.decode()

    client.force_login(annotator)
    assert client.post(f"/queues/{queue.pk}/schemas/", {}).status_code == 403


def test_questions_about_messages_are_the_queues_too(
    client, dataset, curator, annotator, schemas, transcripts
):
    def about_messages(name, key):
        question = {**choice(key, f"{name} of this answer?"), "applies_to": "message"}
        question["roles"] = ["assistant"]
        return create_label_schema(dataset, author=curator, name=name, questions=[question])

    chosen = about_messages("Helpful", "helpful")
    about_messages("Terse", "terse")
    queue = queues.create_queue(dataset, transcripts, name="Help", author=curator, schemas=[chosen])
    client.force_login(annotator)
    page = client.post(f"/queues/{queue.pk}/claim/", headers=HX).content.decode()
    assert 'data-question="helpful"' in page and 'data-question="terse"' not in page
    # The transcript page, outside any queue, asks every active schema.
    transcript_page = client.get(f"/transcripts/{transcripts[0].pk}/").content.decode()
    assert (
        'data-question="helpful"' in transcript_page and 'data-question="terse"' in transcript_page
    )
    # A message card redrawn from the queue page (after a tag) keeps to the queue's questions.
    card = client.get(
        f"/transcripts/{transcripts[0].pk}/messages/1/",
        {"audience": "annotator"},
        headers={**HX, "HX-Current-URL": f"http://testserver/queues/{queue.pk}/"},
    ).content.decode()
    assert 'data-question="helpful"' in card and 'data-question="terse"' not in card
