"""The read of one transcript: its one-statement lookup (``Transcript.all_objects.visible_one``)
and its unvalidated schema (``TranscriptOut.of``) give what the ORM and the validated schema
give, for every kind of stored transcript and every kind of caller."""

from __future__ import annotations

import json

import pytest
from ninja.responses import NinjaJSONEncoder

from api.schemas.transcripts import TranscriptOut
from editor import formats
from editor.models import Dataset, Membership, Role, Transcript
from editor.storage.create import create_transcript
from editor.storage.save import delete_transcript, save_transcript

from .conftest import assert_error


def _json(schema: TranscriptOut) -> str:
    return json.dumps(schema.model_dump(), cls=NinjaJSONEncoder, sort_keys=True)


@pytest.fixture
def kinds(varied, dataset, annotator, curator):
    """Stored transcripts of every shape a read can meet: errors, warnings, a changed
    status, JSON metadata, a source that cannot say everything, a deleted one."""
    made = dict(varied)
    made["unicode"] = create_transcript(
        dataset,
        author=annotator,
        title="Ünïcode — 東京 \U0001f600",
        text=formats.serialize(
            formats.Transcript(
                spec="openchatml-2.2",
                messages=[formats.Message(role="user", content='Quote " and \\ and \u2028')],
            )
        ),
        external_id="ext-ü",
        metadata={"nested": {"list": [1, 2.5, None, True]}, "empty": {}},
    )
    chatml = create_transcript(
        dataset, author=annotator, text="<|im_start|>user\nHi<|im_end|>\n", spec="chatml"
    )
    made["inexact"] = save_transcript(  # chatml has no channels
        chatml,
        expected_version=chatml.version,
        author=annotator,
        messages=[{"role": "user", "content": "Hi", "channel": "analysis"}],
    )
    gone = create_transcript(dataset, author=annotator, title="gone", text="<|im_start|>user\nHi")
    made["deleted"] = delete_transcript(gone, author=curator, expected_version=gone.version)
    return made


def test_the_unvalidated_schema_equals_the_validated_one(kinds):
    assert not kinds["inexact"].source_is_exact
    assert kinds["deleted"].deleted_at is not None
    assert kinds["truncated"].error_count and kinds["tool call"].warning_count
    for title, made in kinds.items():
        stored = Transcript.all_objects.select_related("dataset").get(pk=made.pk)
        assert _json(TranscriptOut.of(stored)) == _json(TranscriptOut.from_orm(stored)), title


@pytest.mark.parametrize("who", ["curator", "annotator", "viewer", "superuser"])
def test_the_one_statement_lookup_reads_what_the_orm_reads(kinds, who, request, admin_user):
    user = admin_user if who == "superuser" else request.getfixturevalue(who)
    for made in kinds.values():
        found = Transcript.all_objects.visible_one(user, made.pk)
        expected = Transcript.all_objects.select_related("dataset").get(pk=made.pk)
        assert found is not None
        for field in Transcript._meta.concrete_fields:
            assert getattr(found, field.attname) == getattr(expected, field.attname), field.name
        for name in ("id", "name", "slug", "description", "default_spec"):
            assert getattr(found.dataset, name) == getattr(expected.dataset, name)
        # The dataset's dates were not read with it; asking for one still answers.
        assert found.dataset.created_at == expected.dataset.created_at
        role = None if who == "superuser" else expected.dataset.role_of(user).value
        assert found.caller_role == role


def test_the_lookup_lets_in_exactly_whom_for_user_lets_in(
    kinds, curator, annotator, viewer, outsider, admin_user, django_user_model
):
    """The statement spells the membership rule out in SQL: it must agree with the one the
    rest of the app uses (``TranscriptQuerySet.for_user``), for every caller."""
    elsewhere = Dataset.objects.create(name="Elsewhere", slug="elsewhere")
    other = django_user_model.objects.create_user("member-elsewhere")
    Membership.objects.create(user=other, dataset=elsewhere, role=Role.CURATOR)
    foreign = create_transcript(elsewhere, author=other, text="<|im_start|>user\nHi")
    pks = [made.pk for made in kinds.values()] + [foreign.pk]
    for user in (curator, annotator, viewer, outsider, admin_user, other):
        allowed = set(Transcript.all_objects.for_user(user).values_list("pk", flat=True))
        for pk in pks:
            found = Transcript.all_objects.visible_one(user, pk)
            assert (found is not None) == (pk in allowed), (user.username, pk)


def test_the_lookup_finds_nothing_outside_the_callers_datasets(kinds, outsider):
    some = kinds["plain"].pk
    assert Transcript.all_objects.visible_one(outsider, some) is None
    assert Transcript.all_objects.visible_one(outsider, 10**12) is None
    for pk in (0, -1, 2**63, 2**70):
        assert Transcript.all_objects.visible_one(outsider, pk) is None


def test_the_read_answers_what_it_did_for_each_caller(kinds, as_annotator, as_viewer, as_outsider):
    plain = kinds["plain"]
    body = as_annotator.get(f"/transcripts/{plain.pk}").json()
    assert body["dataset"] == "support-chats" and body["id"] == plain.pk
    assert body["messages"][-1]["content"] == "Sunny."
    assert_error(as_viewer.get(f"/transcripts/{plain.pk}"), 403, "E-PERM-VISIBILITY")
    assert_error(as_outsider.get(f"/transcripts/{plain.pk}"), 404, "not-found")
    deleted = kinds["deleted"].pk
    assert_error(as_annotator.get(f"/transcripts/{deleted}"), 410, "transcript-deleted")
    assert_error(as_annotator.get(f"/transcripts/{2**63}"), 404, "not-found")
