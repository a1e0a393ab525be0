"""The converted export's fast paths (issue 34): a JSON document written on one line for a
line that embeds its value, and a streamed response sent in pieces. Neither changes a byte
of what the user downloads."""

from __future__ import annotations

import json

import pytest

from editor import formats
from editor.exporting import _chat_row, export_dataset, in_pieces
from editor.formats.convert import map_transcript
from editor.storage.create import create_transcript
from tests.editor.samples import demo_texts, readable_specs

pytestmark = pytest.mark.django_db

JSON_TARGETS = [spec for spec in formats.spec_ids() if not formats.spec_info(spec).text]


@pytest.fixture
def every_spec(dataset, curator):
    for spec in readable_specs():
        create_transcript(
            dataset, text=demo_texts()[spec], spec=spec, author=curator, title=f"Sample {spec}"
        )
    return dataset


@pytest.mark.parametrize("source", readable_specs())
@pytest.mark.parametrize("target", JSON_TARGETS)
def test_one_line_is_the_same_json_value(source, target):
    canonical = formats.parse(demo_texts()[source], source).transcript
    mapped, _ = map_transcript(canonical, target)
    written = formats.serialize(mapped, target)
    one_line = formats.serialize(mapped, target, one_line=True)
    if target == "openai-messages" != source:  # a conversion, written indented otherwise
        assert "\n" not in one_line.strip() and "\n" in written
    assert json.loads(one_line) == json.loads(written)
    # the layout of the transcript given is left as it was
    assert formats.serialize(mapped, target) == written


def test_text_specs_ignore_one_line():
    canonical = formats.parse(demo_texts()["openai-messages"], "openai-messages").transcript
    mapped, _ = map_transcript(canonical, "openchatml-2.2")
    assert formats.serialize(mapped, one_line=True) == formats.serialize(mapped)


@pytest.mark.parametrize("target", JSON_TARGETS)
def test_dataset_lines_are_those_of_indented_documents(every_spec, target):
    """Each line, as it was written before the fast path: the indented text read back."""
    lines = list(export_dataset(every_spec, spec=target))
    rows = every_spec.transcripts.order_by("pk")
    assert len(lines) == rows.count()
    for line, row in zip(lines, rows, strict=True):
        if row.spec == target:
            continue  # its stored text, as ever
        mapped, _ = map_transcript(row.canonical(), target)
        indented = formats.serialize(mapped, target)
        expected = json.loads(line)
        try:
            document = json.loads(indented)
        except ValueError:
            assert expected["text"] == indented
        else:
            assert expected["document"] == document
            assert line == json.dumps({**expected, "document": document}, ensure_ascii=False) + "\n"


def test_chat_rows_are_those_of_indented_documents(every_spec):
    for row in every_spec.transcripts.order_by("pk"):
        fast, _ = _chat_row(row.canonical(), None, one_line=True)
        slow, _ = _chat_row(row.canonical(), None)
        assert fast == slow


def test_pieces_hold_the_lines_whole_and_in_order():
    lines = [f'{{"n": {n}, "text": "{"é" * (n % 7)}"}}\n' for n in range(1000)]
    pieces = list(in_pieces(lines, size=1000))
    assert b"".join(pieces) == "".join(lines).encode()
    assert all(piece.endswith(b"\n") for piece in pieces)
    assert all(len(piece.decode()) >= 1000 for piece in pieces[:-1])
    assert len(pieces) < len(lines) / 10
    assert list(in_pieces([])) == []


def test_the_api_export_streams_the_lines_in_pieces(every_spec, curator, client):
    client.force_login(curator)
    url = f"/api/v1/datasets/{every_spec.slug}/export"
    response = client.get(url, {"spec": "openai-messages"})
    assert response.status_code == 200
    pieces = list(response.streaming_content)
    expected = "".join(export_dataset(every_spec, spec="openai-messages")).encode()
    assert b"".join(pieces) == expected
    assert len(pieces) < expected.count(b"\n")
