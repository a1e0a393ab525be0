"""The transcript page's training rendering (?audience=training): every message marked
data-trained, masked ones dimmed, a convention selector, the trained tokens under the
dataset's tokenizer; the same roles as the annotator rendering (a viewer: 403)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from editor.models import DatasetTokenizer
from editor.storage.create import create_transcript

pytestmark = pytest.mark.django_db

HARMONY = (
    Path(__file__).resolve().parents[1] / "fixtures" / "training" / "three-turns.harmony"
).read_text(encoding="utf-8")


@pytest.fixture
def harmony(dataset, curator):
    return create_transcript(dataset, author=curator, text=HARMONY, spec="harmony", title="3")


def marks(html: str) -> dict[int, str]:
    """data-trained of each message card, by data-index."""
    found = {}
    for tag in re.findall(r"<article id=\"message-\d+\"[^>]*>", html):
        index = int(re.search(r'data-index="(\d+)"', tag).group(1))
        trained = re.search(r'data-trained="(true|false)"', tag)
        found[index] = trained.group(1) if trained else None
    return found


def page(client, transcript, **params):
    return client.get(f"/transcripts/{transcript.pk}/", {"audience": "training", **params})


def test_every_message_is_marked_under_the_default_convention(client, harmony, annotator):
    client.force_login(annotator)
    response = page(client, harmony)
    html = response.content.decode()
    assert response.status_code == 200
    got = marks(html)
    assert [i for i, v in got.items() if v == "true"] == [2, 5, 7, 8]
    assert [i for i, v in got.items() if v == "false"] == [0, 1, 3, 4, 6]
    assert html.count(' masked"') == 5  # dimmed (class masked)
    assert '<option value="gpt_oss" selected>' in html
    assert "masked: analysis of an earlier turn" in html
    assert 'data-audience="training"' in html


def test_the_convention_selector_changes_the_marks(client, harmony, annotator):
    client.force_login(annotator)
    html = page(client, harmony, convention="last_assistant_turn").content.decode()
    assert [i for i, v in marks(html).items() if v == "true"] == [7, 8]
    assert '<option value="last_assistant_turn" selected>' in html
    response = page(client, harmony, convention="everything")
    assert response.status_code == 400
    assert "Unknown convention" in response.content.decode()


def test_trained_tokens_show_when_the_dataset_has_a_tokenizer(client, harmony, annotator, dataset):
    client.force_login(annotator)
    assert "data-trained-tokens" not in page(client, harmony).content.decode()
    DatasetTokenizer.objects.create(dataset=dataset, kind="tiktoken", encoding="cl100k_base")
    html = page(client, harmony).content.decode()
    total = int(re.search(r'data-trained-tokens="(\d+)"', html).group(1))
    assert total > 0


def test_other_renderings_carry_no_marks(client, harmony, annotator):
    client.force_login(annotator)
    html = client.get(f"/transcripts/{harmony.pk}/", {"audience": "annotator"}).content.decode()
    assert "data-trained" not in html


def test_a_viewer_gets_403_perm_visibility(client, harmony, viewer):
    client.force_login(viewer)
    response = page(client, harmony)
    html = response.content.decode()
    assert response.status_code == 403
    assert 'data-code="E-PERM-VISIBILITY"' in html
    assert "Say goodbye." not in html


def test_later_pages_keep_the_chosen_convention(client, dataset, annotator):
    turns = "".join(
        f"<|start|>user<|message|>Question {n}<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>Answer {n}<|end|>"
        for n in range(40)
    )
    long = create_transcript(dataset, author=annotator, text=turns, spec="harmony", title="80")
    client.force_login(annotator)
    html = page(client, long, convention="last_assistant_turn").content.decode()
    loader = re.search(r'class="loader loader-after" hx-get="([^"]+)"', html).group(1)
    assert "convention=last_assistant_turn" in loader
    later = client.get(loader.replace("&amp;", "&"), headers={"HX-Request": "true"})
    got = marks(later.content.decode())
    assert got and max(got) == 79
    assert [i for i, v in got.items() if v == "true"] == [79]
