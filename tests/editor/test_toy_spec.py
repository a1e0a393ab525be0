"""A spec the package does not ship, registered from outside (``formats.register``): a toy
codec defined here, one message a line (``role: text``), with its ``SpecInfo``.

The transcript page, the message editor, labels and exports handle it with no change to
any file but its codec's (this one): the app asks the registry, it never names a spec.
"""

from __future__ import annotations

import json

import pytest

from editor import editing, formats, labels
from editor.exporting import export_dataset
from editor.labels import annotations
from editor.models import Transcript
from editor.storage.create import create_transcript

pytestmark = pytest.mark.django_db

TOY = "toy-lines"
SEPARATOR = ": "
TEXT = "system: Be brief.\nuser: Where is the Eiffel Tower?\nassistant: In Paris.\n"
HX = {"HX-Request": "true"}


def parse(text: str, sink) -> formats.Transcript:
    """One message a line, ``role: text``; a line without the separator is stray text."""
    transcript = formats.Transcript(spec=TOY)
    offset = 0
    for line in text.splitlines(keepends=True):
        role, separator, content = line.rstrip("\n").partition(SEPARATOR)
        if separator:
            transcript.messages.append(formats.Message(role=role, content=content))
        elif line.strip():
            sink.add("W-PARSE-STRAY-TEXT", offset)
        offset += len(line)
    return transcript


def serialize(transcript: formats.Transcript) -> str:
    return "".join(f"{m.role}{SEPARATOR}{m.content}\n" for m in transcript.messages)


def line_badges(message, item, context) -> list[formats.Badge]:
    """The toy's words: each message is a numbered line of the file."""
    return [formats.Badge("line", str(item.index + 1))]


TOY_CODEC = formats.Codec(
    TOY,
    parse,
    serialize,
    info=formats.SpecInfo(
        family="toy",
        text=True,
        fields=("role",),
        vocabulary=formats.Vocabulary(roles=("system", "user", "assistant")),
        part_badges=line_badges,
        field_labels={"role": "speaker"},
        end_labels={"end": "newline", "call": "call", "return": "return", "": "none (cut off)"},
    ),
)

QUESTIONS = [
    {
        "key": "helpful",
        "kind": "rating",
        "prompt": "How helpful is this answer?",
        "applies_to": "message",
        "roles": ["assistant"],
        "scale": 5,
    },
    {
        "key": "places",
        "kind": "span",
        "prompt": "Tag the places",
        "roles": ["assistant"],
        "tags": [{"value": "place", "label": "Place", "key": "p"}],
    },
]


@pytest.fixture(autouse=True)
def toy_spec():
    formats.register(TOY_CODEC)
    yield
    formats.unregister(TOY)


@pytest.fixture
def transcript(dataset, annotator):
    return create_transcript(dataset, author=annotator, text=TEXT, spec=TOY, title="Toy")


@pytest.fixture
def as_annotator(client, annotator):
    client.force_login(annotator)
    return client


@pytest.fixture
def schema(dataset, curator):
    return labels.create_label_schema(dataset, author=curator, name="Toy Q", questions=QUESTIONS)


def stored(transcript) -> Transcript:
    return Transcript.objects.get(pk=transcript.pk)


def export_lines(dataset, **options) -> list[dict]:
    return [json.loads(line) for line in export_dataset(dataset, **options)]


def test_the_registry_knows_the_toy_until_it_is_unregistered():
    assert formats.is_spec(TOY) and formats.spec_ids() == (*formats.SPEC_IDS, TOY)
    assert formats.spec_info(TOY).label("role") == "speaker"
    assert formats.parse(TEXT, TOY).transcript.messages[2].content == "In Paris."
    with pytest.raises(ValueError, match="already registered"):
        formats.register(TOY_CODEC)


def test_it_is_stored_validated_and_read_back_as_written(transcript):
    saved = stored(transcript)
    assert saved.spec == TOY and saved.source_text == TEXT and saved.source_is_exact
    assert [m.role for m in saved.stored_messages()] == ["system", "user", "assistant"]
    assert saved.diagnostics == []


def test_the_annotator_rendering_shows_every_message_in_the_toys_words(as_annotator, transcript):
    html = as_annotator.get(
        f"/transcripts/{transcript.pk}/", {"audience": "annotator"}
    ).content.decode()
    assert 'data-role="system" data-channel="" data-index="0" data-visible="false"' in html
    assert 'data-role="assistant" data-channel="" data-index="2" data-visible="true"' in html
    assert '<span class="badge field"><span class="label">line</span> 3</span>' in html
    assert f'<option value="{TOY}"' in html  # the export menu offers it too
    end_user = as_annotator.get(
        f"/transcripts/{transcript.pk}/", {"audience": "end_user"}
    ).content.decode()
    assert "Be brief." not in end_user and "In Paris." in end_user


def test_the_edit_form_names_the_fields_in_the_toys_words(as_annotator, transcript):
    form = as_annotator.get(
        f"/transcripts/{transcript.pk}/messages/2/edit/", headers=HX
    ).content.decode()
    assert '<label for="f-2-role">speaker</label>' in form
    assert '<option value="end" selected>newline</option>' in form
    new = as_annotator.get(
        f"/transcripts/{transcript.pk}/messages/new/", {"after": 1}, headers=HX
    ).content.decode()
    assert 'name="role" value="assistant"' in new
    assert 'name="channel" value=""' in new  # the toy has no channels: none is preset


def test_saving_the_edit_form_writes_only_that_line(as_annotator, transcript):
    response = as_annotator.post(
        f"/transcripts/{transcript.pk}/messages/2/save/",
        {"version": 1, "role": "assistant", "content": "In Paris, France."},
        headers=HX,
    )
    assert response.status_code == 200
    saved = stored(transcript)
    assert saved.version == 2
    assert saved.source_text == TEXT.replace("In Paris.", "In Paris, France.")


def test_editing_a_field_through_editing_rewrites_it_in_the_toy(transcript, annotator):
    result = editing.edit_message(
        transcript, 1, {"role": "visitor"}, expected_version=1, author=annotator
    )
    assert result.transcript.source_text.splitlines()[1] == "visitor: Where is the Eiffel Tower?"
    assert result.transcript.source_is_exact


def test_labels_are_asked_on_its_messages_and_follow_them_into_exports(
    as_annotator, dataset, transcript, annotator, schema
):
    annotations.create_annotation(
        transcript,
        annotator=annotator,
        schema=schema,
        question="helpful",
        value=4,
        message_index=2,
    )
    start = "In Paris.".index("Paris")
    annotations.create_annotation(
        transcript,
        annotator=annotator,
        schema=schema,
        question="places",
        value="place",
        message_index=2,
        start=start,
        end=start + len("Paris"),
    )
    html = as_annotator.get(
        f"/transcripts/{transcript.pk}/", {"audience": "annotator"}
    ).content.decode()
    assert 'data-spannable data-message-index="2"' in html

    (own,) = export_lines(dataset, spec=TOY, with_annotations=True)
    assert own["spec"] == TOY and own["text"] == TEXT
    placed = {row["question"]: row for row in own["annotations"]}
    assert placed["helpful"]["message_index"] == 2 and placed["helpful"]["value"] == 4
    assert (placed["places"]["start"], placed["places"]["text"]) == (start, "Paris")

    (converted,) = export_lines(dataset, spec="openai-messages", with_annotations=True)
    assert converted["document"]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Where is the Eiffel Tower?"},
        {"role": "assistant", "content": "In Paris."},
    ]
    placed = {row["question"]: row for row in converted["annotations"]}
    assert placed["helpful"]["message_index"] == 2
    assert (placed["places"]["start"], placed["places"]["end"]) == (start, start + len("Paris"))


def test_a_transcript_converts_into_the_toy_with_what_it_cannot_say_reported(dataset, annotator):
    create_transcript(
        dataset,
        author=annotator,
        text="<|start|>user<|message|>Hi<|end|>\n"
        "<|start|>assistant<|channel|>final<|message|>Hello<|return|>",
        spec="openchatml-2.2",
    )
    export = export_dataset(dataset, spec=TOY)
    (line,) = [json.loads(written) for written in export]
    assert line["spec"] == TOY and line["text"] == "user: Hi\nassistant: Hello\n"
    assert [(loss["message_index"], loss["field"]) for loss in export.losses] == [
        (1, "channel"),
        (1, "end"),
    ]
