"""The import_transcripts and export_dataset management commands, and the admin pages."""

from __future__ import annotations

import io
import json
import sys

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from editor.models import Dataset, ImportTask, Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import conversation, demo_texts

pytestmark = pytest.mark.django_db


def run(command: str, *args, **options) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(command, *args, stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def write_jsonl(path, *lines: dict) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_import_creates_the_dataset_and_reports(tmp_path):
    source = tmp_path / "chats.jsonl"
    write_jsonl(
        source, {"id": "a", "text": conversation()}, {"id": "b", "text": conversation("chatml")}
    )

    out, err = run("import_transcripts", str(source), "--dataset", "new-set")

    assert "Created dataset 'new-set'" in out
    assert "2 created" in out
    assert "items read (100%)" in err
    assert Transcript.objects.filter(dataset__slug="new-set").count() == 2


def test_a_rejected_import_fails_and_writes_nothing(tmp_path):
    source = tmp_path / "chats.jsonl"
    source.write_text(json.dumps({"id": "a", "text": conversation()}) + "\n{oops\n")
    report = tmp_path / "report.json"

    with pytest.raises(CommandError, match="nothing imported"):
        run("import_transcripts", str(source), "--dataset", "s", "--report", str(report))

    assert not Dataset.objects.exists()
    assert json.loads(report.read_text())["items"][1]["location"] == "chats.jsonl:2"


def test_partial_import_from_stdin(monkeypatch):
    data = json.dumps({"id": "a", "text": conversation()}) + "\nnot json\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))

    out, err = run("import_transcripts", "-", "--dataset", "s", "--partial")

    assert "1 created" in out and "1 failed" in out
    assert "<stdin>:2: The line is not valid JSON: Expecting value (column 1)" in err


def test_import_skips_existing_ids_when_asked(tmp_path):
    source = tmp_path / "one.txt"
    source.write_text(conversation())
    run("import_transcripts", str(source), "--dataset", "s")
    source.write_text(conversation(turns=3))

    out, _ = run("import_transcripts", str(source), "--dataset", "s", "--on-conflict", "skip")

    assert "1 skipped" in out
    assert Transcript.objects.get().source_text == conversation()


def test_export_to_stdout_and_file(tmp_path, dataset, curator):
    create_transcript(dataset, text=demo_texts()["openchatml-2.2"], author=curator, external_id="w")

    out, err = run("export_dataset", dataset.slug)
    assert json.loads(out)["text"] == demo_texts()["openchatml-2.2"]
    assert "1 transcript(s) exported" in err

    target = tmp_path / "out.jsonl"
    _, err = run("export_dataset", dataset.slug, "--spec", "chatml", "--out", str(target))
    assert json.loads(target.read_text())["spec"] == "chatml"
    assert "loss(es) in conversion" in err
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temporary file left


def test_export_then_import_through_the_commands(tmp_path, dataset, curator):
    for spec in ("harmony", "sharegpt", "openchatml-0.1"):
        create_transcript(
            dataset, text=demo_texts()[spec], spec=spec, author=curator, external_id=spec
        )
    exported = tmp_path / "export.jsonl"
    run("export_dataset", dataset.slug, "--out", str(exported))

    run("import_transcripts", str(exported), "--dataset", "copy")

    copy = {
        t.external_id: t.canonical().to_dict()
        for t in Transcript.objects.filter(dataset__slug="copy")
    }
    original = {
        t.external_id: t.canonical().to_dict() for t in Transcript.objects.filter(dataset=dataset)
    }
    assert copy == original


def test_export_messages_format_with_status_filter(dataset, curator):
    create_transcript(dataset, text=conversation(), author=curator)
    out, _ = run("export_dataset", dataset.slug, "--format", "messages", "--status", "draft")
    assert json.loads(out)["messages"][0] == {"role": "user", "content": "Question 0?"}
    out, _ = run("export_dataset", dataset.slug, "--status", "approved")
    assert out == ""


def test_export_of_an_unknown_dataset_fails_clearly():
    with pytest.raises(CommandError, match="No dataset with slug 'nope'"):
        run("export_dataset", "nope")


def test_admin_pages_render(admin_client, dataset, curator):
    transcript = create_transcript(dataset, text=conversation(), author=curator)
    revision = transcript.revisions.get()
    task = ImportTask.objects.create(dataset=dataset, created_by=curator, source_name="a.jsonl")
    for url in (
        reverse("admin:editor_dataset_changelist"),
        reverse("admin:editor_dataset_change", args=[dataset.pk]),
        reverse("admin:editor_transcript_changelist"),
        reverse("admin:editor_transcript_change", args=[transcript.pk]),
        reverse("admin:editor_revision_change", args=[revision.pk]),
        reverse("admin:editor_membership_changelist"),
        reverse("admin:editor_importtask_changelist"),
        reverse("admin:editor_importtask_change", args=[task.pk]),
    ):
        assert admin_client.get(url).status_code == 200, url


# --- audit regressions -----------------------------------------------------------------------


def test_import_errors_are_clear_and_leave_no_dataset(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "blank.txt").write_text("")
    cases = [
        ((str(tmp_path / "empty"), "--dataset", "s"), "No transcript found in"),
        ((str(tmp_path / "blank.txt"), "--dataset", "s"), "nothing imported: 1 of 1"),
        ((str(tmp_path / "missing.txt"), "--dataset", "s"), "neither a file nor a folder"),
        ((str(tmp_path / "blank.txt"), "--dataset", "no spaces"), "not a valid dataset slug"),
        ((str(tmp_path / "blank.txt"), "--dataset", "../up"), "not a valid dataset slug"),
        ((str(tmp_path / "blank.txt"), "--dataset", "x" * 101), "longer than 100"),
    ]
    for args, message in cases:
        with pytest.raises(CommandError, match=message):
            run("import_transcripts", *args)
    assert not Dataset.objects.exists()


def test_a_dataset_named_after_a_spec_version_gets_its_pages(tmp_path, admin_client):
    sample = tmp_path / "chat.txt"
    sample.write_text("<|start|>user<|message|>hi<|end|>", encoding="utf-8")
    run("import_transcripts", str(sample), "--dataset", "openchatml-2.2")
    assert admin_client.get("/").status_code == 200
    assert admin_client.get("/datasets/openchatml-2.2/").status_code == 200


def test_piped_transcripts_are_each_created(monkeypatch):
    for text in (conversation(), conversation("chatml")):
        stdin = io.TextIOWrapper(io.BytesIO(text.encode()))
        stdin.buffer.name = "<stdin>"  # as the real one is called
        monkeypatch.setattr(sys, "stdin", stdin)
        out, _ = run("import_transcripts", "-", "--dataset", "s")
        assert "1 created" in out
    assert Transcript.objects.count() == 2


def test_export_output_errors_are_clear(tmp_path, dataset, curator):
    create_transcript(dataset, text=conversation(), author=curator)
    for out, message in (
        (tmp_path, "is a directory"),
        (tmp_path / "missing" / "x.jsonl", "Cannot write"),
    ):
        with pytest.raises(CommandError, match=message):
            run("export_dataset", dataset.slug, "--out", str(out))
    with pytest.raises(CommandError, match="takes no --spec"):
        run("export_dataset", dataset.slug, "--format", "messages", "--spec", "chatml")
    assert list(tmp_path.iterdir()) == []


def test_an_exported_file_is_not_private(tmp_path, dataset, curator):
    create_transcript(dataset, text=conversation(), author=curator)
    target = tmp_path / "out.jsonl"
    run("export_dataset", dataset.slug, "--out", str(target))
    assert target.stat().st_mode & 0o044  # mkstemp alone would leave it 0600


@pytest.mark.parametrize("spec", [None, "openchatml-2.2", "openchatml-json"])
def test_export_import_export_gives_identical_lines(tmp_path, dataset, curator, spec):
    for index, sample in enumerate(demo_texts()):
        transcript = create_transcript(
            dataset,
            text=demo_texts()[sample],
            spec=sample,
            author=curator,
            title=f"Sample {sample}",
            metadata={"n": index},
            external_id=sample,
        )
        if index % 2:
            Transcript.objects.filter(pk=transcript.pk).update(status="approved")
    spec_option = ("--spec", spec) if spec else ()
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"

    run("export_dataset", dataset.slug, *spec_option, "--out", str(first))
    run("import_transcripts", str(first), "--dataset", "copy")
    run("export_dataset", "copy", *spec_option, "--out", str(again))

    assert again.read_text() == first.read_text()
    assert '"status": "approved"' in first.read_text()


def test_the_demo_gets_the_named_login_as_its_curator_once(django_user_model):
    django_user_model.objects.create_superuser("admin", password="x")
    call_command("load_demo", "--curator", "admin", verbosity=0)
    call_command("load_demo", "--curator", "admin", verbosity=0)
    demo = Dataset.objects.get(slug="demo")
    assert list(demo.memberships.values_list("user__username", "role")) == [("admin", "curator")]
    assert demo.membership_log.count() == 1


def test_the_demo_refuses_a_curator_who_may_not_curate(django_user_model):
    django_user_model.objects.create_user("someone", password="x")
    with pytest.raises(CommandError, match="someone cannot be made curator"):
        call_command("load_demo", "--curator", "someone", verbosity=0)
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("load_demo", "--curator", "nobody", verbosity=0)
