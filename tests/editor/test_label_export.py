"""Labels in exports: annotations placed in the exported spec's own messages and content;
those that cannot follow are losses, never moved onto other text."""

from __future__ import annotations

import json

import pytest

from editor import formats
from editor.exporting import export_dataset
from editor.formats import as_written
from editor.formats.codecs.bodytext import logical_text
from editor.labels import create_label_schema
from editor.labels.annotations import create_annotation
from editor.storage.create import create_transcript
from tests.editor.samples import demo_texts

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(dataset, curator):
    return create_label_schema(
        dataset,
        author=curator,
        name="Labels",
        questions=[
            {"key": "overall", "kind": "rating", "prompt": "Overall", "scale": 5},
            {
                "key": "ok",
                "kind": "choice",
                "prompt": "OK?",
                "applies_to": "message",
                "options": [{"value": "y", "label": "Yes"}, {"value": "n", "label": "No"}],
            },
            {
                "key": "tag",
                "kind": "span",
                "prompt": "Tag",
                "tags": [{"value": "claim", "label": "Claim", "key": "c"}],
            },
        ],
    )


def label(transcript, annotator, schema, question, value, index=None, text=None):
    start = end = None
    if text is not None:
        body = logical_text(transcript.spec, transcript.canonical().messages[index].content)
        start = body.index(text)
        end = start + len(text)
    return create_annotation(
        transcript,
        annotator=annotator,
        schema=schema,
        question=question,
        value=value,
        message_index=index,
        start=start,
        end=end,
    )


def exported(dataset, **options):
    export = export_dataset(dataset, with_annotations=True, **options)
    lines = [json.loads(line) for line in export]
    return lines, export.losses


@pytest.fixture
def weather(dataset, annotator, schema):
    transcript = create_transcript(
        dataset, text=demo_texts()["openchatml-2.2"], spec="openchatml-2.2", author=annotator
    )
    label(transcript, annotator, schema, "overall", 4)
    label(transcript, annotator, schema, "ok", "y", index=5)  # the tool call
    label(transcript, annotator, schema, "tag", "claim", index=7, text="sunny")  # the final
    label(transcript, annotator, schema, "ok", "n", index=3)  # the analysis
    return transcript


def test_in_its_own_spec_labels_keep_their_places(dataset, weather):
    [line], losses = exported(dataset)
    rows = {(r["question"], r.get("message_index")): r for r in line["annotations"]}
    assert rows[("overall", None)]["value"] == 4
    assert rows[("ok", 5)]["value"] == "y" and rows[("ok", 3)]["value"] == "n"
    span = rows[("tag", 7)]
    assert (span["text"], span["state"], span["annotator"]) == ("sunny", "draft", "annotator")
    final = formats.parse(line["text"], "openchatml-2.2").transcript.messages[7]
    assert final.content[span["start"] : span["end"]] == "sunny"
    assert losses == []


def test_a_label_whose_message_the_target_drops_is_a_loss(dataset, weather):
    [line], losses = exported(dataset, spec="chatml")
    questions = [(r["question"], r.get("message_index")) for r in line["annotations"]]
    assert ("ok", 5) not in questions and ("ok", 3) not in questions  # call and analysis gone
    label_losses = [loss for loss in losses if loss["field"] == "annotation"]
    assert {loss["message_index"] for loss in label_losses} == {3, 5}
    assert all("is not in the chatml export" in loss["detail"] for loss in label_losses)
    [span] = [r for r in line["annotations"] if r["question"] == "tag"]
    message = formats.parse(line["text"], "chatml").transcript.messages[span["message_index"]]
    assert message.content[span["start"] : span["end"]] == "sunny"


def test_end_user_exports_lose_labels_of_hidden_messages(dataset, weather):
    [line], losses = exported(dataset, spec="openai-messages", audience="end_user")
    assert {loss["message_index"] for loss in losses if loss["field"] == "annotation"} == {3, 5}
    [span] = [r for r in line["annotations"] if r["question"] == "tag"]
    message = line["document"]["messages"][span["message_index"]]
    assert message["content"][span["start"] : span["end"]] == "sunny"


def test_openai_files_number_their_messages_and_parts(dataset, annotator, schema):
    transcript = create_transcript(
        dataset, text=demo_texts()["openai-messages"], spec="openai-messages", author=annotator
    )
    label(transcript, annotator, schema, "ok", "y", index=3)  # tool_calls[0] of message 2
    label(transcript, annotator, schema, "ok", "n", index=2)  # its reasoning
    [line], losses = exported(dataset)
    places = sorted((r["message_index"], r.get("part"), r["value"]) for r in line["annotations"])
    assert places == [(2, 0, "n"), (2, 1, "y")]
    assert losses == []


def test_spans_move_with_their_text_when_messages_merge(dataset, annotator, schema):
    text = (
        "<|start|>user<|message|>Price of ACME?<|end|>\n"
        "<|start|>assistant<|channel|>analysis<|message|>Check the quote service.<|end|>\n"
        "<|start|>assistant<|channel|>final<|message|>ACME trades at 12 dollars.<|return|>"
    )
    transcript = create_transcript(dataset, text=text, spec="openchatml-2.2", author=annotator)
    label(transcript, annotator, schema, "tag", "claim", index=2, text="12 dollars")
    [line], losses = exported(dataset, spec="openchatml-0.1")
    [span] = line["annotations"]
    document = formats.parse(line["text"], "openchatml-0.1").transcript
    body = logical_text("openchatml-0.1", document.messages[span["message_index"]].content)
    assert body[span["start"] : span["end"]] == "12 dollars"
    assert losses == [] or all(loss["field"] != "annotation" for loss in losses)


def test_the_api_exports_labels_for_reviewers_only(weather, curator, annotator):
    from tests.api.conftest import api_client_for, assert_error

    response = api_client_for(curator).get(
        "/datasets/support-chats/export", {"with_annotations": "true"}
    )
    [line] = [json.loads(x) for x in b"".join(response.streaming_content).splitlines()]
    assert len(line["annotations"]) == 4
    assert_error(
        api_client_for(annotator).get(
            "/datasets/support-chats/export", {"with_annotations": "true"}
        ),
        403,
        "forbidden",
    )


def test_the_command_exports_labels(weather, capsys):
    from django.core.management import call_command

    call_command("export_dataset", "support-chats", "--spec", "chatml", "--with-annotations")
    out, err = capsys.readouterr()
    [line] = [json.loads(x) for x in out.splitlines()]
    assert any(r["question"] == "tag" for r in line["annotations"])
    assert "annotation" in err  # the lost labels are reported


@pytest.mark.parametrize("target", formats.SPEC_IDS)
@pytest.mark.parametrize("source", ["openchatml-2.2", "openai-messages", "harmony", "sharegpt"])
def test_labels_follow_or_are_reported_for_every_target_spec(
    dataset, annotator, schema, source, target
):
    """A span on the last message of a demo transcript, exported to every spec id: placed on
    a message whose text has it at the exported offsets, or reported as lost."""
    transcript = create_transcript(
        dataset, text=demo_texts()[source], spec=source, author=annotator
    )
    messages = transcript.canonical().messages
    index = len(messages) - 1
    body = logical_text(source, messages[index].content)
    word = max(body.split(), key=len)
    label(transcript, annotator, schema, "tag", "claim", index=index, text=word)
    label(transcript, annotator, schema, "ok", "y", index=index)
    [line], losses = exported(dataset, spec=target)
    label_losses = [loss for loss in losses if loss["field"] == "annotation"]
    placed = [row for row in line["annotations"] if "message_index" in row]
    assert len(placed) + len(label_losses) == 2  # each label follows or is reported
    text = line.get("text")
    if text is None:
        text = json.dumps(line["document"], ensure_ascii=False)
    document = formats.parse(text, target).transcript
    files = as_written.file_messages(document)
    for row in placed:
        group = files[row["message_index"]]
        part = group[row.get("part", 0)]
        if "start" in row:
            exported_body = logical_text(target, document.messages[part].content)
            assert exported_body[row["start"] : row["end"]] == word, (source, target, row)
