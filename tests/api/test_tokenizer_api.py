"""The dataset tokenizer routes (api/routers/tokenizers.py) and token counts in the transcript
routes: members read it, curators set (an encoding, or an uploaded tokenizer.json) and remove
it; the transcript list sorts by tokens and filters tokens_over."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from editor.formats import tokens as core
from editor.models import DatasetTokenizer, Transcript
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

from .conftest import PREFIX, assert_error

pytestmark = pytest.mark.django_db

SPEC = "openchatml-2.2"


def tokenizer_json() -> bytes:
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=280,
        special_tokens=["[UNK]", "<|start|>", "<|end|>", "<|message|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator([conversation(turns=4)], trainer)
    return tokenizer.to_str().encode()


def upload(api, slug: str, data: bytes, **fields):
    form = {"file": SimpleUploadedFile("tokenizer.json", data), **fields}
    return api.client.post(f"{PREFIX}/datasets/{slug}/tokenizer", form, headers=api.headers)


def test_get_without_a_tokenizer_is_404(as_viewer, dataset):
    assert_error(as_viewer.get(f"/datasets/{dataset.slug}/tokenizer"), 404, "not-found")


def test_a_curator_sets_an_encoding_and_the_transcripts_are_counted(
    as_curator, as_viewer, dataset, annotator, django_capture_on_commit_callbacks
):
    made = create_transcript(dataset, text=conversation(turns=3), spec=SPEC, author=annotator)
    body = {"kind": "tiktoken", "encoding": "cl100k_base", "context_length": 4096}
    with django_capture_on_commit_callbacks(execute=True):
        response = as_curator.put(f"/datasets/{dataset.slug}/tokenizer", body)
    assert response.status_code == 200, response.content
    out = response.json()
    assert out["key"] == "tiktoken:cl100k_base"
    assert (out["available"], out["problem"], out["context_length"]) == (True, None, 4096)
    assert as_viewer.get(f"/datasets/{dataset.slug}/tokenizer").json()["key"] == out["key"]
    read = as_curator.get(f"/transcripts/{made.pk}").json()
    assert read["token_count"] == core.tiktoken_encoding("cl100k_base").count(made.source_text)
    counts = read["token_counts"]
    assert counts["tokenizer"] == out["key"] and counts["version"] == read["version"]
    assert set(counts["channels"]) >= {""} and len(counts["messages"]) == made.message_count
    listed = as_viewer.get(f"/datasets/{dataset.slug}/transcripts").json()
    assert listed["items"][0]["token_count"] == read["token_count"]


def test_an_unavailable_encoding_is_accepted_and_explained(
    as_curator, dataset, tmp_path, monkeypatch
):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(core.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(core, "_encodings", {})
    response = as_curator.put(
        f"/datasets/{dataset.slug}/tokenizer", {"kind": "tiktoken", "encoding": "o200k_harmony"}
    )
    assert response.status_code == 200, response.content
    out = response.json()
    assert out["available"] is False
    assert "o200k_base.tiktoken" in out["problem"] and "OCM_TIKTOKEN_DIR" in out["problem"]


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "tiktoken", "encoding": "gpt2"},
        {"kind": "huggingface", "encoding": "cl100k_base"},
        {"kind": "tiktoken", "encoding": "cl100k_base", "context_length": 0},
        {"kind": "tiktoken", "encoding": "cl100k_base", "context_length": "lots"},
        {},
    ],
)
def test_bad_input_is_a_422(as_curator, dataset, body):
    response = as_curator.put(f"/datasets/{dataset.slug}/tokenizer", body)
    assert response.status_code == 422, response.content
    assert set(response.json()) >= {"code", "message"}


def test_only_curators_change_it(as_annotator, as_viewer, as_outsider, dataset):
    body = {"kind": "tiktoken", "encoding": "cl100k_base"}
    for api in (as_annotator, as_viewer):
        assert_error(api.put(f"/datasets/{dataset.slug}/tokenizer", body), 403, "forbidden")
        assert_error(upload(api, dataset.slug, tokenizer_json()), 403, "forbidden")
        assert_error(api.delete(f"/datasets/{dataset.slug}/tokenizer"), 403, "forbidden")
    assert_error(as_outsider.put(f"/datasets/{dataset.slug}/tokenizer", body), 404, "not-found")
    assert not DatasetTokenizer.objects.exists()


def test_upload_a_tokenizer_json(
    as_curator, dataset, annotator, django_capture_on_commit_callbacks
):
    made = create_transcript(dataset, text=conversation(turns=2), spec=SPEC, author=annotator)
    data = tokenizer_json()
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(as_curator, dataset.slug, data, context_length="2048")
    assert response.status_code == 200, response.content
    out = response.json()
    assert out["kind"] == "huggingface" and out["available"] is True
    assert out["context_length"] == 2048 and out["name"] == "tokenizer.json"
    expected = core.huggingface_tokenizer(data).count(made.source_text)
    assert Transcript.objects.get(pk=made.pk).token_count == expected
    assert_error(upload(as_curator, dataset.slug, b"{not json"), 422, "invalid-tokenizer")
    assert_error(upload(as_curator, dataset.slug, b'{"model": 1}'), 422, "invalid-tokenizer")


def test_an_upload_over_the_limit_is_refused(as_curator, dataset, monkeypatch):
    from editor import tokenizing

    monkeypatch.setattr(tokenizing, "MAX_TOKENIZER_JSON_BYTES", 100)
    body = assert_error(
        upload(as_curator, dataset.slug, tokenizer_json()), 422, "invalid-tokenizer"
    )
    assert body["details"]["limit"] == 100


def test_delete(as_curator, dataset, curator, django_capture_on_commit_callbacks):
    as_curator.put(f"/datasets/{dataset.slug}/tokenizer", {"encoding": "cl100k_base"})
    with django_capture_on_commit_callbacks(execute=True):
        response = as_curator.delete(f"/datasets/{dataset.slug}/tokenizer")
    assert response.status_code == 204
    assert_error(as_curator.delete(f"/datasets/{dataset.slug}/tokenizer"), 404, "not-found")


def test_list_sorts_by_tokens_and_filters_over_n(
    as_viewer, as_curator, dataset, annotator, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        as_curator.put(f"/datasets/{dataset.slug}/tokenizer", {"encoding": "cl100k_base"})
    for n in (1, 5, 3):
        create_transcript(
            dataset, text=conversation(turns=n), spec=SPEC, author=annotator, title=f"t{n}"
        )
    path = f"/datasets/{dataset.slug}/transcripts"
    items = as_viewer.get(path, {"sort": "-tokens"}).json()["items"]
    assert [t["title"] for t in items] == ["t5", "t3", "t1"]
    middle = items[1]["token_count"]
    over = as_viewer.get(path, {"tokens_over": middle - 1, "sort": "tokens"}).json()["items"]
    assert [t["title"] for t in over] == ["t3", "t5"]
    assert_error(as_viewer.get(path, {"tokens_over": -1}), 422, "invalid-request")
