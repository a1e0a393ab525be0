"""Preference pairs (editor/pairs.py): recorded from every kind of correction of an assistant
message, none from other edits; listing, exclusion, pairs derived from pairwise answers and
the export rows."""

from __future__ import annotations

import time

import pytest

from editor import editing, formats
from editor.errors import ConflictError, InvalidContent, NotAllowed
from editor.formats.canonical import message_dict
from editor.models import (
    Alternative,
    Annotation,
    LabelSchema,
    LabelSchemaVersion,
    PreferencePair,
    Revision,
    Transcript,
)
from editor.pairs import (
    PairFilter,
    exclude_pair,
    export_rows,
    include_pair,
    pairs_of_dataset,
    pairs_of_edit,
    pairs_of_transcript,
    winner_of,
)
from editor.revisions import restore_revision
from editor.storage.create import create_transcript
from editor.storage.save import delete_transcript, save_transcript
from tests.editor.samples import demo_texts

pytestmark = pytest.mark.django_db

SPEC = "openchatml-2.2"
# 0 system, 1 developer (declares functions.get_current_weather), 2 user, 3 analysis,
# 4 preamble, 5 the call, 6 the tool's answer, 7 the final answer.
FINAL, CALL, ANALYSIS = 7, 5, 3


@pytest.fixture
def weather(dataset, annotator):
    return create_transcript(dataset, text=demo_texts()[SPEC], spec=SPEC, author=annotator)


def fresh(transcript: Transcript) -> Transcript:
    return Transcript.objects.select_related("dataset").get(pk=transcript.pk)


def only_pair(transcript: Transcript) -> PreferencePair:
    pairs = list(PreferencePair.objects.filter(transcript=transcript))
    assert len(pairs) == 1, pairs
    return pairs[0]


def dicts(messages) -> list[dict]:
    return [message_dict(m, SPEC) for m in messages]


# --- the pure comparison ---------------------------------------------------------------------


def m(role: str, content: str, **fields) -> formats.Message:
    return formats.Message(role=role, content=content, **fields)


BEFORE = [
    m("system", "s"),
    m("user", "q"),
    m("assistant", "a1"),
    m("user", "q2"),
    m("assistant", "a2"),
]


@pytest.mark.parametrize(
    "field, value",
    [
        ("content", "better"),
        ("channel", "analysis"),
        ("recipient", "functions.f"),
        ("content_type", "json"),
        ("constrain", "json"),
        ("end", "<|return|>"),
        ("attrs", {"x": 1}),
    ],
)
def test_every_semantic_field_of_an_assistant_message_is_an_edit(field, value):
    after = list(BEFORE)
    after[2] = (
        m("assistant", "a1", **{field: value}) if field != "content" else m("assistant", value)
    )

    [pair] = pairs_of_edit(BEFORE, after)

    assert pair.index == 2
    assert pair.prompt == BEFORE[:2]
    assert pair.rejected == BEFORE[2]
    assert pair.chosen == after[2]


@pytest.mark.parametrize("index", [0, 1, 3])
def test_other_roles_edits_are_no_pairs(index):
    after = list(BEFORE)
    after[index] = m(BEFORE[index].role, "changed")
    assert pairs_of_edit(BEFORE, after) == []


def test_a_role_change_is_no_pair():
    after = list(BEFORE)
    after[2] = m("user", "a1")
    assert pairs_of_edit(BEFORE, after) == []


def test_inserts_deletes_and_moves_are_no_pairs():
    inserted = [*BEFORE[:2], m("assistant", "new"), *BEFORE[2:]]
    deleted = [*BEFORE[:2], *BEFORE[3:]]
    moved = [BEFORE[0], BEFORE[1], BEFORE[3], BEFORE[4], BEFORE[2]]
    swapped = [BEFORE[0], BEFORE[1], BEFORE[4], BEFORE[3], BEFORE[2]]
    for after in (inserted, deleted, moved, swapped, list(BEFORE)):
        assert pairs_of_edit(BEFORE, after) == [], after


def test_an_edit_beside_an_insertion_is_still_a_pair_with_the_old_prompt():
    after = [*BEFORE[:4], m("assistant", "a2, better"), m("user", "q3")]
    [pair] = pairs_of_edit(BEFORE, after)
    assert (pair.index, pair.rejected.content, pair.chosen.content) == (4, "a2", "a2, better")
    assert pair.prompt == BEFORE[:4]


def test_two_assistant_messages_changed_are_two_pairs_each_with_the_before_state():
    after = list(BEFORE)
    after[2] = m("assistant", "a1!")
    after[4] = m("assistant", "a2!")
    pairs = pairs_of_edit(BEFORE, after)
    assert [p.index for p in pairs] == [2, 4]
    assert pairs[1].prompt[2].content == "a1"  # the prompt as it was before the edit


# --- recorded by every kind of save ---------------------------------------------------------


def test_a_message_edit_records_the_pair_with_its_revision_and_author(weather, annotator):
    before = weather.canonical().messages
    editing.edit_message(
        weather, FINAL, {"content": "It is 20 °C."}, expected_version=1, author=annotator
    )

    pair = only_pair(weather)
    assert pair.source == "edit"
    assert pair.message_index == FINAL
    assert pair.prompt == dicts(before[:FINAL])
    assert pair.rejected == dicts([before[FINAL]])
    assert pair.chosen[0]["content"] == "It is 20 °C."
    assert pair.author == annotator
    assert pair.revision == Revision.objects.get(transcript=weather, number=2)


def test_channel_and_tool_call_edits_record_pairs(weather, annotator):
    editing.edit_message(
        weather, ANALYSIS, {"channel": "commentary"}, expected_version=1, author=annotator
    )
    editing.edit_message(
        fresh(weather),
        CALL,
        {"recipient": "functions.get_forecast"},
        expected_version=2,
        author=annotator,
    )
    editing.edit_message(
        fresh(weather),
        CALL,
        {"content": '{"location":"Kyoto"}'},
        expected_version=3,
        author=annotator,
    )

    pairs = list(PreferencePair.objects.filter(transcript=weather).order_by("pk"))
    assert [p.message_index for p in pairs] == [ANALYSIS, CALL, CALL]
    assert (pairs[0].rejected[0]["channel"], pairs[0].chosen[0]["channel"]) == (
        "analysis",
        "commentary",
    )
    assert pairs[1].rejected[0]["recipient"] == "functions.get_current_weather"
    assert pairs[1].chosen[0]["recipient"] == "functions.get_forecast"
    assert pairs[2].rejected[0]["recipient"] == "functions.get_forecast"
    assert pairs[2].chosen[0]["content"] == '{"location":"Kyoto"}'
    # Each prompt is the state before its own edit: the analysis edit is in the later ones.
    assert pairs[1].prompt[ANALYSIS]["channel"] == "commentary"


def test_user_system_developer_and_tool_edits_record_none(weather, annotator):
    for version, index in enumerate((0, 1, 2, 6), start=1):
        editing.edit_message(
            fresh(weather),
            index,
            {"content": f"changed {index}"},
            expected_version=version,
            author=annotator,
        )
    assert fresh(weather).version == 5
    assert not PreferencePair.objects.exists()


def test_inserting_deleting_and_moving_record_none(weather, annotator):
    editing.insert_message(
        weather,
        FINAL,
        {"role": "assistant", "content": "More?"},
        expected_version=1,
        author=annotator,
    )
    editing.move_message(fresh(weather), 8, 2, expected_version=2, author=annotator)
    editing.delete_message(fresh(weather), 2, expected_version=3, author=annotator)
    assert fresh(weather).version == 4
    assert not PreferencePair.objects.exists()


def test_a_raw_source_edit_records_the_pair(weather, annotator):
    text = weather.source_text.replace("sunny in Tokyo right now", "sunny")
    editing.replace_source(weather, text, expected_version=1, author=annotator)
    pair = only_pair(weather)
    assert pair.message_index == FINAL
    assert pair.chosen[0]["content"] == "It\u2019s 20 °C and sunny."


def test_a_quick_fix_of_an_assistant_message_records_the_pair(dataset, annotator):
    text = (
        "version: 2.2\n"
        "<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json"
        "<|message|>{}<|call|>\n"
    )
    transcript = create_transcript(dataset, text=text, spec=SPEC, author=annotator)
    offered = next(d for d in transcript.diagnostics if d.get("fix") and d["message_index"] == 0)
    editing.apply_fix(
        transcript,
        code=offered["code"],
        message_index=0,
        fix_id=offered["fix"]["id"],
        expected_version=1,
        author=annotator,
    )
    pair = only_pair(transcript)
    assert "call_id" not in pair.rejected[0]
    assert pair.chosen[0]["call_id"]
    assert pair.prompt == []


def test_a_merged_edit_records_its_own_pair_against_the_stored_state(weather, annotator, curator):
    editing.edit_message(
        weather, 2, {"content": "Weather in Tokyo?"}, expected_version=1, author=curator
    )
    result = editing.edit_message(
        weather, FINAL, {"content": "Sunny, 20 °C."}, expected_version=1, author=annotator
    )
    assert result.merged_with is not None
    pair = only_pair(weather)
    assert pair.author == annotator
    assert pair.prompt[2]["content"] == "Weather in Tokyo?"  # the other's edit, stored before
    assert pair.chosen[0]["content"] == "Sunny, 20 °C."


def test_a_restore_records_no_pair(weather, annotator):
    editing.edit_message(weather, FINAL, {"content": "x"}, expected_version=1, author=annotator)
    assert PreferencePair.objects.count() == 1
    restore_revision(
        Revision.objects.get(transcript=weather, number=1), expected_version=2, author=annotator
    )
    assert fresh(weather).version == 3
    assert PreferencePair.objects.count() == 1


def test_an_import_that_updates_a_transcript_records_none(dataset, curator):
    import json

    from editor.importing import import_transcripts
    from tests.editor.samples import conversation

    def line(text: str) -> bytes:
        return (json.dumps({"id": "a", "spec": SPEC, "text": text}) + "\n").encode()

    first = conversation(SPEC)
    import_transcripts(line(first), dataset=dataset, author=curator, name="x.jsonl")
    changed = first.replace("Answer 1.", "Answer 1, imported again.")
    assert changed != first
    report = import_transcripts(line(changed), dataset=dataset, author=curator, name="x.jsonl")

    assert report.counts["updated"] == 1
    assert not PreferencePair.objects.exists()


def test_a_conflict_records_nothing(weather, annotator):
    editing.edit_message(weather, FINAL, {"content": "x"}, expected_version=1, author=annotator)
    with pytest.raises(ConflictError):
        save_transcript(
            fresh(weather), expected_version=1, author=annotator, text=weather.source_text
        )
    assert PreferencePair.objects.count() == 1


def test_rewriting_in_another_spec_records_none(weather, annotator):
    converted = editing.convert_source(weather.source_text, spec=SPEC, to="harmony")
    editing.replace_source(
        weather, converted.text, spec="harmony", expected_version=1, author=annotator
    )
    assert fresh(weather).spec == "harmony"
    assert not PreferencePair.objects.exists()


def test_an_edit_of_a_long_transcript_stays_cheap(dataset, annotator):
    messages = []
    for turn in range(1000):
        messages += [m("user", f"Question {turn}?"), m("assistant", f"Answer {turn}.")]
    transcript = create_transcript(
        dataset,
        text=formats.serialize(formats.Transcript(spec=SPEC, messages=messages)),
        spec=SPEC,
        author=annotator,
    )
    started = time.perf_counter()
    after = list(messages)
    after[1901] = m("assistant", "Answer 950, corrected.")
    found = pairs_of_edit(messages, after)
    assert time.perf_counter() - started < 0.1
    assert [p.index for p in found] == [1901]

    editing.edit_message(
        transcript,
        1901,
        {"content": "Answer 950, corrected."},
        expected_version=1,
        author=annotator,
    )
    pair = only_pair(transcript)
    assert len(pair.prompt) == 1901


# --- listing and exclusion ---------------------------------------------------------------------


def test_listing_filters_and_exclusion(weather, annotator, curator, reviewer, viewer):
    editing.edit_message(weather, FINAL, {"content": "x"}, expected_version=1, author=annotator)
    editing.edit_message(
        fresh(weather), ANALYSIS, {"content": "y"}, expected_version=2, author=curator
    )
    mine, theirs = (
        PreferencePair.objects.get(author=annotator),
        PreferencePair.objects.get(author=curator),
    )
    assert list(pairs_of_transcript(weather)) == [theirs, mine]  # newest first

    exclude_pair(mine, annotator)  # its own author
    mine.refresh_from_db()
    assert mine.excluded_by == annotator and mine.excluded_at is not None
    with pytest.raises(NotAllowed):
        exclude_pair(theirs, annotator)  # someone else's, not a curator
    with pytest.raises(NotAllowed):
        exclude_pair(theirs, reviewer)
    with pytest.raises(NotAllowed):
        include_pair(mine, viewer)

    dataset = weather.dataset
    assert list(pairs_of_dataset(dataset, PairFilter(excluded=True))) == [mine]
    assert list(pairs_of_dataset(dataset, PairFilter(excluded=False))) == [theirs]
    assert list(pairs_of_dataset(dataset, PairFilter(source="import"))) == []
    assert len(pairs_of_dataset(dataset, PairFilter(source="edit"))) == 2

    include_pair(mine, curator)  # a curator may take anyone's back
    mine.refresh_from_db()
    assert mine.excluded_at is None and mine.excluded_by is None
    with pytest.raises(InvalidContent):
        PairFilter(source="pairwise")


def test_pairs_of_a_deleted_transcript_are_not_listed(weather, annotator, curator):
    editing.edit_message(weather, FINAL, {"content": "x"}, expected_version=1, author=annotator)
    delete_transcript(fresh(weather), author=curator)
    assert not pairs_of_dataset(weather.dataset).exists()


# --- pairwise answers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "choices, expected",
    [
        ([1, 1, 2], (1, None)),
        ([1, "tie", "tie"], (1, None)),
        (["tie", "tie"], (None, "tie")),
        ([], (None, "tie")),
        ([1, 2], (None, "no_majority")),
        ([1, 2, 3], (None, "no_majority")),
        ([1, 1, 2, 3], (None, "no_majority")),
        ([3, 3, 1], (3, None)),
    ],
)
def test_the_majority_rule(choices, expected):
    assert winner_of(choices) == expected


def pairwise_schema(dataset, curator) -> LabelSchemaVersion:
    schema = LabelSchema.objects.create(dataset=dataset, name="Which is better", created_by=curator)
    version = LabelSchemaVersion.objects.create(
        schema=schema,
        number=1,
        questions=[{"key": "better", "kind": "pairwise", "prompt": "Which is better?"}],
        created_by=curator,
    )
    schema.current_version = version
    schema.save(update_fields=["current_version"])
    return version


def alternative(transcript, index, text) -> Alternative:
    return Alternative.objects.create(
        transcript=transcript,
        message_index=index,
        messages=[{"role": "assistant", "channel": "final", "content": text}],
        content_hash=text.ljust(64, "0")[:64],
        source="import",
    )


def answer(version, transcript, user, index, order, choice, state="submitted") -> Annotation:
    return Annotation.objects.create(
        transcript=transcript,
        schema_version=version,
        question="better",
        annotator=user,
        message_index=index,
        value={"order": order, "choice": choice, "reason": "", "ratings": {}},
        state=state,
    )


def test_pairwise_answers_give_derived_rows(weather, annotator, curator, reviewer, viewer):
    version = pairwise_schema(weather.dataset, curator)
    a, b, c = (alternative(weather, FINAL, t) for t in ("A", "B", "C"))
    # Item 1 (message 7): three alternatives, b wins 2 to 1, a draft does not count.
    answer(version, weather, annotator, FINAL, [a.pk, b.pk, c.pk], b.pk)
    answer(version, weather, curator, FINAL, [c.pk, b.pk, a.pk], b.pk)
    answer(version, weather, reviewer, FINAL, [b.pk, a.pk, c.pk], a.pk)
    answer(version, weather, viewer, FINAL, [a.pk, b.pk, c.pk], c.pk, state="draft")
    other = create_transcript(weather.dataset, text=demo_texts()[SPEC], spec=SPEC, author=curator)
    d, e = alternative(other, FINAL, "D"), alternative(other, FINAL, "E")
    # Item 2: all ties.  Item 3 (message 3 of the other): no majority.
    answer(version, weather, annotator, 4, [a.pk, b.pk], "tie")
    answer(version, other, annotator, FINAL, [d.pk, e.pk], d.pk)
    answer(version, other, curator, FINAL, [e.pk, d.pk], str(e.pk))

    export = export_rows(weather.dataset, sources={"pairwise"})
    rows = list(export)

    assert [(r.chosen, r.rejected) for r in rows] == [
        (b.messages, a.messages),
        (b.messages, c.messages),
    ]
    first = rows[0]
    assert first.prompt == dicts(weather.canonical().messages[:FINAL])
    assert first.tools[0]["function"]["name"] == "get_current_weather"
    assert first.provenance["source"] == "pairwise"
    assert first.provenance["votes"] == {str(b.pk): 2, str(a.pk): 1}
    assert first.provenance["annotators"] == sorted(
        [annotator.username, curator.username, reviewer.username]
    )
    assert export.left_out == {"excluded": 0, "tie": 1, "no_majority": 1, "missing_alternative": 0}
    assert export.count == 2


def test_export_rows_of_edits_with_provenance_and_exclusions(weather, annotator, curator):
    editing.edit_message(weather, FINAL, {"content": "x"}, expected_version=1, author=annotator)
    editing.edit_message(
        fresh(weather), CALL, {"content": "{}"}, expected_version=2, author=curator
    )
    exclude_pair(PreferencePair.objects.get(author=curator), curator)

    export = export_rows(weather.dataset, sources={"edit", "pairwise"}, chunk_size=1)
    [row] = list(export)

    assert row.chosen[0]["content"] == "x"
    assert row.tools == [
        {
            "type": "function",
            "function": {
                "name": "get_current_weather",
                "description": "Gets weather for a city.",
                "parameters": row.tools[0]["function"]["parameters"],
            },
        }
    ]
    pair = PreferencePair.objects.get(author=annotator)
    assert row.provenance == {
        "source": "edit",
        "spec": SPEC,
        "transcript": weather.pk,
        "external_id": None,
        "message_index": FINAL,
        "revision": 2,
        "author": annotator.username,
        "pair": pair.pk,
        "created_at": pair.created_at.isoformat(),
    }
    assert export.left_out["excluded"] == 1

    other = create_transcript(weather.dataset, text=demo_texts()[SPEC], spec=SPEC, author=curator)
    assert list(export_rows(weather.dataset, transcripts=[other.pk])) == []
    with pytest.raises(InvalidContent):
        export_rows(weather.dataset, sources={"dpo"})


def test_export_reads_each_transcript_once_never_its_text(weather, annotator):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for version in range(1, 5):
        editing.edit_message(
            fresh(weather),
            FINAL,
            {"content": f"Answer {version}."},
            expected_version=version,
            author=annotator,
        )
    with CaptureQueriesContext(connection) as captured:
        rows = list(export_rows(weather.dataset, sources={"edit"}, chunk_size=2))
    assert [r.provenance["revision"] for r in rows] == [2, 3, 4, 5]
    sql = [q["sql"] for q in captured.captured_queries]
    assert not any("source_text" in q or '"snapshot"' in q for q in sql), sql
    assert sum('FROM "editor_transcript"' in q and "LIMIT" in q for q in sql) == 1


def test_pairs_from_answers_given_through_the_labels(weather, annotator, curator, reviewer):
    """The whole way: a pairwise schema, alternatives added by hand, answers submitted."""
    from editor.alternatives import add_alternative
    from editor.labels import create_label_schema
    from editor.labels.annotations import create_annotation, submit_annotation

    schema = create_label_schema(
        weather.dataset,
        author=curator,
        name="Compare",
        questions=[{"key": "better", "kind": "pairwise", "prompt": "Which answer is better?"}],
    )
    one, two = (
        add_alternative(
            weather,
            FINAL,
            [{"role": "assistant", "channel": "final", "content": text}],
            source="hand",
            author=curator,
        )
        for text in ("Sunny, 20 °C.", "No idea.")
    )
    for user, choice in ((annotator, one.pk), (curator, one.pk), (reviewer, two.pk)):
        submit_annotation(
            create_annotation(
                weather,
                annotator=user,
                schema=schema,
                question="better",
                value={"order": [one.pk, two.pk], "choice": choice, "reason": "", "ratings": {}},
                message_index=FINAL,
            ),
            user=user,
        )

    [row] = list(export_rows(weather.dataset, sources={"pairwise"}))
    assert row.chosen == one.messages and row.rejected == two.messages
    assert row.provenance["votes"] == {str(one.pk): 2, str(two.pk): 1}
    assert row.provenance["question"] == f"{schema.pk}:better"


def test_no_content_and_empty_content_are_the_same():
    before = [m("user", "q"), formats.Message(role="assistant", content=None)]
    after = [m("user", "q"), m("assistant", "")]
    assert pairs_of_edit(before, after) == []
    after = [m("user", "q"), m("assistant", "now some")]
    assert [p.chosen.content for p in pairs_of_edit(before, after)] == ["now some"]
