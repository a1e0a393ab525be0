"""Token counts of stored transcripts (editor.tokens, editor.tokenizing): counted on every
save and import, recounted when the dataset's tokenizer changes, sorted and filtered on."""

from __future__ import annotations

import io
import json
import re

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from editor import formats, tokenizing, tokens
from editor.errors import InvalidTokenizer, NotAllowed, TokenizerNotSet
from editor.formats import tokens as core
from editor.importing.tasks import start_import_task
from editor.listing import TranscriptList
from editor.models import DatasetTokenizer, Transcript, TranscriptFilter
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript
from tests.editor.samples import conversation, demo_texts

pytestmark = pytest.mark.django_db

SPEC = "openchatml-2.2"


def fresh(transcript: Transcript) -> Transcript:
    return Transcript.all_objects.get(pk=transcript.pk)


def expected_total(text: str, spec: str, name: str = "cl100k_base") -> int:
    transcript = formats.parse(text, spec=spec).transcript
    return core.token_counts(transcript, core.tiktoken_encoding(name)).total


@pytest.fixture
def counted(dataset, curator, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        tokenizing.set_encoding(dataset, curator, encoding="cl100k_base", context_length=4096)
    return dataset


def tiny_tokenizer_json() -> str:
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["[UNK]", "<|start|>", "<|message|>", "<|end|>", "<|channel|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(list(demo_texts().values()), trainer)
    return tokenizer.to_str()


def test_no_tokenizer_no_counts(dataset, annotator):
    made = create_transcript(dataset, text=conversation(), spec=SPEC, author=annotator)
    assert (made.token_count, made.token_counts) == (None, None)


def test_create_counts_per_message_channel_and_total(counted, annotator):
    text = demo_texts()[SPEC]
    made = fresh(create_transcript(counted, text=text, spec=SPEC, author=annotator))
    assert made.token_count == expected_total(text, SPEC)
    stored = made.token_counts
    assert stored["tokenizer"] == "tiktoken:cl100k_base"
    assert stored["version"] == made.version == 1
    assert len(stored["messages"]) == made.message_count
    assert sum(stored["messages"]) + stored["framing"] == stored["total"] == made.token_count
    assert sum(stored["channels"].values()) == sum(stored["messages"])
    assert "analysis" in stored["channels"]


def test_a_save_updates_the_counts(counted, annotator):
    made = create_transcript(counted, text=conversation(turns=1), spec=SPEC, author=annotator)
    longer = conversation(turns=6)
    saved = save_transcript(made, expected_version=made.version, author=annotator, text=longer)
    saved = fresh(saved)
    assert saved.token_count == expected_total(longer, SPEC) > made.token_count
    assert saved.token_counts["version"] == saved.version == 2
    assert tokens.is_current(saved, "tiktoken:cl100k_base")
    # A save that leaves the content alone keeps the counts, under the new version.
    renamed = fresh(
        save_transcript(saved, expected_version=saved.version, author=annotator, title="New")
    )
    assert renamed.token_count == saved.token_count
    assert tokens.is_current(renamed, "tiktoken:cl100k_base")


def test_an_import_counts_on_the_worker(counted, annotator, django_capture_on_commit_callbacks):
    lines = "\n".join(
        json.dumps({"spec": SPEC, "text": conversation(turns=n), "title": f"t{n}"})
        for n in (1, 2, 3)
    )
    with django_capture_on_commit_callbacks(execute=True):
        task = start_import_task(
            dataset=counted, author=annotator, upload=io.BytesIO(lines.encode()), name="x.jsonl"
        )
    task.refresh_from_db()
    assert task.status == "succeeded", task.error
    rows = Transcript.objects.filter(dataset=counted).order_by("title")
    assert [t.title for t in rows] == ["t1", "t2", "t3"]
    for n, row in zip((1, 2, 3), rows, strict=True):
        assert row.token_count == expected_total(conversation(turns=n), SPEC)
        assert tokens.is_current(row, "tiktoken:cl100k_base")


def test_a_tokenizer_change_recounts_the_dataset(
    dataset, curator, annotator, django_capture_on_commit_callbacks
):
    made = [
        create_transcript(dataset, text=conversation(turns=n), spec=SPEC, author=annotator)
        for n in (1, 4)
    ]
    assert all(fresh(t).token_count is None for t in made)
    with django_capture_on_commit_callbacks(execute=True):
        tokenizing.set_encoding(dataset, curator, encoding="cl100k_base")
    cl100k = [fresh(t).token_count for t in made]
    assert cl100k == [expected_total(conversation(turns=n), SPEC) for n in (1, 4)]
    with django_capture_on_commit_callbacks(execute=True):
        setting = tokenizing.set_tokenizer_json(
            dataset, curator, data=tiny_tokenizer_json().encode(), name="tiny.json"
        )
    tiny = core.huggingface_tokenizer(setting.tokenizer_json)
    for transcript, n in zip(made, (1, 4), strict=True):
        row = fresh(transcript)
        assert row.token_counts["tokenizer"] == setting.key
        assert row.token_count == tiny.count(conversation(turns=n))
    assert [fresh(t).token_count for t in made] != cl100k
    with django_capture_on_commit_callbacks(execute=True):
        tokenizing.clear_tokenizer(dataset, curator)
    assert all(fresh(t).token_counts is None for t in made)
    with pytest.raises(TokenizerNotSet):
        tokenizing.clear_tokenizer(dataset, curator)


def test_only_curators_set_the_tokenizer(dataset, annotator, viewer):
    for user in (annotator, viewer):
        with pytest.raises(NotAllowed):
            tokenizing.set_encoding(dataset, user, encoding="cl100k_base")
    assert not DatasetTokenizer.objects.filter(dataset=dataset).exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{}", "not a readable tokenizer.json"),
        (b"\xff\xfe", "not UTF-8"),
        (b"   ", "empty"),
    ],
)
def test_a_bad_tokenizer_json_is_refused(dataset, curator, data, message):
    with pytest.raises(InvalidTokenizer, match=message):
        tokenizing.set_tokenizer_json(dataset, curator, data=data)


def test_bounds(dataset, curator, monkeypatch):
    monkeypatch.setattr(tokenizing, "MAX_TOKENIZER_JSON_BYTES", 10)
    with pytest.raises(InvalidTokenizer, match="at most 10"):
        tokenizing.set_tokenizer_json(dataset, curator, data=b"x" * 11)
    with pytest.raises(InvalidTokenizer, match="Unknown tiktoken encoding"):
        tokenizing.set_encoding(dataset, curator, encoding="gpt2")
    for bad in (0, -3, "many", True, 10**9):
        with pytest.raises(InvalidTokenizer, match="context length"):
            tokenizing.set_encoding(dataset, curator, encoding="cl100k_base", context_length=bad)


def test_an_unavailable_encoding_is_named_and_explained(
    dataset, curator, annotator, tmp_path, monkeypatch
):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(core.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(core, "_encodings", {})
    setting = tokenizing.set_encoding(dataset, curator, encoding="o200k_harmony")
    problem = tokens.availability(setting)
    assert "o200k_base.tiktoken" in problem and "OCM_TIKTOKEN_DIR" in problem
    made = create_transcript(dataset, text=conversation(), spec=SPEC, author=annotator)
    assert made.token_count is None  # the save is not refused for want of a count


def test_sort_and_filter_over_n_tokens(counted, annotator, curator):
    made = {
        n: create_transcript(
            counted, text=conversation(turns=n), spec=SPEC, author=annotator, title=f"t{n}"
        )
        for n in (1, 3, 8)
    }
    middle = fresh(made[3]).token_count

    def titles(sort="id", **wanted):
        listed = TranscriptList.of(counted, curator, TranscriptFilter(**wanted), sort=sort)
        return [t.title for t in listed.first_rows(100)]

    assert titles(tokens_over=middle) == ["t8"]
    assert titles(tokens_over=middle - 1) == ["t3", "t8"]
    assert titles(tokens_over=0, sort="id") == ["t1", "t3", "t8"]
    assert titles(sort="-tokens") == ["t8", "t3", "t1"]
    assert titles(sort="tokens") == ["t1", "t3", "t8"]


def test_the_transcript_page_shows_each_messages_tokens_and_the_budget(client, counted, annotator):
    text = conversation(turns=2)
    made = create_transcript(counted, text=text, spec=SPEC, author=annotator)
    client.force_login(annotator)
    page = client.get(f"/transcripts/{made.pk}/").content.decode()
    stored = fresh(made).token_counts
    shown = {
        int(index): int(n)
        for index, n in re.findall(r'data-index="(\d+)"[^>]*?data-tokens="(\d+)"', page)
    }
    assert shown == dict(enumerate(stored["messages"]))
    assert page.count("data-tokens=") == made.message_count
    assert f'data-token-total="{stored["total"]}"' in page
    assert f"{stored['total']:,} / 4,096 tokens" in page
    assert 'data-over="false"' in page


def test_over_the_context_length_is_marked(client, counted, curator, annotator):
    tokenizing.set_encoding(counted, curator, encoding="cl100k_base", context_length=10)
    made = create_transcript(counted, text=conversation(turns=2), spec=SPEC, author=annotator)
    client.force_login(annotator)
    page = client.get(f"/transcripts/{made.pk}/").content.decode()
    assert 'class="token-budget over"' in page and "over the context length" in page


def test_the_dataset_table_shows_and_filters_tokens(client, counted, annotator):
    small = create_transcript(counted, text=conversation(turns=1), spec=SPEC, author=annotator)
    big = create_transcript(counted, text=conversation(turns=9), spec=SPEC, author=annotator)
    client.force_login(annotator)
    threshold = fresh(small).token_count
    page = client.get(f"/datasets/{counted.slug}/", {"tokens_over": threshold}).content.decode()
    assert f'data-transcript="{big.pk}"' in page
    assert f'data-transcript="{small.pk}"' not in page
    assert f'data-token-count="{fresh(big).token_count}"' in page
    assert 'data-sort="tokens"' in page


def test_the_tokenizer_page(
    client, dataset, curator, annotator, django_capture_on_commit_callbacks
):
    client.force_login(annotator)
    assert (
        "names no tokenizer" in client.get(f"/datasets/{dataset.slug}/tokenizer/").content.decode()
    )
    refused = client.post(f"/datasets/{dataset.slug}/tokenizer/set/", {"source": "cl100k_base"})
    assert refused.status_code == 403
    client.force_login(curator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/datasets/{dataset.slug}/tokenizer/set/",
            {"source": "upload", "tokenizer_json": io.BytesIO(b"{}"), "context_length": "4096"},
        )
    assert response.status_code == 400
    assert "not a readable tokenizer.json" in response.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/datasets/{dataset.slug}/tokenizer/set/",
            {"source": "cl100k_base", "context_length": "4096"},
        )
    assert response.status_code == 302
    setting = DatasetTokenizer.objects.get(dataset=dataset)
    assert (setting.key, setting.context_length) == ("tiktoken:cl100k_base", 4096)
    page = client.get(f"/datasets/{dataset.slug}/tokenizer/").content.decode()
    assert "cl100k_base" in page and "4096 tokens" in page
    client.post(f"/datasets/{dataset.slug}/tokenizer/delete/")
    assert not DatasetTokenizer.objects.filter(dataset=dataset).exists()
