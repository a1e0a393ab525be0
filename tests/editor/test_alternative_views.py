"""Alternatives in the browser: the panel under a turn on the transcript page (add, promote,
delete), and the queue's pairwise item (candidates in the annotator's order, the answer saved
through the answer view with its order recorded)."""

from __future__ import annotations

import json
import re

import pytest

from editor import alternatives, labels, queues
from editor.models import Alternative, Annotation, Transcript
from editor.storage.create import create_transcript

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
MESSAGES = [
    {"role": "user", "content": "Capital of France?", "end": "end"},
    {"role": "assistant", "channel": "final", "content": "Paris.", "end": "end"},
    {"role": "user", "content": "And of Italy?", "end": "end"},
    {"role": "assistant", "channel": "final", "content": "Rome.", "end": "end"},
]


@pytest.fixture
def chat(dataset, curator):
    return create_transcript(
        dataset, author=curator, canonical={"spec": "openchatml-2.2", "messages": MESSAGES}
    )


def page(client, chat, **params) -> str:
    return client.get(
        f"/transcripts/{chat.pk}/", {"audience": "annotator", **params}
    ).content.decode()


def test_the_panel_opens_from_a_message_and_adds_text_as_one_assistant_message(
    client, chat, annotator
):
    client.force_login(annotator)
    assert 'data-action="alternatives"' in page(client, chat)
    panel = client.get(f"/transcripts/{chat.pk}/alternatives/3/", headers=HX).content.decode()
    assert "none yet" in panel and 'data-action="add-alternative"' in panel

    added = client.post(
        f"/transcripts/{chat.pk}/alternatives/add/",
        {"message_index": 3, "messages": "Rome, on the Tiber."},
        headers=HX,
    ).content.decode()
    assert "2 alternatives" in added
    assert added.count("data-alternative ") == 2
    assert "Rome, on the Tiber." in added and "the turn as it stands" in added
    typed = Alternative.objects.get(source="hand").messages
    assert typed == [{"role": "assistant", "channel": "final", "content": "Rome, on the Tiber.",
                      "end": "end"}]  # fmt: skip
    # Under its turn on the page, collapsed.
    html = page(client, chat)
    assert 'id="alternatives-3"' in html and "2 alternatives" in html


def test_bad_input_is_said_in_the_panel(client, chat, annotator):
    client.force_login(annotator)
    post = f"/transcripts/{chat.pk}/alternatives/add/"
    refused = client.post(post, {"message_index": 3, "messages": "[{"}, headers=HX)
    assert refused.status_code == 200 and "not valid JSON" in refused.content.decode()
    user_turn = client.post(
        post, {"message_index": 3, "messages": '[{"role": "user", "content": "x"}]'}, headers=HX
    )
    assert "one turn" in user_turn.content.decode()
    nowhere = client.post(post, {"message_index": 0, "messages": "x"}, headers=HX)
    assert "in no assistant turn" in nowhere.content.decode()
    assert not Alternative.objects.exists()


def test_promote_reloads_the_page_and_delete_keeps_the_current_turn(client, chat, curator):
    client.force_login(curator)
    other = alternatives.add_alternative(
        chat, 1, [{"role": "assistant", "content": "Paris!"}], source="hand", author=curator
    )
    own = Alternative.objects.get(source="transcript")
    promoted = client.post(
        f"/transcripts/{chat.pk}/alternatives/{other.pk}/promote/", {"version": 1}, headers=HX
    )
    assert promoted.status_code == 204
    assert promoted["HX-Redirect"].endswith(f"/transcripts/{chat.pk}/?goto=1")
    assert Transcript.objects.get(pk=chat.pk).canonical().messages[1].content == "Paris!"

    stale = client.post(
        f"/transcripts/{chat.pk}/alternatives/{own.pk}/promote/", {"version": 1}, headers=HX
    )
    assert "version" in stale.content.decode().lower()
    refused = client.post(f"/transcripts/{chat.pk}/alternatives/{other.pk}/delete/", headers=HX)
    assert "promote another first" in refused.content.decode()
    client.post(f"/transcripts/{chat.pk}/alternatives/{own.pk}/delete/", headers=HX)
    assert list(Alternative.objects.values_list("pk", flat=True)) == [other.pk]


def test_viewers_get_no_panel(client, chat, viewer, curator):
    alternatives.add_alternative(
        chat, 1, [{"role": "assistant", "content": "Paris!"}], source="hand", author=curator
    )
    client.force_login(viewer)
    assert client.get(f"/transcripts/{chat.pk}/alternatives/1/").status_code == 403
    assert "data-alternative" not in page(client, chat, audience="end_user")


PAIRWISE = {
    "key": "better",
    "kind": "pairwise",
    "prompt": "Which answer is better?",
    "reason": "optional",
    "rubric": [{"key": "clear", "label": "Clear", "min": 1, "max": 3}],
}


def test_the_queue_shows_a_blind_pairwise_item_and_records_the_order_shown(
    client, dataset, chat, curator, annotator
):
    labels.create_label_schema(dataset, author=curator, name="Prefs", questions=[PAIRWISE])
    alternatives.add_alternative(
        chat, 1, [{"role": "assistant", "content": "It is Paris."}], source="hand", author=curator
    )
    queue = queues.create_queue(dataset, [chat], name="Compare", author=curator)
    client.force_login(annotator)
    html = client.post(f"/queues/{queue.pk}/claim/", headers=HX).content.decode()

    shown = [int(pk) for pk in re.findall(r'data-alternative-id="(\d+)"', html)]
    expected = alternatives.shuffled_order(shown, annotator.pk, f"{chat.pk}:1")
    assert shown == expected and len(shown) == 2
    assert 'data-kind="pairwise"' in html and 'data-key="="' in html
    assert "the turn as it stands" not in html  # blind: no source, no panel
    assert 'id="alternatives-1"' not in html
    assert '<details class="whole-conversation">' in html  # its own turn out of sight
    assert "Capital of France?" in html  # the prompt

    answered = client.post(
        f"/transcripts/{chat.pk}/answers/",
        {
            "schema": labels.LabelSchema.objects.get().pk,
            "question": "better",
            "message_index": 1,
            "order": [str(pk) for pk in shown],
            "choice": str(shown[1]),
            "reason": "Says more.",
            f"rating-{shown[1]}-clear": "3",
        },
        headers=HX,
    )
    assert "saved" in answered.content.decode()
    answer = Annotation.objects.get()
    assert answer.value == {
        "order": shown,
        "choice": shown[1],
        "reason": "Says more.",
        "ratings": {str(shown[1]): {"clear": 3}},
    }
    # On reload: the same order, the answer checked.
    again = client.get(f"/queues/{queue.pk}/").content.decode()
    assert [int(pk) for pk in re.findall(r'data-alternative-id="(\d+)"', again)] == shown
    assert re.search(rf'value="{shown[1]}" data-key="2" checked', again)


def test_a_refused_pairwise_answer_says_why(client, dataset, chat, curator, annotator):
    schema = labels.create_label_schema(
        dataset, author=curator, name="Prefs", questions=[{**PAIRWISE, "reason": "required"}]
    )
    alternatives.add_alternative(
        chat, 1, [{"role": "assistant", "content": "It is Paris."}], source="hand", author=curator
    )
    ids = [a.pk for a in alternatives.candidates(chat, 1)]
    client.force_login(annotator)
    answered = client.post(
        f"/transcripts/{chat.pk}/answers/",
        {"schema": schema.pk, "question": "better", "message_index": 1,
         "order": [str(i) for i in ids], "choice": str(ids[0]), "reason": ""},
        headers=HX,
    )  # fmt: skip
    assert "give a reason" in answered.content.decode()
    assert not Annotation.objects.exists()
    json.dumps(ids)  # ids are plain ints


def test_a_message_offers_the_panel_only_where_none_is_shown(client, chat, curator):
    client.force_login(curator)
    html = page(client, chat)
    assert html.count('data-action="alternatives"') == 2  # both assistant messages
    alternatives.add_alternative(
        chat, 3, [{"role": "assistant", "content": "Rome!"}], source="hand", author=curator
    )
    html = page(client, chat)
    assert html.count('data-action="alternatives"') == 1  # message 1's; 3 shows its panel
    assert f'href="/transcripts/{chat.pk}/alternatives/1/"' in html
