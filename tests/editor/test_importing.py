"""import_transcripts: every input shape, atomicity, partial imports, idempotence."""

from __future__ import annotations

import codecs
import io
import json
import zipfile
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from editor.errors import InvalidContent, NotAllowed
from editor.importing import Action, ImportRejected, import_transcripts
from editor.models import Message, Revision, Transcript
from editor.storage.save import delete_transcript
from tests.editor.samples import conversation, demo_texts, readable_specs

pytestmark = pytest.mark.django_db


def envelope(external_id, text=None, spec="openchatml-2.2", **extra) -> str:
    line = {"id": external_id, "spec": spec, "text": text or conversation(spec), **extra}
    return json.dumps(line)


def jsonl(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def nothing_written() -> bool:
    return not (
        Transcript.all_objects.exists() or Message.objects.exists() or Revision.objects.exists()
    )


def test_jsonl_envelopes(dataset, curator):
    data = jsonl(
        envelope("a", title="First", metadata={"lang": "en"}),
        envelope("b", conversation("chatml"), spec="chatml"),
        json.dumps({"id": "c", "document": json.loads(conversation("sharegpt"))}),
    )
    report = import_transcripts(data, dataset=dataset, author=curator, name="chats.jsonl")

    assert report.committed
    assert report.counts == {"created": 3, "updated": 0, "skipped": 0, "failed": 0}
    assert [i.location for i in report.items] == ["chats.jsonl:1", "chats.jsonl:2", "chats.jsonl:3"]
    a, b, c = Transcript.objects.order_by("external_id")
    assert (a.title, a.metadata, a.spec, a.created_by) == (
        "First",
        {"lang": "en"},
        "openchatml-2.2",
        curator,
    )
    assert a.source_text == conversation()
    assert b.spec == "chatml" and len(b.canonical().messages) == 4
    assert c.spec == "sharegpt" and c.title == "Question 0?"
    assert a.revisions.get().kind == "import"


def test_bare_json_documents_per_line_are_detected(dataset):
    lines = [json.dumps(json.loads(conversation(spec))) for spec in ("openai-messages", "sharegpt")]
    report = import_transcripts(jsonl(*lines), dataset=dataset, name="docs.jsonl")
    assert [i.spec for i in report.items] == ["openai-messages", "sharegpt"]
    assert Transcript.objects.count() == 2


def test_a_bad_line_in_the_middle_writes_nothing(dataset):
    data = jsonl(
        envelope("a"),
        envelope("b"),
        '{"id": "c", "text": ',  # cut off
        envelope("d"),
        envelope("e", "just prose", spec="chatml"),
    )
    with pytest.raises(ImportRejected) as caught:
        import_transcripts(data, dataset=dataset, name="x.jsonl", batch_size=2)

    report = caught.value.report
    assert nothing_written()
    assert not report.committed
    assert caught.value.code == "import-rejected"
    failed = {i.location: i.message for i in report.failures}
    assert list(failed) == ["x.jsonl:3", "x.jsonl:5"]
    assert "not valid JSON" in failed["x.jsonl:3"]
    assert "E-PARSE-EMPTY" in failed["x.jsonl:5"]
    assert report.counts["created"] == 0
    assert "x.jsonl:3" in caught.value.message


def test_partial_import_keeps_the_good_items(dataset):
    data = jsonl(envelope("a"), "[1, 2]", envelope("c"), b"\xff\xfe".decode("latin-1"))
    data = data.replace("ÿþ".encode(), b"\xff\xfe")
    report = import_transcripts(data, dataset=dataset, name="x.jsonl", partial=True)

    assert report.committed
    assert report.counts == {"created": 2, "updated": 0, "skipped": 0, "failed": 2}
    assert {i.location: i.action for i in report.items}["x.jsonl:4"] == Action.FAILED
    assert "not UTF-8" in report.items[3].message
    assert sorted(Transcript.objects.values_list("external_id", flat=True)) == ["a", "c"]


def test_parse_errors_are_imported_as_drafts_with_diagnostics(dataset):
    truncated = (
        "<|start|>user<|message|>hi<|end|>\n<|start|>assistant<|channel|>final<|message|>Half"
    )
    report = import_transcripts(jsonl(envelope("t", truncated)), dataset=dataset, name="x.jsonl")
    item = report.items[0]
    assert item.action == Action.CREATED and item.error_count >= 1
    transcript = Transcript.objects.get()
    assert transcript.status == "draft"
    assert transcript.error_count == item.error_count
    assert transcript.source_text == truncated


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"id": "x", "text": "hello"}', "could not be detected"),
        (
            '{"id": "x", "text": "<|start|>user<|message|>hi<|end|>", "spec": "nope"}',
            "Unknown spec",
        ),
        ('{"id": "x", "text": 3}', '"text" must be a string'),
        ('{"id": "x", "text": "a", "document": {}}', "not both"),
        ('{"id": ["x"], "text": "a"}', '"id" must be'),
        ('{"id": "x", "text": "<|start|>user<|message|>hi<|end|>", "metadata": []}', "metadata"),
        ('{"id": "x", "text": "<|start|>user<|message|>a\\u0000b<|end|>"}', "NUL"),
        ('"a string"', "expected a JSON object"),
        ('{"unknown": "shape"}', "could not be detected"),
    ],
)
def test_unreadable_items_say_why(dataset, line, reason):
    with pytest.raises(ImportRejected) as caught:
        import_transcripts(jsonl(line), dataset=dataset, name="x.jsonl")
    assert reason in caught.value.report.items[0].message
    assert nothing_written()


def test_reimport_is_idempotent(dataset, curator):
    data = jsonl(envelope("a"), envelope("b"))
    import_transcripts(data, dataset=dataset, name="x.jsonl")

    again = import_transcripts(data, dataset=dataset, author=curator, name="x.jsonl")

    assert again.counts == {"created": 0, "updated": 0, "skipped": 2, "failed": 0}
    assert {i.message for i in again.items} == {"unchanged"}
    assert Revision.objects.count() == 2
    assert set(Transcript.objects.values_list("version", flat=True)) == {1}


def test_reimport_updates_changed_items_with_a_revision(dataset, curator):
    import_transcripts(jsonl(envelope("a"), envelope("b")), dataset=dataset, name="x.jsonl")
    changed = jsonl(envelope("a", conversation(turns=3)), envelope("b", title="Renamed"))

    report = import_transcripts(changed, dataset=dataset, author=curator, name="x.jsonl")

    assert report.counts["updated"] == 2
    a = Transcript.objects.get(external_id="a")
    assert (a.version, len(a.canonical().messages), a.source_text) == (2, 6, conversation(turns=3))
    assert a.revisions.get(number=2).note == "re-imported"
    assert Transcript.objects.get(external_id="b").title == "Renamed"


def test_reimport_can_skip_existing_items(dataset):
    import_transcripts(jsonl(envelope("a")), dataset=dataset, name="x.jsonl")
    report = import_transcripts(
        jsonl(envelope("a", conversation(turns=3)), envelope("b")),
        dataset=dataset,
        name="x.jsonl",
        on_conflict="skip",
    )
    assert [i.action for i in report.items] == [Action.SKIPPED, Action.CREATED]
    assert Transcript.objects.get(external_id="a").version == 1


def test_the_same_id_twice_in_one_import_fails(dataset):
    with pytest.raises(ImportRejected) as caught:
        import_transcripts(jsonl(envelope("a"), envelope("a")), dataset=dataset, name="x.jsonl")
    assert "already used at x.jsonl:1" in caught.value.report.items[1].message


def test_an_id_held_by_a_deleted_transcript_fails(dataset):
    import_transcripts(jsonl(envelope("a")), dataset=dataset, name="x.jsonl")
    delete_transcript(Transcript.objects.get(), author=None)
    with pytest.raises(ImportRejected) as caught:
        import_transcripts(
            jsonl(envelope("a", conversation(turns=3))), dataset=dataset, name="x.jsonl"
        )
    assert "deleted" in caught.value.report.items[0].message


@pytest.mark.parametrize("spec", readable_specs())
def test_a_single_file_in_any_spec(dataset, tmp_path, spec):
    path = tmp_path / f"sample-{spec}.txt"
    path.write_bytes(demo_texts()[spec].encode())

    report = import_transcripts(path, dataset=dataset)

    assert [(i.spec, i.action) for i in report.items] == [(spec, Action.CREATED)]
    transcript = Transcript.objects.get()
    assert transcript.source_text == demo_texts()[spec]
    # A JSON document's own top-level id names it; otherwise the file name does.
    document_id = _top_level_id(demo_texts()[spec])
    assert transcript.external_id == (document_id or path.name)
    assert transcript.title == path.stem


def _top_level_id(text: str) -> str | None:
    try:
        document = json.loads(text)
    except ValueError:
        return None
    return document.get("id") if isinstance(document, dict) else None


def test_a_single_json_envelope_file(dataset):
    data = json.dumps({"text": conversation(), "title": "One", "id": "one"}).encode()
    report = import_transcripts(data, dataset=dataset, name="one.json")
    assert report.items[0].external_id == "one"
    assert Transcript.objects.get().title == "One"


def test_a_zip_of_files_and_jsonl(dataset, curator):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("chats/a.txt", conversation())
        archive.writestr("chats/b.json", conversation("openai-messages"))
        archive.writestr("more.jsonl", jsonl(envelope("c"), envelope("d")))
        archive.writestr("__MACOSX/chats/._a.txt", b"\x00junk")
        archive.writestr("chats/.hidden", b"junk")
    buffer.seek(0)

    report = import_transcripts(buffer, dataset=dataset, author=curator, name="batch.zip")

    assert [(i.location, i.external_id) for i in report.items] == [
        ("batch.zip:chats/a.txt", "chats/a.txt"),
        ("batch.zip:chats/b.json", "chats/b.json"),
        ("batch.zip:more.jsonl:1", "c"),
        ("batch.zip:more.jsonl:2", "d"),
    ]
    assert Transcript.objects.count() == 4
    assert report.bytes_total == report.bytes_read


def test_a_folder(dataset, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text(conversation())
    (tmp_path / "b.txt").write_text(conversation("chatml"))
    report = import_transcripts(tmp_path, dataset=dataset)
    assert [i.external_id for i in report.items] == ["b.txt", "sub/a.txt"]
    assert report.counts["created"] == 2


class Unseekable(io.RawIOBase):
    """A pipe: read once, no seeking (like standard input)."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        chunk = self._data.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def test_jsonl_is_recognised_on_an_unnamed_stream(dataset):
    stream = io.BufferedReader(Unseekable(jsonl(envelope("a"), envelope("b"))))
    report = import_transcripts(stream, dataset=dataset)
    assert [i.location for i in report.items] == ["<stdin>:1", "<stdin>:2"]


def test_a_zip_on_an_unseekable_stream(dataset):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.txt", conversation())
    report = import_transcripts(io.BufferedReader(Unseekable(buffer.getvalue())), dataset=dataset)
    assert report.counts["created"] == 1


def test_progress_is_reported_per_batch(dataset):
    seen = []
    import_transcripts(
        jsonl(*(envelope(str(n)) for n in range(5))),
        dataset=dataset,
        name="x.jsonl",
        batch_size=2,
        progress=lambda report: seen.append(
            (len(report.items), sum(report.counts.values()), report.bytes_read)
        ),
    )
    # Each batch written as soon as it is read and checked, then the last report.
    assert [(read, written) for read, written, _ in seen] == [(2, 2), (4, 4), (5, 5), (5, 5)]
    assert seen[-1][2] == len(jsonl(*(envelope(str(n)) for n in range(5))))


def test_an_all_or_nothing_import_holds_one_batch_in_memory(dataset, monkeypatch):
    """A batch's prepared transcripts (parsed, checked: several times the size of their text)
    are gone once the next batch is written: an import of any size holds one batch."""
    import gc
    import weakref

    from editor.importing.batches import Importer

    alive_while_writing = []
    earlier: list[weakref.ref] = []
    ready = Importer.ready

    def spied(self, batch):
        gc.collect()
        alive_while_writing.append(sum(ref() is not None for ref in earlier))
        earlier.extend(weakref.ref(new.content) for _, new in batch)
        return ready(self, batch)

    monkeypatch.setattr(Importer, "ready", spied)
    report = import_transcripts(
        jsonl(*(envelope(str(n)) for n in range(7))), dataset=dataset, name="x.jsonl", batch_size=2
    )

    assert report.counts["created"] == 7
    assert alive_while_writing == [0, 0, 0, 0]
    assert {item.transcript_id for item in report.items} == set(
        Transcript.objects.values_list("pk", flat=True)
    )


def test_an_item_failing_after_batches_were_written_takes_them_all_back(dataset):
    data = jsonl(*(envelope(str(n)) for n in range(5)), "[1, 2]", envelope("6"))
    with pytest.raises(ImportRejected) as caught:
        import_transcripts(data, dataset=dataset, name="x.jsonl", batch_size=2)

    report = caught.value.report
    assert nothing_written()
    assert not report.committed and report.counts["created"] == 0
    assert [i.location for i in report.failures] == ["x.jsonl:6"]
    assert all(item.transcript_id is None for item in report.items)


def test_only_editors_may_import(dataset, viewer):
    with pytest.raises(NotAllowed):
        import_transcripts(jsonl(envelope("a")), dataset=dataset, author=viewer, name="x.jsonl")
    assert nothing_written()


def test_import_report_serialises(dataset):
    report = import_transcripts(jsonl(envelope("a")), dataset=dataset, name="x.jsonl")
    data = report.to_dict()
    assert data["counts"]["created"] == 1
    assert data["items"][0]["transcript_id"] == Transcript.objects.get().pk
    json.dumps(data)


# --- audit regressions -----------------------------------------------------------------------

JSON_LINES_TRANSCRIPT = (
    b'{"role": "user", "content": "What is 2 + 2?"}\n'
    b'{"role": "assistant", "channel": "final", "content": "4.", "end": "return"}\n'
)


def test_a_json_lines_transcript_is_one_transcript(dataset, tmp_path):
    # openchatml-json writes a transcript as JSON Lines, one message a line: not a JSONL of
    # transcripts, wherever it is found.
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "chat.jsonl").write_bytes(JSON_LINES_TRANSCRIPT)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("deep/er/chat.jsonl", JSON_LINES_TRANSCRIPT)

    for source, name in (
        (JSON_LINES_TRANSCRIPT, "chat.jsonl"),
        (JSON_LINES_TRANSCRIPT, None),
        (tmp_path / "folder", None),
        (buffer.getvalue(), "chats.zip"),
    ):
        report = import_transcripts(source, dataset=dataset, name=name, on_conflict="update")
        assert [(i.spec, i.action) for i in report.items] in (
            [("openchatml-json", Action.CREATED)],
            [("openchatml-json", Action.SKIPPED)],
        ), source

    transcripts = Transcript.objects.all()
    assert all(len(t.canonical().messages) == 2 for t in transcripts)
    assert {t.source_text for t in transcripts} == {JSON_LINES_TRANSCRIPT.decode()}


class NamedStdin(io.BytesIO):
    name = "<stdin>"  # what sys.stdin.buffer is called


def test_piped_transcripts_get_no_id_from_the_stream_name(dataset):
    # Every transcript piped in would otherwise be "<stdin>", and overwrite the one before.
    import_transcripts(NamedStdin(conversation().encode()), dataset=dataset)
    report = import_transcripts(NamedStdin(conversation("chatml").encode()), dataset=dataset)

    assert report.items[0].action == Action.CREATED and report.items[0].external_id == ""
    assert Transcript.objects.count() == 2


def test_an_empty_file_fails_and_an_empty_source_is_an_error(dataset, tmp_path):
    with pytest.raises(ImportRejected) as caught:
        import_transcripts(b"  \n", dataset=dataset, name="blank.txt")
    assert caught.value.report.items[0].message == "the file is empty"

    (tmp_path / ".hidden").write_text(conversation())
    for source, name in ((tmp_path, None), (b"\n\n", "x.jsonl")):
        with pytest.raises(InvalidContent, match="No transcript found") as caught:
            import_transcripts(source, dataset=dataset, name=name)
        assert caught.value.code == "no-transcripts"
    assert nothing_written()


def test_a_rejected_report_gives_every_item_an_action(dataset):
    data = jsonl(envelope("a"), "{oops", envelope("c"), envelope("d"))
    with pytest.raises(ImportRejected) as caught:
        import_transcripts(data, dataset=dataset, name="x.jsonl")

    report = caught.value.report
    assert [i.action for i in report.items] == ["skipped", "failed", "skipped", "skipped"]
    assert report.counts == {"created": 0, "updated": 0, "skipped": 3, "failed": 1}
    assert (
        report.summary() == "nothing imported: 1 of 4 item(s) could not be read (all or nothing)."
    )


def test_an_envelope_with_a_spec_and_an_empty_body_is_an_empty_transcript(dataset):
    # What an export writes when a spec drops every message (calls and replies in ChatML).
    data = jsonl(
        json.dumps({"id": "a", "spec": "chatml", "text": ""}),
        json.dumps({"id": "b", "spec": "chatml-json", "document": []}),
    )
    report = import_transcripts(data, dataset=dataset, name="x.jsonl")

    assert report.counts["created"] == 2
    assert all(not t.canonical().messages for t in Transcript.objects.all())


def test_a_review_state_is_carried_over_by_curators_only(dataset, curator, annotator):
    line = envelope("a", status="approved")
    import_transcripts(jsonl(line), dataset=dataset, author=curator, name="x.jsonl")
    import_transcripts(jsonl(envelope("b", status="approved")), dataset=dataset, name="x.jsonl")
    import_transcripts(
        jsonl(envelope("c", status="approved")), dataset=dataset, author=annotator, name="x.jsonl"
    )
    statuses = dict(Transcript.objects.values_list("external_id", "status"))
    assert statuses == {"a": "approved", "b": "approved", "c": "draft"}

    with pytest.raises(ImportRejected) as caught:
        import_transcripts(jsonl(envelope("d", status="done")), dataset=dataset, name="x.jsonl")
    assert '"status" must be one of' in caught.value.report.items[0].message


def test_a_zip_member_that_cannot_be_read_is_a_failed_item(dataset):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("good.txt", conversation())
        archive.writestr("bad.txt", conversation("chatml"))
    data = buffer.getvalue()
    stored = conversation("chatml").encode()
    data = data.replace(stored, stored[:-2] + b"XX", 1)  # the CRC no longer matches

    report = import_transcripts(data, dataset=dataset, name="x.zip", partial=True)

    assert [(i.location, i.action) for i in report.items] == [
        ("x.zip:bad.txt", Action.FAILED),
        ("x.zip:good.txt", Action.CREATED),
    ]
    assert "cannot read this file" in report.items[0].message


def test_a_nul_in_the_text_is_reported_as_in_the_text(dataset):
    # The default title is the first user line, which holds the same NUL.
    line = json.dumps({"id": "n", "spec": "chatml", "text": "<|start|>user<|message|>a\0b"})
    with pytest.raises(ImportRejected) as caught:
        import_transcripts(jsonl(line), dataset=dataset, name="x.jsonl")
    assert caught.value.report.items[0].message == "the source text contains a NUL character."


def test_a_json_array_of_conversations_is_a_dataset(dataset):
    """ShareGPT-style dataset files hold one JSON array of transcripts, not JSON Lines."""
    records = [
        {
            "id": f"c{i}",
            "conversations": [
                {"from": "human", "value": f"q{i}"},
                {"from": "gpt", "value": f"a{i}"},
            ],
        }
        for i in range(3)
    ] + [{"messages": [{"role": "user", "content": "no id"}]}]
    data = json.dumps(records, indent=2).encode()
    report = import_transcripts(data, dataset=dataset, name="train.json")
    assert report.counts["created"] == 4
    assert [item.location for item in report.items] == [f"train.json[{i}]" for i in range(4)]
    specs = dict(Transcript.objects.filter(dataset=dataset).values_list("external_id", "spec"))
    assert specs == {"c0": "sharegpt", "c1": "sharegpt", "c2": "sharegpt", "": "openai-messages"}
    again = import_transcripts(data, dataset=dataset, name="train.json", on_conflict="skip")
    assert again.counts["skipped"] == 3 and again.counts["created"] == 1  # the one without an id


def test_a_json_array_of_messages_stays_one_transcript(dataset):
    thread = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    report = import_transcripts(json.dumps(thread).encode(), dataset=dataset, name="thread.json")
    assert report.counts["created"] == 1
    assert Transcript.objects.get().messages.count() == 2


@pytest.mark.parametrize("name", ["chats.jsonl", None], ids=["named", "unnamed"])
def test_a_jsonl_file_starting_with_a_byte_order_mark_is_read_whole(dataset, name):
    # Editors on Windows write one; its first line failed as "not valid JSON".
    data = codecs.BOM_UTF8 + jsonl(envelope("a"), envelope("b"))
    report = import_transcripts(data, dataset=dataset, name=name)
    assert report.counts["created"] == 2
    assert report.bytes_read == len(data)


def test_a_byte_order_mark_inside_a_jsonl_file_is_skipped_too(dataset):
    # Files joined with ``cat``: each one's BOM starts a line. The line failed as not JSON.
    data = jsonl(envelope("a")) + codecs.BOM_UTF8 + jsonl(envelope("b")) + codecs.BOM_UTF8 + b"\n"
    report = import_transcripts(data, dataset=dataset, name="joined.jsonl")
    assert [(i.location, i.action) for i in report.items] == [
        ("joined.jsonl:1", Action.CREATED),
        ("joined.jsonl:2", Action.CREATED),
    ]


# --- the envelope as ``editor.formats.jsonl`` reads it (the rules ``ocm`` had) -------------


def test_a_jsonl_line_holding_a_json_array_is_a_bare_document(dataset):
    thread = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    tokens = json.loads(conversation("chatml-json"))
    report = import_transcripts(
        jsonl(json.dumps(thread), json.dumps(tokens)), dataset=dataset, name="x.jsonl"
    )
    assert [(i.action, i.spec) for i in report.items] == [
        (Action.CREATED, "openai-messages"),
        (Action.CREATED, "chatml-json"),
    ]
    assert [t.messages.count() for t in Transcript.objects.order_by("pk")] == [2, 4]


def test_null_envelope_fields_are_absent(dataset):
    line = {"id": None, "title": None, "metadata": None, "status": None, "spec": None}
    data = jsonl(
        json.dumps({**line, "text": conversation()}),
        json.dumps({**line, "id": "", "text": conversation(turns=3)}),
    )
    report = import_transcripts(data, dataset=dataset, name="x.jsonl")
    assert report.counts["created"] == 2
    assert {(t.external_id, t.title, t.status) for t in Transcript.objects.all()} == {
        ("", "Question 0?", "draft")
    }


def test_the_envelopes_spec_wins_over_the_imports(dataset):
    # Was: ``ocm validate --spec`` read every envelope in the spec it was given.
    data = jsonl(
        envelope("a", conversation("chatml"), spec="chatml"),
        envelope("b", conversation("openchatml-2.0"), spec=None),  # detected: harmony
    )
    report = import_transcripts(data, dataset=dataset, name="x.jsonl", spec="openchatml-2.0")
    assert [(i.action, i.spec) for i in report.items] == [
        (Action.CREATED, "chatml"),
        (Action.CREATED, "openchatml-2.0"),
    ]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ('{"id": "x", "text": "a", "document": []}', "invalid-envelope"),
        ('{"id": "x", "text": "<|im_start|>user\\nhi<|im_end|>", "title": 3}', "invalid-envelope"),
        ('{"id": "x", "text": "<|im_start|>user\\nhi<|im_end|>", "spec": "nope"}', "unknown-spec"),
        ("7", "invalid-envelope"),
        ('{"id": "x", "text": ', "invalid-json"),
    ],
)
def test_an_unreadable_line_has_the_readers_code(dataset, line, code):
    report = import_transcripts(jsonl(line), dataset=dataset, name="x.jsonl", partial=True)
    assert (report.items[0].action, report.items[0].code) == (Action.FAILED, code)


@pytest.mark.parametrize("count, refreshed", [(2, False), (3, True)])
def test_a_large_import_refreshes_the_planners_statistics(dataset, monkeypatch, count, refreshed):
    """Searches right after a big import used the GIN index only once PostgreSQL had
    statistics for the new rows (docs/performance.md): the import asks for them."""
    monkeypatch.setattr("editor.importing.run.LARGE_IMPORT", 3)
    data = jsonl(*(envelope(f"t{n}") for n in range(count)))
    with CaptureQueriesContext(connection) as seen:
        import_transcripts(data, dataset=dataset, name="many.jsonl")
    statements = [q["sql"] for q in seen.captured_queries]
    asked = [sql for sql in statements if sql.startswith(("ANALYZE", "PRAGMA optimize"))]
    assert bool(asked) is refreshed
    if refreshed and connection.vendor == "postgresql":
        assert asked == ['ANALYZE "editor_transcript", "editor_message"']


def test_statistics_that_cannot_be_refreshed_do_not_fail_the_import(dataset, monkeypatch):
    from django.db import OperationalError

    def busy(*args, **kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr("editor.importing.run.LARGE_IMPORT", 1)
    monkeypatch.setattr(
        "editor.db.planner_stats.connection", SimpleNamespace(vendor="sqlite", cursor=busy)
    )
    report = import_transcripts(jsonl(envelope("a")), dataset=dataset, name="one.jsonl")
    assert report.counts["created"] == 1
    assert Transcript.objects.filter(external_id="a").exists()
