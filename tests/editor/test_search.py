"""Text search over message content (TranscriptFilter.text): what it finds, for whom, and the
dataset page's search box and snippets. Runs on SQLite (FTS5) and PostgreSQL (GIN)."""

import sqlite3
from contextlib import closing

import pytest
from django.urls import reverse

from editor import formats
from editor.models import Message, Transcript, TranscriptFilter
from editor.search import SEARCH_WORD_RE
from editor.storage.save import delete_transcript, save_transcript
from tests.conftest import make_transcript

pytestmark = pytest.mark.django_db

M = formats.Message


def found(text: str, *, search_hidden: bool) -> set[str]:
    wanted = TranscriptFilter(text=text, search_hidden=search_hidden)
    return {row.title for row in Transcript.objects.matching(wanted)}


def test_a_word_in_a_message_finds_its_transcript(searchable):
    assert found("lighthouse", search_hidden=False) == {"visible"}
    assert found("LIGHTHOUSE", search_hidden=True) == {"visible"}
    assert found("harbour", search_hidden=False) == {"visible", "hidden"}
    assert found("nothing-like-this", search_hidden=True) == set()


def test_every_word_must_be_in_the_message(searchable):
    assert found("harbour lighthouse", search_hidden=True) == set()
    assert found("calm harbour", search_hidden=False) == {"hidden"}


@pytest.mark.parametrize("word", ["zephyr", "quasar", "walrus", "narwhal", "mango"])
def test_a_word_only_in_a_hidden_part_is_found_only_by_who_may_see_it(searchable, word):
    assert found(word, search_hidden=True) == {"hidden"}
    assert found(word, search_hidden=False) == set()


def test_the_search_follows_edits_and_deletes_of_messages(searchable, annotator):
    transcript = searchable["visible"]
    messages = [
        M(role="user", content="Which pier?"),
        M(role="assistant", channel="analysis", content="The lighthouse one."),
    ]
    transcript = save_transcript(
        transcript,
        expected_version=transcript.version,
        author=annotator,
        canonical=formats.Transcript(spec="openchatml-2.2", messages=messages),
    )
    assert found("pier", search_hidden=False) == {"visible"}
    assert found("harbour", search_hidden=True) == {"hidden"}
    # Now in an analysis channel: hidden from viewers, still found by editors.
    assert found("lighthouse", search_hidden=False) == set()
    assert found("lighthouse", search_hidden=True) == {"visible"}
    save_transcript(
        transcript,
        expected_version=transcript.version,
        author=annotator,
        canonical=formats.Transcript(spec="openchatml-2.2", messages=messages[:1]),
    )
    assert found("lighthouse", search_hidden=True) == set()
    assert Message.objects.containing("pier", search_hidden=True).count() == 1


def test_deleted_transcripts_and_deleted_rows_are_not_found(searchable, annotator):
    delete_transcript(searchable["visible"], author=annotator)
    assert found("lighthouse", search_hidden=True) == set()
    Transcript.all_objects.filter(pk=searchable["visible"].pk).delete()
    assert not Message.objects.containing("lighthouse", search_hidden=True).exists()


def test_search_combines_with_the_other_filters(searchable):
    wanted = TranscriptFilter(text="harbour", search_hidden=True, contains=["analysis"])
    assert {row.title for row in Transcript.objects.matching(wanted)} == {"hidden"}


HOSTILE = [
    '"',
    '"unbalanced',
    "*",
    "harb*",
    "NEAR(",
    "NEAR(harbour lighthouse, 2)",
    "'",
    "%",
    "_",
    "((",
    "))",
    "harbour AND",
    "OR",
    "NOT harbour",
    "-",
    "content: harbour",
    "end_user_text : zephyr",
    "{content}: zephyr",
    "hidden_text : zephyr",
    "{end_user_text hidden_text} : zephyr",
    "^harbour",
    "\x00",
    "harbour\x00",
    "harbour " * 60,
    "harbour_lighthouse",  # two tokens for both backends' tokenizers: no phrase query
    "harbour\u19b0lighthouse",  # a New Tai Lue vowel sign: a letter to Python, not to FTS5
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_plain_words(searchable, query):
    for search_hidden in (True, False):
        found(query, search_hidden=search_hidden)  # no syntax error from either backend


@pytest.mark.parametrize("query", ["content : zephyr", "hidden_text : zephyr"])
def test_a_column_name_in_the_query_does_not_reach_hidden_text(searchable, query):
    assert found(query, search_hidden=False) == set()


def test_words_joined_by_an_underscore_are_two_words(dataset, annotator):
    make_transcript(dataset, annotator, "call", M(role="user", content="Try get_weather(x)."))
    for query in ("get_weather", "weather", "GET weather"):
        assert found(query, search_hidden=False) == {"call"}, query
    assert found("get_forecast", search_hidden=False) == set()


def test_a_search_word_is_one_token_to_sqlites_tokenizer():
    """Every character a search word is made of is one that SQLite's FTS5 tokenizer keeps
    inside a token: a word it split would be a phrase, which the search table (no positions)
    refuses. Checked against the SQLite library in use, whatever the database."""
    word_characters = [
        chr(point)
        for point in range(0x80, 0x110000)
        if not 0xD800 <= point < 0xE000 and SEARCH_WORD_RE.fullmatch(chr(point))
    ]
    with closing(sqlite3.connect(":memory:")) as tokenizer:
        tokenizer.execute(
            "CREATE VIRTUAL TABLE words USING fts5(x, tokenize='unicode61 remove_diacritics 2')"
        )
        tokenizer.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, 'instance')")
        tokenizer.executemany(
            "INSERT INTO words(rowid, x) VALUES (?, ?)",
            ((point, f"a{character}a") for point, character in enumerate(word_characters)),
        )
        split = tokenizer.execute(
            "SELECT doc FROM tokens GROUP BY doc HAVING count(*) > 1"
        ).fetchall()
    assert [hex(ord(word_characters[doc])) for (doc,) in split] == []


def page(client, user, dataset, **params):
    client.force_login(user)
    response = client.get(reverse("dataset", args=[dataset.slug]), params)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("query", [*HOSTILE, "x" * 10_000])
def test_the_dataset_page_never_fails_on_a_query(client, viewer, dataset, searchable, query):
    page(client, viewer, dataset, q=query)


def test_a_too_long_query_is_reported_on_the_page(client, viewer, dataset, searchable):
    html = page(client, viewer, dataset, q="x" * 10_000)
    assert "Ensure this value has at most" in html


def test_the_page_searches_and_shows_a_marked_snippet(client, annotator, dataset, searchable):
    html = page(client, annotator, dataset, q="lighthouse")
    assert 'data-testid="transcripts"' in html
    assert f'data-transcript="{searchable["visible"].pk}"' in html
    assert f'data-transcript="{searchable["hidden"].pk}"' not in html
    assert "The <mark>lighthouse</mark> one." in html
    assert 'name="q" value="lighthouse"' in html


def test_an_editor_sees_snippets_of_hidden_parts(client, annotator, dataset, searchable):
    assert "Codeword <mark>zephyr</mark>." in page(client, annotator, dataset, q="zephyr")


def test_a_viewers_snippets_show_only_what_the_end_user_sees(client, viewer, dataset, searchable):
    html = page(client, viewer, dataset, q="harbour")
    assert f'data-transcript="{searchable["hidden"].pk}"' in html
    # The first hit in the hidden transcript is in its analysis; a viewer's snippet is cut
    # from the first message the end user sees, and without the text after the CoT marker.
    assert "Any <mark>harbour</mark> news?" in html
    for hidden in ("quasar", "Pondering", "mango", "zephyr", "walrus", "narwhal"):
        assert hidden not in html


@pytest.mark.parametrize("search_hidden", [True, False])
def test_the_whole_set_of_matches_finds_the_same_transcripts_sorted(searchable, search_hidden):
    """PostgreSQL computes the set of matches first (a fenced subquery,
    MessageQuerySet.transcript_ids), whatever order the list is in."""
    for sort in ("-updated", "title", "id"):
        wanted = TranscriptFilter(text="harbour", search_hidden=search_hidden)
        rows = Transcript.objects.matching(wanted).sorted_by(sort)
        everything = list(rows)
        assert {row.title for row in everything} == {"visible", "hidden"}
        assert list(rows[:1]) == everything[:1]  # a page: where the planner could walk
    expected = {"hidden"} if search_hidden else set()
    assert found("zephyr", search_hidden=search_hidden) == expected
    assert found("nowhere", search_hidden=search_hidden) == set()


def test_each_snippet_is_cut_from_the_first_matching_message(client, annotator, dataset):
    for n in range(3):
        make_transcript(
            dataset,
            annotator,
            f"t{n}",
            M(role="user", content=f"Nothing here {n}."),
            M(role="assistant", channel="final", content=f"First beacon of t{n}."),
            M(role="user", content=f"Second beacon of t{n}."),
        )
    html = page(client, annotator, dataset, q="beacon")
    for n in range(3):
        assert f"First <mark>beacon</mark> of t{n}." in html
    assert "Second" not in html


def test_snippets_are_escaped(client, annotator, dataset):
    make_transcript(
        dataset,
        annotator,
        "html",
        M(role="user", content="<script>alert(1)</script> harbour <b>bold</b>"),
    )
    html = page(client, annotator, dataset, q="harbour")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; <mark>harbour</mark> &lt;b&gt;bold" in html
    assert "<script>alert(1)" not in html


def test_a_new_spec_recomputes_what_the_end_user_sees(dataset, annotator):
    # After a 2.x CoT marker the rest of a body is hidden; in v0.1 the same text is a closed
    # thought block, and what follows it is shown: "afterwards" becomes visible.
    messages = [
        M(role="user", content="Go on."),
        M(role="assistant", content="First <|start_reason|>kiwi<|end_reason|> afterwards"),
    ]
    transcript = make_transcript(dataset, annotator, "cot", *messages)
    assert found("afterwards", search_hidden=False) == set()
    save_transcript(
        transcript,
        expected_version=transcript.version,
        author=annotator,
        canonical=formats.Transcript(spec="openchatml-0.1", messages=messages),
    )
    assert found("afterwards", search_hidden=False) == {"cot"}
    assert found("kiwi", search_hidden=False) == set()
    assert found("kiwi", search_hidden=True) == {"cot"}


def test_every_message_written_is_in_the_search_index_once(dataset, annotator):
    """Messages enter the index where storage inserts them (one statement per insert, on
    SQLite), and storage takes them out as it changes them: after creating, editing one
    message, inserting and removing messages and deleting a transcript for good, the index
    holds each stored message once and finds it by its words."""
    from django.db import connection

    kept = make_transcript(dataset, annotator, "kept", M(role="user", content="alpha bravo"))
    gone = make_transcript(dataset, annotator, "gone", M(role="user", content="charlie"))
    kept = save_transcript(
        kept,
        expected_version=kept.version,
        author=annotator,
        canonical=formats.Transcript(
            spec="openchatml-2.2",
            messages=[
                M(role="user", content="alpha delta"),
                M(role="assistant", content="echo foxtrot"),
                M(role="user", content="golf"),
            ],
        ),
    )
    save_transcript(
        kept,
        expected_version=kept.version,
        author=annotator,
        canonical=formats.Transcript(
            spec="openchatml-2.2",
            messages=[M(role="user", content="alpha delta"), M(role="user", content="hotel")],
        ),
    )
    Transcript.all_objects.filter(pk=gone.pk).delete()
    for word, titles in {"alpha": {"kept"}, "hotel": {"kept"}, "charlie": set()}.items():
        assert found(word, search_hidden=True) == titles
    for word in ("bravo", "echo", "foxtrot", "golf"):
        assert found(word, search_hidden=True) == set()
    if connection.vendor == "sqlite":
        # The table cannot be scanned (contentless, no column sizes): every token it holds,
        # with the row it is in, is in its vocabulary's "instance" view; a row indexed
        # twice has each of its tokens twice.
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE VIRTUAL TABLE temp.search_tokens"
                " USING fts5vocab(main, editor_message_search, instance)"
            )
            cursor.execute("SELECT doc, term, col, offset FROM temp.search_tokens")
            tokens = cursor.fetchall()
            cursor.execute("DROP TABLE temp.search_tokens")
        assert len(tokens) == len(set(tokens))
        indexed = {doc for doc, _, _, _ in tokens}
        with_text = {m.pk for m in Message.objects.select_related("transcript") if m.content}
        assert indexed == with_text


@pytest.mark.django_db(transaction=True)
def test_the_search_table_made_again_finds_every_message(searchable, annotator):
    """Back to the table with token positions (migration 0020) and forward again: the
    contents the rows said where to find are put back into them (0026 backwards) and found
    again (0026 forwards), the table is filled from the rows, and edits still take the old
    words out."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    contents = {m.pk: m.content for m in Message.objects.select_related("transcript")}
    spanned = set(Message.objects.filter(content_start__isnull=False).values_list("pk", flat=True))
    assert spanned or connection.vendor != "sqlite"
    executor = MigrationExecutor(connection)
    executor.migrate([("editor", "0020_fewer_indexes")])
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, content FROM editor_message")
        assert dict(cursor.fetchall()) == contents
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    # Forward again, the rows found in their source texts say where (0026 forwards).
    assert {m.pk: m.content for m in Message.objects.select_related("transcript")} == contents
    again = set(Message.objects.filter(content_start__isnull=False).values_list("pk", flat=True))
    assert again == spanned
    assert found("harbour", search_hidden=False) == {"visible", "hidden"}
    assert found("zephyr", search_hidden=True) == {"hidden"}
    assert found("zephyr", search_hidden=False) == set()
    hidden = Transcript.objects.get(pk=searchable["hidden"].pk)
    messages = hidden.canonical().messages
    messages[0].content = "Codeword okapi."
    save_transcript(hidden, expected_version=hidden.version, author=annotator, messages=messages)
    assert found("zephyr", search_hidden=True) == set()
    assert found("okapi", search_hidden=True) == {"hidden"}
