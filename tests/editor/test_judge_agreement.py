"""Judge vs people on the queue dashboard: agreement (the same kappa/alpha as between
annotators), the confusion table, the items where they differ, and the transcript list's
``judge=disagrees`` filter; suggestions never counted as a person's answer."""

from __future__ import annotations

import json

import pytest

from editor import queues
from editor.assist import versus
from editor.exporting import export_dataset
from editor.labels.agreement import cohen_kappa
from editor.models import Annotation, AnnotationState, Membership, Role, Suggestion
from tests.support.judging import make_judge, make_transcripts

pytestmark = pytest.mark.django_db

# Per transcript: (first annotator, second annotator, judge).
ANSWERS = [
    ("yes", "yes", "yes"),
    ("yes", "yes", "no"),  # people say yes, judge no
    ("no", "no", "no"),
    ("no", "no", "yes"),  # people say no, judge yes
    ("yes", "no", "yes"),  # people split: not compared
    ("yes", "yes", "yes"),
]


@pytest.fixture
def setting(dataset, curator, annotator, openai_server, django_user_model):
    second = django_user_model.objects.create_user("second")
    Membership.objects.create(user=second, dataset=dataset, role=Role.ANNOTATOR)
    judge = make_judge(dataset, openai_server, curator)
    chats = make_transcripts(dataset, annotator, len(ANSWERS))
    queue = queues.create_queue(dataset, chats, name="Check", author=curator, overlap=2)
    version = judge.schema.current_version
    for chat, (first, other, model) in zip(chats, ANSWERS, strict=True):
        for person, value in ((annotator, first), (second, other)):
            Annotation.objects.create(
                transcript=chat,
                schema_version=version,
                question="helpful",
                annotator=person,
                value=value,
                state=AnnotationState.SUBMITTED,
            )
        # An older suggestion the newest replaces.
        Suggestion.objects.create(
            transcript=chat,
            schema_version=version,
            question="helpful",
            value="no" if model == "yes" else "yes",
            model="old-model",
        )
        Suggestion.objects.create(
            transcript=chat,
            schema_version=version,
            question="helpful",
            value=model,
            model="judge-model",
        )
    return {"queue": queue, "chats": chats, "judge": judge}


def test_judge_vs_people(setting):
    [figure] = versus.judge_figures(setting["queue"])
    chats = setting["chats"]
    assert figure["question"].key == "helpful"
    assert figure["judged_items"] == 6 and figure["compared"] == 5
    assert figure["disagreeing"] == [chats[1].pk, chats[3].pk]
    pairs = [(m, p) for p, _, m in (ANSWERS[i] for i in (0, 1, 2, 3, 5))]
    assert figure["agreement"].measure == "cohen_kappa"
    assert figure["agreement"].value == pytest.approx(cohen_kappa(pairs))
    # The judge counted as a third annotator: Krippendorff's alpha.
    assert figure["with_annotators"].measure == "krippendorff_alpha"
    assert figure["with_annotators"].annotators == 3
    assert figure["confusion"] == {
        "labels": ["Helpful", "Not helpful"],
        "rows": [("Helpful", [2, 1]), ("Not helpful", [1, 1])],
    }
    data = versus.to_dict(figure)
    assert data["confusion"]["rows"][0] == {"judge": "Helpful", "people": [2, 1]}
    json.dumps(data)


def test_suggestions_are_never_counted_as_answers(setting, dataset, curator):
    queue = setting["queue"]
    [before] = [f for f in queues.label_figures(queue) if f["question"].key == "helpful"]
    assert before["distribution"] == [("Helpful", 7), ("Not helpful", 5)]
    assert before["agreement"].annotators == 2
    assert queues.progress(queue)["submitted"] == 0  # answers alone do not submit an item
    lines = [json.loads(line) for line in export_dataset(dataset, with_annotations=True)]
    exported = [a for line in lines for a in line["annotations"]]
    assert len(exported) == 12
    assert {a["annotator"] for a in exported} == {"annotator", "second"}
    assert all("suggestions" not in line for line in lines)
    # Asked for, the judge's answers come apart from the people's and marked as the model's.
    lines = [
        json.loads(line)
        for line in export_dataset(dataset, with_annotations=True, with_suggestions=True)
    ]
    assert [len(line["annotations"]) for line in lines] == [2] * 6
    by_title = {line["title"]: line["suggestions"] for line in lines}
    assert by_title["chat 1"] == [
        {
            "source": "model",
            "model": "judge-model",
            "schema": "Quality",
            "schema_version": 1,
            "question": "helpful",
            "value": "no",
            "rationale": "",
            "run": None,
            "accepted_by": None,
        }
    ]


def test_the_list_filter_judge_disagrees(setting, client, curator, dataset):
    chats = setting["chats"]
    client.force_login(curator)
    page = client.get(f"/datasets/{dataset.slug}/?judge=disagrees")
    assert page.status_code == 200
    shown = {t.pk for t in page.context["page"].object_list}
    # Any submitted answer that differs from the judge's newest suggestion: the split item too.
    assert shown == {chats[1].pk, chats[3].pk, chats[4].pk}


def test_the_dashboard_shows_judge_vs_people(setting, client, curator):
    client.force_login(curator)
    page = client.get(f"/queues/{setting['queue'].pk}/dashboard/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "data-judge-agreement" in html
    assert "judge=disagrees" in html
    assert f"/transcripts/{setting['chats'][1].pk}/" in html
