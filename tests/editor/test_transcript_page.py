"""The transcript page: role-aware renderings, where hidden content is absent, not hidden."""

import pytest

from editor.storage.create import create_transcript

SECRET = "SECRET-CHAIN-OF-THOUGHT"
TEXT = (
    "<|start|>system<|message|>System rules nobody sees.<|end|>\n"
    "<|start|>user<|message|>What is 2 + 2?<|end|>\n"
    f"<|start|>assistant<|channel|>analysis<|message|>{SECRET}<|end|>\n"
    "<|start|>assistant<|channel|>final<|message|>4.<|return|>"
)


@pytest.fixture
def transcript(dataset, curator):
    return create_transcript(dataset, author=curator, text=TEXT, spec="openchatml-2.2", title="Sum")


def test_end_user_rendering_is_the_default_and_leaves_hidden_text_out(client, transcript, viewer):
    client.force_login(viewer)
    response = client.get(f"/transcripts/{transcript.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert SECRET not in html and "System rules" not in html
    assert 'data-role="user" data-channel="" data-index="1"' in html
    assert 'data-role="assistant" data-channel="final" data-index="3"' in html
    assert 'data-index="2"' not in html


def test_viewer_asking_for_the_annotator_rendering_gets_403_perm_visibility(
    client, transcript, viewer
):
    client.force_login(viewer)
    response = client.get(f"/transcripts/{transcript.pk}/", {"audience": "annotator"})
    html = response.content.decode()
    assert response.status_code == 403
    assert 'data-code="E-PERM-VISIBILITY"' in html
    assert SECRET not in html


def test_annotator_sees_everything_marked_hidden_from_end_users(client, transcript, annotator):
    client.force_login(annotator)
    html = client.get(f"/transcripts/{transcript.pk}/", {"audience": "annotator"}).content.decode()
    assert SECRET in html
    assert 'data-channel="analysis" data-index="2" data-visible="false"' in html
    assert "hidden from end users" in html


def test_debug_rendering_highlights_control_tokens_of_the_raw_source(client, transcript, curator):
    client.force_login(curator)
    html = client.get(f"/transcripts/{transcript.pk}/", {"audience": "debug"}).content.decode()
    assert '<mark class="tok tok-token">&lt;|start|&gt;</mark>system' in html


def test_htmx_tab_switch_gets_only_the_messages_fragment(client, transcript, annotator):
    client.force_login(annotator)
    response = client.get(
        f"/transcripts/{transcript.pk}/", {"audience": "annotator"}, headers={"HX-Request": "true"}
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="transcript-messages"')
    assert "<html" not in html


def test_unknown_audience_is_a_400(client, transcript, annotator):
    client.force_login(annotator)
    assert (
        client.get(f"/transcripts/{transcript.pk}/", {"audience": "everything"}).status_code == 400
    )


def test_outsider_gets_404(client, transcript, outsider):
    client.force_login(outsider)
    assert client.get(f"/transcripts/{transcript.pk}/").status_code == 404


def test_diagnostics_carry_their_code(client, dataset, curator):
    broken = create_transcript(
        dataset,
        author=curator,
        text="<|start|>assistant<|channel|>final<|message|>Half an ans",
        spec="openchatml-2.2",
    )
    client.force_login(curator)
    html = client.get(f"/transcripts/{broken.pk}/").content.decode()
    assert 'data-code="E-STREAM-TRUNCATED"' in html


def test_page_takes_a_bounded_number_of_queries(
    client, transcript, annotator, django_assert_max_num_queries
):
    client.force_login(annotator)
    # 15: one of them asks whether the turns have alternatives (editor.alternatives), one for
    # the dataset's tokenizer (token counts), one for its model connections (the Regenerate
    # item, asked once by the first assistant message: editor/templatetags/assist.py).
    with django_assert_max_num_queries(15):
        client.get(f"/transcripts/{transcript.pk}/", {"audience": "annotator"})


def test_people_who_may_edit_start_in_the_annotator_rendering(client, transcript, annotator):
    client.force_login(annotator)
    html = client.get(f"/transcripts/{transcript.pk}/").content.decode()
    assert 'data-audience="annotator"' in html.split('id="transcript-messages"')[1][:200]
    assert SECRET in html


def test_the_rendering_last_picked_is_remembered_per_user(client, transcript, annotator, curator):
    client.force_login(annotator)
    client.get(
        f"/transcripts/{transcript.pk}/", {"audience": "end_user"}, headers={"HX-Request": "true"}
    )
    html = client.get(f"/transcripts/{transcript.pk}/").content.decode()
    assert SECRET not in html
    assert 'data-audience="end_user"' in html.split('id="transcript-messages"')[1][:200]
    # Another user's choice is theirs: the curator still starts in the annotator rendering.
    client.force_login(curator)
    assert SECRET in client.get(f"/transcripts/{transcript.pk}/").content.decode()


def test_a_remembered_rendering_the_role_no_longer_shows_is_not_used(client, transcript, annotator):
    from editor.models import Membership, Role, UserPreference

    UserPreference.remember_audience(annotator, "debug")
    Membership.objects.filter(user=annotator).update(role=Role.VIEWER)
    client.force_login(annotator)
    response = client.get(f"/transcripts/{transcript.pk}/")
    assert response.status_code == 200
    assert SECRET not in response.content.decode()


def test_whole_transcript_questions_show_beside_the_messages(
    client, transcript, annotator, curator
):
    from editor.labels import create_label_schema

    create_label_schema(
        transcript.dataset,
        author=curator,
        name="Usable",
        questions=[
            {
                "key": "usable",
                "kind": "choice",
                "prompt": "Usable for training?",
                "applies_to": "transcript",
                "required": True,
                "options": [
                    {"value": "yes", "label": "Yes", "key": "1"},
                    {"value": "no", "label": "No", "key": "2"},
                ],
            }
        ],
    )
    client.force_login(annotator)
    html = client.get(f"/transcripts/{transcript.pk}/").content.decode()
    questions = html.split('id="questions"')[1]
    assert 'data-question="usable"' in questions and "Usable for training?" in questions
    client.post(
        f"/transcripts/{transcript.pk}/answers/",
        {"schema": transcript.dataset.label_schemas.get().pk, "question": "usable", "value": "no"},
        headers={"HX-Request": "true"},
    )
    html = client.get(f"/transcripts/{transcript.pk}/").content.decode()
    assert 'value="no" data-key="2" checked' in html.split('id="questions"')[1]
