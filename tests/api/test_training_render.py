"""GET /transcripts/{id}/render?audience=training[&convention=C]: per item `trained`, its
reason, spans of the text a text spec trains on, and trained tokens under the dataset's
tokenizer; the same roles as the annotator rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from editor.models import DatasetTokenizer
from editor.storage.create import create_transcript

from .conftest import assert_error

pytestmark = pytest.mark.django_db

HARMONY = (
    Path(__file__).resolve().parents[1] / "fixtures" / "training" / "two-turns-with-call.harmony"
).read_text(encoding="utf-8")


@pytest.fixture
def harmony(dataset, annotator):
    return create_transcript(dataset, author=annotator, text=HARMONY, spec="harmony", title="h")


def url(transcript) -> str:
    return f"/transcripts/{transcript.pk}/render"


def test_training_marks_every_item_under_the_default_convention(as_annotator, harmony):
    body = as_annotator.get(url(harmony), {"audience": "training"}).json()
    assert body["audience"] == "training" and body["convention"] == "gpt_oss"
    assert [i["index"] for i in body["items"] if i["trained"]] == [4, 7, 9, 10]
    assert body["items"][3]["trained_reason"].startswith("analysis of an earlier turn")
    # Every item is shown, hidden channels included (as the annotator rendering).
    assert len(body["items"]) == 11
    final = body["items"][10]
    assert [HARMONY[a:b] for a, b in final["spans"]] == [
        "I would guess about 12 °C in Rome.",
        "<|return|>",
    ]
    assert final["parts"][0]["kind"] == "header" and not final["parts"][0]["trained"]
    assert "trained_tokens" not in body  # the dataset names no tokenizer


def test_convention_is_a_parameter(as_annotator, harmony):
    body = as_annotator.get(
        url(harmony), {"audience": "training", "convention": "last_assistant_turn"}
    ).json()
    assert [i["index"] for i in body["items"] if i["trained"]] == [9, 10]
    response = as_annotator.get(url(harmony), {"audience": "training", "convention": "most"})
    assert response.status_code == 422


def test_trained_tokens_under_the_datasets_tokenizer(as_annotator, harmony, dataset):
    DatasetTokenizer.objects.create(dataset=dataset, kind="tiktoken", encoding="cl100k_base")
    body = as_annotator.get(url(harmony), {"audience": "training"}).json()
    per_item = [i["trained_tokens"] for i in body["items"]]
    assert body["trained_tokens"] == sum(per_item) > 0
    assert all(n == 0 for n, i in zip(per_item, body["items"], strict=True) if not i["trained"])


def test_a_viewer_may_not_see_the_training_rendering(as_viewer, harmony):
    response = as_viewer.get(url(harmony), {"audience": "training"})
    body = assert_error(response, 403, "E-PERM-VISIBILITY")
    assert body["details"]["audience"] == "training"


def test_post_render_marks_a_posted_text_for_training(as_viewer):
    # The text is the caller's own: every audience is open, training included.
    response = as_viewer.post(
        "/render", {"text": HARMONY, "audience": "training", "convention": "all_assistant"}
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["convention"] == "all_assistant"
    assert [i["index"] for i in body["items"] if i["trained"]] == [3, 4, 6, 7, 9, 10]
    call = body["items"][4]
    assert [HARMONY[a:b] for a, b in call["spans"]] == ['{"location":"Oslo"}', "<|call|>"]
    refused = as_viewer.post(
        "/render", {"text": HARMONY, "audience": "training", "convention": "x"}
    )
    assert refused.status_code == 422
