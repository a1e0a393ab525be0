"""Shared fixtures: users and a dataset with one member per role.

Users have no password (hashing one costs a second per test); tests that log in with a
password set it themselves.
"""

from __future__ import annotations

import pytest
from django.core.cache import cache

from editor.models import Dataset, Membership, Role
from tests.support.openai_server import openai_server  # noqa: F401  (a fixture for every test)

IMMEDIATE_TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


@pytest.fixture(autouse=True)
def empty_cache():
    """Each test starts with an empty cache: the local-memory one outlives a test's database,
    whose ids (rolled back on SQLite) the next test may use again."""
    cache.clear()


@pytest.fixture(autouse=True)
def tasks_run_in_the_request(settings, tmp_path_factory):
    """Background tasks run at once, within the request that starts them (after its commit).

    The tests of the task worker itself switch to the database backend.
    """
    settings.TASKS = IMMEDIATE_TASKS
    settings.OCM_UPLOAD_DIR = tmp_path_factory.getbasetemp() / "uploads"
    settings.OCM_EXPORT_DIR = tmp_path_factory.getbasetemp() / "exports"


@pytest.fixture
def curator(django_user_model):
    return django_user_model.objects.create_user("curator")


@pytest.fixture
def annotator(django_user_model):
    return django_user_model.objects.create_user("annotator")


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user("viewer")


@pytest.fixture
def outsider(django_user_model):
    return django_user_model.objects.create_user("outsider")


@pytest.fixture
def reviewer(django_user_model, dataset):
    """A reviewer of ``dataset`` (not every test needs one, so not part of it)."""
    user = django_user_model.objects.create_user("reviewer")
    Membership.objects.create(user=user, dataset=dataset, role=Role.REVIEWER)
    return user


@pytest.fixture
def dataset(curator, annotator, viewer):
    """A dataset where ``curator``, ``annotator`` and ``viewer`` hold those roles."""
    dataset = Dataset.objects.create(name="Support chats", slug="support-chats")
    Membership.objects.bulk_create(
        [
            Membership(user=curator, dataset=dataset, role=Role.CURATOR),
            Membership(user=annotator, dataset=dataset, role=Role.ANNOTATOR),
            Membership(user=viewer, dataset=dataset, role=Role.VIEWER),
        ]
    )
    return dataset


@pytest.fixture
def varied(dataset, annotator, curator):
    """Transcripts that each pass a different filter of a transcript list, by title.

    "plain" is old (updated in 2020); "system prompt" was last changed by the curator and is
    approved; "truncated" has an error (E-STREAM-TRUNCATED), "tool call" a warning
    (W-HEADER-MISSING); "json" is in openai-messages and the longest.
    """
    from datetime import UTC, datetime

    from editor import formats
    from editor.models import Status, Transcript
    from editor.storage.create import create_transcript
    from editor.storage.save import save_transcript
    from tests.editor.samples import conversation

    M = formats.Message
    user, final = (
        M(role="user", content="Weather?"),
        M(role="assistant", channel="final", content="Sunny."),
    )
    shapes = {
        "plain": [user, final],
        "tool call": [
            user,
            M(
                role="assistant",
                channel="commentary",
                recipient="functions.weather",
                content="{}",
                end="call",
            ),
            M(role="functions.weather", channel="commentary", recipient="assistant", content="{}"),
            final,
        ],
        "analysis": [user, M(role="assistant", channel="analysis", content="Think."), final],
        "system prompt": [M(role="system", content="Be brief."), user, final],
    }
    made = {
        title: create_transcript(
            dataset,
            author=annotator,
            title=title,
            text=formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=messages)),
        )
        for title, messages in shapes.items()
    }
    made["truncated"] = create_transcript(
        dataset,
        author=annotator,
        title="truncated",
        text="<|start|>user<|message|>Hi<|end|>\n<|start|>assistant<|channel|>final<|message|>Half",
    )
    made["json"] = create_transcript(
        dataset, author=annotator, title="json", text=conversation("openai-messages", turns=3)
    )
    system = made["system prompt"]
    made["system prompt"] = save_transcript(
        system, expected_version=system.version, author=curator, status=Status.APPROVED
    )
    Transcript.objects.filter(pk=made["plain"].pk).update(
        updated_at=datetime(2020, 1, 1, tzinfo=UTC)
    )
    return made


def make_transcript(dataset, author, title, *messages):
    """A transcript in openchatml-2.2 of ``messages``, made through the write path."""
    from editor import formats
    from editor.storage.create import create_transcript

    text = formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=list(messages)))
    return create_transcript(dataset, author=author, title=title, text=text)


@pytest.fixture
def searchable(dataset, annotator):
    """Transcripts to search, by title. "visible": harbour in a user message, lighthouse in
    the final answer; "hidden": one secret word per kind of hidden part (system, analysis,
    tool call, tool reply, the text after a CoT marker), and harbour where the end user sees.
    """
    from editor import formats

    M = formats.Message
    return {
        "visible": make_transcript(
            dataset,
            annotator,
            "visible",
            M(role="user", content="Which harbour?"),
            M(role="assistant", channel="final", content="The lighthouse one."),
        ),
        "hidden": make_transcript(
            dataset,
            annotator,
            "hidden",
            M(role="system", content="Codeword zephyr."),
            M(role="user", content="Any harbour news?"),
            M(role="assistant", channel="analysis", content="Pondering quasar harbour."),
            M(
                role="assistant",
                channel="commentary",
                recipient="functions.lookup",
                content='{"q": "walrus"}',
                end="call",
            ),
            M(
                role="functions.lookup",
                channel="commentary",
                recipient="assistant",
                content='{"a": "narwhal"}',
            ),
            M(
                role="assistant",
                channel="final",
                content="Calm harbour today. <|start_reason|> mango theory",
            ),
        ),
    }
