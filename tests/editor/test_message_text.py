"""A message's content kept once (editor.db.message_text): on SQLite a row says where its content
is in the transcript's source text; every read gives the content back, through every kind of
edit, and the search index follows the rows without reading them."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from editor import formats
from editor.db.message_text import MIN_SPANNED_LENGTH, Span, content_at, locate
from editor.models import Message, Transcript
from editor.search.sqlite_index import texts
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.formats.conftest import fixture_inputs, read_input

LONG = "The moon's gravity pulls the oceans into two bulges."


def test_a_content_is_found_as_it_is_or_as_a_json_string():
    lines = "Line one\nLine two, é"
    source = f"<|start|>user<|message|>{LONG}<|end|>{json.dumps(lines)}"
    raw, escaped = locate(source, [LONG, lines])
    assert raw == Span(source.index(LONG), source.index(LONG) + len(LONG), False)
    assert escaped.escaped and source[escaped.start] == '"'
    assert content_at(source, *raw) == LONG
    assert content_at(source, *escaped) == lines
    # Written with \u escapes, as json.dumps does by default: found too.
    ascii_source = json.dumps({"content": "Déjà vu, once more again"})
    (span,) = locate(ascii_source, ["Déjà vu, once more again"])
    assert content_at(ascii_source, *span) == "Déjà vu, once more again"


def test_short_contents_and_contents_not_in_the_source_stay_in_their_rows():
    source = f"ok {LONG}"
    assert locate(source, ["ok", "x" * MIN_SPANNED_LENGTH, ""]) == [None, None, None]


def test_contents_are_looked_for_in_order_and_a_repeated_one_found_twice():
    source = f"{LONG} / {LONG}"
    first, second = locate(source, [LONG, LONG])
    assert first.start == 0 and second.start == len(LONG) + 3
    # One found too early (the second message's text in the first) only moves the search on.
    assert locate(f"{LONG}!", [LONG, LONG + "!"])[1] is None


def _messages(transcript: Transcript) -> list[formats.Message]:
    return Transcript.all_objects.get(pk=transcript.pk).stored_messages()


def _spanned(transcript: Transcript) -> int:
    return Message.objects.filter(transcript=transcript, content_start__isnull=False).count()


def assert_search_index_matches_the_rows() -> None:
    """SQLite: the search index holds exactly the tokens of every message's texts as they
    are now: compared, token by token, with an index made afresh from the rows' contents."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE VIRTUAL TABLE temp.fresh USING fts5(end_user_text, hidden_text, content='',"
            " tokenize='unicode61 remove_diacritics 2', columnsize=0, detail=column)"
        )
        for message in Message.objects.select_related("transcript"):
            cursor.execute(
                "INSERT INTO temp.fresh(rowid, end_user_text, hidden_text) VALUES (%s, %s, %s)",
                [message.pk, *texts(message.content, message.end_user_text)],
            )
        tokens = {}
        for table, schema in (("editor_message_search", "main"), ("fresh", "temp")):
            cursor.execute(
                f"CREATE VIRTUAL TABLE temp.vocab_{table} USING fts5vocab({schema}, {table}, instance)"
            )
            cursor.execute(f"SELECT doc, term, col FROM temp.vocab_{table}")
            tokens[table] = sorted(cursor.fetchall())
            cursor.execute(f"DROP TABLE temp.vocab_{table}")
        cursor.execute("DROP TABLE temp.fresh")
    assert tokens["editor_message_search"] == tokens["fresh"]


def _edited(messages: list[formats.Message], index: int, content: str) -> list[formats.Message]:
    edited = [formats.Message.from_dict(m.to_dict()) for m in messages]
    edited[index].content = content
    return edited


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spec", "path"),
    fixture_inputs("valid"),
    ids=lambda value: value.name if hasattr(value, "name") else value,
)
def test_every_valid_fixture_reads_back_through_edits(dataset, curator, spec, path):
    text = read_input(path)
    parsed = formats.parse(text, spec).transcript
    transcript = create_transcript(dataset, text=text, spec=spec, author=curator)
    expected = [formats.Message.from_dict(m.to_dict()) for m in parsed.messages]
    assert _messages(transcript) == expected
    assert Transcript.all_objects.get(pk=transcript.pk).source_text == text
    if not expected:
        return
    steps = [
        # The longest message grows: every span after it moves.
        lambda ms: _edited(
            ms,
            max(range(len(ms)), key=lambda i: len(ms[i].content or "")),
            (ms[0].content or "") + " and then some more words: kelp",
        ),
        # The first message shrinks.
        lambda ms: _edited(ms, 0, "Short."),
        # A message inserted at the start, then the last one removed.
        lambda ms: [formats.Message(role="user", content=f"Inserted first: {LONG}"), *ms],
        lambda ms: ms[:-1] if len(ms) > 1 else ms,
    ]
    current = transcript
    for step in steps:
        wanted = step(_messages(current))
        current = save_transcript(
            current, expected_version=current.version, author=curator, messages=wanted
        )
        assert _messages(current) == [formats.Message.from_dict(m.to_dict()) for m in wanted]
        assert [m.to_canonical() for m in Message.objects.filter(transcript=current)] == wanted
    assert_search_index_matches_the_rows()


@pytest.mark.django_db
def test_rows_say_where_their_content_is_on_sqlite_only(dataset, curator):
    text = "".join(
        f"<|start|>user<|message|>{LONG} {n}<|end|>\n<|start|>assistant<|message|>ok<|end|>\n"
        for n in range(3)
    )
    transcript = create_transcript(dataset, text=text, spec="openchatml-2.2", author=curator)
    rows = list(Message.objects.filter(transcript=transcript).order_by("index"))
    contents = [content for n in range(3) for content in (f"{LONG} {n}", "ok")]
    assert [row.content for row in rows] == contents
    if connection.vendor == "sqlite":
        assert [row.stored_content for row in rows] == ["", "ok"] * 3
        assert _spanned(transcript) == 3
    else:  # PostgreSQL's text search indexes the rows' content
        assert [row.stored_content for row in rows] == contents
        assert _spanned(transcript) == 0


@pytest.mark.django_db
def test_edits_of_the_text_move_the_spans_of_what_they_do_not_touch(dataset, curator):
    """A text edit that changes the header, one in the middle of a message, one that makes a
    span cross the changed stretch: the rows that stay read back right."""
    body = "".join(
        f"<|start|>user<|message|>Question {n}: {LONG}<|end|>\n"
        f"<|start|>assistant<|channel|>final<|message|>Answer {n}: {LONG}<|end|>\n"
        for n in range(4)
    )
    text = "---\nversion: 2.2\n---\n" + body
    transcript = create_transcript(dataset, text=text, spec="openchatml-2.2", author=curator)
    for edit in (
        lambda t: t.replace("version: 2.2", "version: 2.2\ntitle: Tides and more tides"),
        lambda t: t.replace("Answer 1: The moon's", "Answer 1: Well, the moon's", 1),
        lambda t: t.replace(
            "pulls the oceans into two bulges.<|end|>\n<|start|>assistant",
            "pulls the seas into two bulges.<|end|>\n<|start|>assistant",
            1,
        ),
        lambda t: t.replace("Question 3", "Q3"),
    ):
        text = edit(text)
        transcript = save_transcript(
            transcript, expected_version=transcript.version, author=curator, text=text
        )
        expected = formats.parse(text, "openchatml-2.2").transcript.messages
        assert _messages(transcript) == [formats.Message.from_dict(m.to_dict()) for m in expected]
    assert_search_index_matches_the_rows()
    if connection.vendor == "sqlite":
        assert _spanned(transcript) == 8


@pytest.mark.django_db
def test_a_json_source_keeps_its_escaped_contents_once(dataset, curator):
    content = 'She said "hi"\nthen left — for good, with a tab\there.'
    text = json.dumps(
        [{"role": "user", "content": content}, {"role": "assistant", "content": LONG}]
    )
    transcript = create_transcript(dataset, text=text, spec="openai-messages", author=curator)
    assert [m.content for m in _messages(transcript)] == [content, LONG]
    if connection.vendor == "sqlite":
        assert list(
            Message.objects.filter(transcript=transcript).values_list("content_escaped", flat=True)
        ) == [True, False]
    saved = save_transcript(
        transcript,
        expected_version=transcript.version,
        author=curator,
        messages=_edited(_messages(transcript), 1, "A new answer, long enough to be a span."),
    )
    assert [m.content for m in _messages(saved)] == [
        content,
        "A new answer, long enough to be a span.",
    ]
    assert_search_index_matches_the_rows()


@pytest.mark.django_db
def test_converting_to_another_spec_rewrites_every_row(dataset, curator):
    text = (
        f"<|start|>user<|message|>{LONG}<|end|>\n"
        f"<|start|>assistant<|channel|>final<|message|>Yes, {LONG}<|end|>\n"
    )
    transcript = create_transcript(dataset, text=text, spec="openchatml-2.2", author=curator)
    from editor.formats.convert import convert

    converted, _ = convert(formats.parse(text, "openchatml-2.2").transcript, "openai-messages")
    saved = save_transcript(
        transcript,
        expected_version=transcript.version,
        author=curator,
        text=converted,
        spec="openai-messages",
    )
    assert saved.spec == "openai-messages"
    assert [m.content for m in _messages(saved)] == [LONG, f"Yes, {LONG}"]
    assert_search_index_matches_the_rows()


@pytest.mark.django_db
def test_a_document_written_afresh_moves_its_rows_in_a_few_statements(dataset, curator):
    """Editing the tools of a JSON document whose tools follow its messages, and one message,
    writes it afresh (tools first): every other row's span crosses the changed stretch. They
    are found again in one pass and one statement, not a search of the whole text and an
    UPDATE each."""
    messages = [{"role": "user", "content": f"Message {n}: {LONG}"} for n in range(60)]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    text = json.dumps({"messages": messages, "tools": tools})
    transcript = create_transcript(dataset, text=text, spec="openai-messages", author=curator)
    wanted = _edited(_messages(transcript), 0, "The first message, edited at length.")
    tools[0]["function"]["name"] = "get_forecast"
    edited = formats.Transcript(spec="openai-messages", messages=wanted, attrs={"tools": tools})
    with CaptureQueriesContext(connection) as queries:
        saved = save_transcript(
            transcript, expected_version=transcript.version, author=curator, canonical=edited
        )
    assert Transcript.all_objects.get(pk=saved.pk).source_text.startswith('{"tools"')
    assert _messages(saved) == wanted
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert len(updates) < 10, len(updates)
    assert_search_index_matches_the_rows()
