"""The training view reads a message's trained tokens from the stored token counts while
they are current (``Transcript.token_counts["trainable"]``, editor.tokens.trainable_counts)
and counts only otherwise; what it reads equals what it would count."""

from __future__ import annotations

import re

import pytest

from editor import tokenizing
from editor.formats import tokens as core
from editor.formats import training
from editor.models import Transcript
from editor.presentation.training import training_masks, training_rendering
from editor.storage.create import create_transcript
from tests.editor.samples import demo_texts
from tests.editor.test_training_view import HARMONY, page

pytestmark = pytest.mark.django_db


@pytest.fixture
def counted(dataset, curator, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        tokenizing.set_encoding(dataset, curator, encoding="cl100k_base", context_length=4096)
    return dataset


def fresh(transcript: Transcript) -> Transcript:
    return Transcript.objects.select_related("dataset").get(pk=transcript.pk)


def recounted(transcript: Transcript, convention: str) -> list[int | None]:
    """What the view counted before it read stored counts: the tokenizer on every request."""
    masks = training.training_mask(
        transcript.canonical(), convention, tokenizer=core.tiktoken_encoding("cl100k_base")
    )
    return [m.trained_tokens for m in masks]


def forbid_counting(monkeypatch) -> None:
    """From now on counting with the tokenizer fails: what shows was read from the database."""
    for name in ("segment_counts_batch", "count", "count_batch", "encode"):
        monkeypatch.setattr(core.TiktokenTokenizer, name, _refuse)


def _refuse(*args, **kwargs):
    raise AssertionError("the training view counted tokens again")


@pytest.mark.parametrize("spec", sorted(demo_texts()))
def test_stored_trained_tokens_equal_a_recount_in_every_spec(spec, counted, curator):
    transcript = create_transcript(counted, text=demo_texts()[spec], spec=spec, author=curator)
    transcript = fresh(transcript)
    assert transcript.token_counts["trainable"]
    for convention in training.CONVENTIONS:
        expected = recounted(transcript, convention)
        stored = [m.trained_tokens for m in training_masks(transcript, convention)]
        assert stored == expected, convention


def test_the_page_reads_the_stored_counts(client, counted, curator, annotator, monkeypatch):
    harmony = create_transcript(counted, author=curator, text=HARMONY, spec="harmony")
    expected = sum(n for n in recounted(fresh(harmony), "gpt_oss") if n)
    client.force_login(annotator)
    page(client, harmony)  # the tokenizer loaded once, as any first request would
    forbid_counting(monkeypatch)
    html = page(client, harmony).content.decode()
    assert int(re.search(r'data-trained-tokens="(\d+)"', html).group(1)) == expected > 0
    badges = re.findall(r"trained · (\d+) tokens", html)
    assert sum(map(int, badges)) == expected


def test_the_whole_rendering_reads_the_stored_counts(counted, curator, monkeypatch):
    harmony = fresh(create_transcript(counted, author=curator, text=HARMONY, spec="harmony"))
    forbid_counting(monkeypatch)
    rendered = training_rendering(harmony, None)
    per_item = [item["trained_tokens"] for item in rendered["items"]]
    assert rendered["trained_tokens"] == sum(per_item) > 0
    assert all(n == 0 for n, i in zip(per_item, rendered["items"], strict=True) if not i["trained"])


@pytest.mark.parametrize(
    "stale",
    [
        lambda counts: {**counts, "version": counts["version"] - 1},  # an older version
        lambda counts: {**counts, "tokenizer": "tiktoken:o200k_base"},  # another tokenizer
        lambda counts: {k: v for k, v in counts.items() if k != "trainable"},  # counted before
    ],
    ids=["older-version", "other-tokenizer", "no-trainable"],
)
def test_counts_that_are_not_current_are_counted_again(stale, counted, curator, monkeypatch):
    harmony = create_transcript(counted, author=curator, text=HARMONY, spec="harmony")
    Transcript.objects.filter(pk=harmony.pk).update(token_counts=stale(fresh(harmony).token_counts))
    harmony = fresh(harmony)
    expected = recounted(harmony, "gpt_oss")
    calls = []
    original = core.TiktokenTokenizer.segment_counts_batch

    def spy(self, *args, **kwargs):
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(core.TiktokenTokenizer, "segment_counts_batch", spy)
    assert [m.trained_tokens for m in training_masks(harmony, "gpt_oss")] == expected
    assert calls


def test_without_a_tokenizer_there_are_no_trained_tokens(dataset, curator, monkeypatch):
    harmony = create_transcript(dataset, author=curator, text=HARMONY, spec="harmony")
    forbid_counting(monkeypatch)
    assert all(m.trained_tokens is None for m in training_masks(fresh(harmony), "gpt_oss"))
