"""The import helper process (``editor.importing.preparing``): a large import parses and
checks its items there while it writes them here. Whatever prepares the items, an import
writes the same rows and reports the same outcome; a helper that dies costs the import
nothing."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from editor import helper_process
from editor.importing import ImportRejected, import_transcripts, preparing
from editor.models import Dataset, Message, Transcript
from tests.editor.samples import conversation, demo_texts, readable_specs

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_helper_yet():
    """Each test starts without a helper, and leaves none behind."""
    preparing.stop()
    yield
    preparing.stop()


@pytest.fixture
def helped(settings):
    """Every import with a known size prepares its items in the helper."""
    settings.OCM_IMPORT_HELPER = True
    settings.OCM_IMPORT_HELPER_MIN_BYTES = 0


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of three items, two out at a time: a small import keeps several in flight."""
    monkeypatch.setattr(preparing, "CHUNK_ITEMS", 3)
    monkeypatch.setattr(preparing, "IN_FLIGHT_CHUNKS", 2)


def mixed_source() -> bytes:
    """Every outcome an item can have: readable items of every spec, one with parse errors,
    unreadable lines, an id seen twice, text the database cannot store, empty transcripts, a
    preference row."""
    lines = [
        json.dumps({"id": f"demo-{spec}", "spec": spec, "text": text})
        for spec, text in demo_texts().items()
        if spec in readable_specs()
    ]
    lines += [
        json.dumps({"id": "broken", "spec": "openchatml-2.2", "text": "<|im_start|>user\nHi"}),
        "{not json",
        json.dumps({"id": "no-spec", "text": "plain words, no markup"}),
        json.dumps({"id": "twice", "spec": "openchatml-2.2", "text": conversation()}),
        json.dumps({"id": "twice", "spec": "openchatml-2.2", "text": conversation(turns=3)}),
        json.dumps({"id": "nul", "spec": "chatml", "text": "<|im_start|>user\nA\x00B<|im_end|>\n"}),
        json.dumps({"id": "titled", "title": "Given", "text": conversation("chatml", turns=4)}),
    ]
    lines += [
        json.dumps({"id": f"bulk-{n}", "spec": "openchatml-2.2", "text": conversation(turns=n % 5)})
        for n in range(20)
    ]
    # Last: a file read as preference rows from its first one on.
    lines.append(
        json.dumps(
            {
                "prompt": [{"role": "user", "content": "Question?"}],
                "chosen": [{"role": "assistant", "content": "Good answer."}],
                "rejected": [{"role": "assistant", "content": "Bad answer."}],
            }
        )
    )
    return ("\n".join(lines) + "\n").encode()


def stored(dataset: Dataset) -> dict:
    """Everything the import wrote into ``dataset``, by external id (or title)."""
    transcripts = {}
    for transcript in Transcript.all_objects.filter(dataset=dataset).order_by("pk"):
        key = transcript.external_id or transcript.title
        transcripts[key] = {
            "fields": {
                name: getattr(transcript, name)
                for name in (
                    "title",
                    "spec",
                    "status",
                    "source_text",
                    "source_is_exact",
                    "header",
                    "attrs",
                    "diagnostics",
                    "error_count",
                    "warning_count",
                    "message_count",
                    "metadata",
                )
            },
            "messages": list(
                Message.objects.filter(transcript=transcript)
                .order_by("index")
                .values_list(
                    "index",
                    "role",
                    "stored_content",
                    "content_start",
                    "content_end",
                    "content_escaped",
                    "channel",
                    "recipient",
                    "name",
                    "call_id",
                    "content_type",
                    "constrain",
                    "end",
                    "attrs",
                    "end_user_text",
                )
            ),
            "canonical": transcript.canonical(),
            "pairs": list(transcript.preference_pairs.values_list("message_index", flat=True)),
        }
    return transcripts


def report_of(report) -> list[dict]:
    return [
        {key: value for key, value in item.items() if key != "transcript_id"}
        for item in report.to_dict()["items"]
    ]


def import_into(slug: str, source: bytes, **options):
    dataset = Dataset.objects.create(name=slug, slug=slug)
    return dataset, import_transcripts(source, dataset=dataset, name="mixed.jsonl", **options)


def test_the_helper_writes_what_one_process_writes(settings, small_chunks):
    source = mixed_source()
    settings.OCM_IMPORT_HELPER = False
    alone, alone_report = import_into("alone", source, partial=True)
    settings.OCM_IMPORT_HELPER_MIN_BYTES = 0
    settings.OCM_IMPORT_HELPER = True
    helped_dataset, helped_report = import_into("helped", source, partial=True)
    assert preparing._helper_pool is not None  # the helper did the work
    assert report_of(helped_report) == report_of(alone_report)
    assert helped_report.counts["failed"] == 5 and helped_report.counts["created"] == 34
    assert stored(helped_dataset) == stored(alone)
    # The search index was written from the helper's rows.
    found = [
        Message.objects.filter(transcript__dataset=dataset).containing("answer", True).count()
        for dataset in (alone, helped_dataset)
    ]
    assert found[0] == found[1] >= 40


def test_the_lines_of_a_helped_import_are_decoded_in_the_helper(helped, monkeypatch):
    """The process reading the source only splits it into lines (a preference row's keys
    aside): decoding each line is the helper's work, with its parse."""
    from editor.formats import jsonl

    decoded_here = []
    read_record = jsonl.read_record
    monkeypatch.setattr(
        jsonl, "read_record", lambda *args, **kw: decoded_here.append(1) or read_record(*args, **kw)
    )
    source = "".join(
        json.dumps({"id": f"t{n}", "spec": "openchatml-2.2", "text": conversation()}) + "\n"
        for n in range(12)
    ).encode()

    _, report = import_into("lines", source)

    assert decoded_here == []
    assert report.counts["created"] == 12
    assert [item.external_id for item in report.items] == [f"t{n}" for n in range(12)]


def test_an_all_or_nothing_import_helped_reports_every_bad_item_and_writes_nothing(
    helped, small_chunks
):
    dataset = Dataset.objects.create(name="d", slug="d")
    with pytest.raises(ImportRejected) as rejected:
        import_transcripts(mixed_source(), dataset=dataset, name="mixed.jsonl")
    failed = [item for item in rejected.value.report.items if item.action == "failed"]
    assert {item.code for item in failed} >= {"duplicate-external-id", "no-messages"}
    assert not Transcript.all_objects.filter(dataset=dataset).exists()


def test_the_helper_checks_with_the_settings_of_the_import(helped, settings):
    settings.OCM_MAX_TRANSCRIPT_MESSAGES = 3
    dataset = Dataset.objects.create(name="d", slug="d")
    source = "".join(
        json.dumps({"id": f"t{turns}", "spec": "chatml", "text": conversation("chatml", turns)})
        + "\n"
        for turns in (1, 2)
    ).encode()
    report = import_transcripts(source, dataset=dataset, name="t.jsonl", partial=True)
    assert [(item.external_id, item.action, item.code) for item in report.items] == [
        ("t1", "created", ""),
        ("t2", "failed", "transcript-too-large"),
    ]


def test_an_import_goes_on_when_its_helper_dies(helped, small_chunks, caplog):
    preparing.warm_up()
    pool = preparing._helper()
    pool.submit(int).result()  # started
    for pid in list(pool._processes):
        os.kill(pid, signal.SIGKILL)
    dataset = Dataset.objects.create(name="d", slug="d")
    with caplog.at_level(logging.WARNING, logger="editor.importing.preparing"):
        report = import_transcripts(mixed_source(), dataset=dataset, name="m.jsonl", partial=True)
    assert report.counts["created"] == 34
    assert "helper process died" in caplog.text
    # A new helper took over.
    again = Dataset.objects.create(name="e", slug="e")
    import_transcripts(mixed_source(), dataset=again, name="m.jsonl", partial=True)
    assert preparing._helper_pool is not None and preparing._helper_pool is not pool
    assert Transcript.objects.filter(dataset=again).count() == report.counts["created"]


def test_a_helper_dying_mid_import_is_replaced_and_nothing_is_lost(helped, small_chunks, caplog):
    killed = []

    def kill_the_helper_once(report):
        if not killed and preparing._helper_pool is not None:
            pool = preparing._helper_pool
            for pid in list(pool._processes):
                os.kill(pid, signal.SIGKILL)
            killed.append(pool)

    dataset = Dataset.objects.create(name="d", slug="d")
    with caplog.at_level(logging.WARNING, logger="editor.importing.preparing"):
        report = import_transcripts(
            mixed_source(),
            dataset=dataset,
            name="m.jsonl",
            partial=True,
            batch_size=4,
            progress=kill_the_helper_once,
        )
    assert killed  # with chunks out on it
    assert (report.counts["created"], report.counts["failed"]) == (34, 5)
    assert Transcript.objects.filter(dataset=dataset).count() == 34
    assert caplog.text.count("helper process died") == 1  # one death, one replacement
    assert preparing._helper_pool is not None and preparing._helper_pool is not killed[0]


def test_updates_and_unchanged_items_from_the_helper(helped, small_chunks):
    dataset = Dataset.objects.create(name="d", slug="d")
    first = "".join(
        json.dumps({"id": f"t{n}", "spec": "openchatml-2.2", "text": conversation(turns=2)}) + "\n"
        for n in range(5)
    ).encode()
    import_transcripts(first, dataset=dataset, name="t.jsonl")
    second = "".join(
        json.dumps({"id": f"t{n}", "spec": "openchatml-2.2", "text": conversation(turns=2 + n % 2)})
        + "\n"
        for n in range(5)
    ).encode()
    report = import_transcripts(second, dataset=dataset, name="t.jsonl")
    assert [item.action for item in report.items] == [
        "skipped",
        "updated",
        "skipped",
        "updated",
        "skipped",
    ]
    assert sorted(
        Transcript.objects.filter(dataset=dataset).values_list("external_id", "message_count")
    ) == [("t0", 4), ("t1", 6), ("t2", 4), ("t3", 6), ("t4", 4)]
    assert Transcript.objects.filter(dataset=dataset, version=2).count() == 2


@pytest.mark.parametrize(
    ("size", "counts_tokens", "expected"),
    [(None, False, False), (10, False, False), (10**7, False, True), (10**7, True, False)],
)
def test_which_imports_the_helper_prepares(settings, size, counts_tokens, expected):
    settings.OCM_IMPORT_HELPER = True
    settings.OCM_IMPORT_HELPER_MIN_BYTES = 4 * 1024**2
    assert preparing.helps(size, counts_tokens) is expected
    settings.OCM_IMPORT_HELPER = False
    assert preparing.helps(size, counts_tokens) is False


PARENT = """
import os, time, django
django.setup()
from editor.importing import preparing
preparing.warm_up()
pool = preparing._helper()
pool.submit(int).result()
print(*pool._processes, flush=True)
time.sleep(60)
"""


def test_a_helper_whose_parent_was_killed_ends(tmp_path):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "ocm_site.settings"},
    )
    try:
        helper = int(parent.stdout.readline())
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10 * helper_process.PARENT_CHECK_SECONDS
        while _alive(helper) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(helper)
    finally:
        parent.kill()
        parent.stdout.close()


def _alive(pid: int) -> bool:
    # The helper is the killed parent's child: once it ends, nobody waits for it, and it is
    # gone from /proc or left a zombie (reaped by init).
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
