"""What API reads take from the cache: a transcript's messages (named by its version) and,
with a shared cache, who a bearer token belongs to (forgotten as soon as it may be wrong)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from editor.models import ApiToken

from .conftest import ApiClient, assert_error


def _queries_on(table: str, captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if f'"{table}"' in q["sql"]]


def test_a_transcript_read_again_costs_no_message_query(
    as_annotator, transcript, django_capture_on_commit_callbacks
):
    with (
        CaptureQueriesContext(connection) as cold,
        django_capture_on_commit_callbacks(execute=True),
    ):
        first = as_annotator.get(f"/transcripts/{transcript.pk}")
    with CaptureQueriesContext(connection) as warm:
        again = as_annotator.get(f"/transcripts/{transcript.pk}")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert _queries_on("editor_message", cold)
    assert not _queries_on("editor_message", warm)


def test_a_saved_transcript_is_read_as_saved_not_as_cached(
    as_annotator, transcript, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        before = as_annotator.get(f"/transcripts/{transcript.pk}").json()
    messages = before["messages"]
    messages[0]["content"] = "Changed after it was cached."
    with django_capture_on_commit_callbacks(execute=True):
        saved = as_annotator.put(
            f"/transcripts/{transcript.pk}",
            {"expected_version": before["version"], "messages": messages},
        )
    assert saved.status_code == 200, saved.content
    after = as_annotator.get(f"/transcripts/{transcript.pk}").json()
    assert after["version"] == before["version"] + 1
    assert after["messages"][0]["content"] == "Changed after it was cached."


def _message_reads(captured) -> list[str]:
    return [sql for sql in _queries_on("editor_message", captured) if sql.startswith("SELECT")]


def test_edits_start_from_the_messages_cached_at_their_version(
    as_annotator, transcript, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        version = as_annotator.get(f"/transcripts/{transcript.pk}").json()["version"]
    for content in ("First edit.", "Second edit, from the version the first one wrote."):
        with (
            CaptureQueriesContext(connection) as edit,
            django_capture_on_commit_callbacks(execute=True),
        ):
            saved = as_annotator.patch(
                f"/transcripts/{transcript.pk}/messages/1",
                {"version": version, "content": content},
            )
        assert saved.status_code == 200, saved.content
        assert not _message_reads(edit)
        version = saved.json()["version"]
        stored = [
            m.to_dict() for m in type(transcript).objects.get(pk=transcript.pk).stored_messages()
        ]
        assert saved.json()["message"] == stored[1]
        assert stored[1]["content"] == content
        assert as_annotator.get(f"/transcripts/{transcript.pk}").json()["messages"] == stored


def test_an_edit_without_a_cached_copy_reads_the_rows(as_annotator, transcript):
    cache.clear()
    saved = as_annotator.patch(
        f"/transcripts/{transcript.pk}/messages/0",
        {"version": transcript.version, "content": "Read from the rows."},
    )
    assert saved.status_code == 200, saved.content
    stored = [m.to_dict() for m in type(transcript).objects.get(pk=transcript.pk).stored_messages()]
    assert stored[0]["content"] == "Read from the rows."
    assert stored[1:] == [m.to_dict() for m in transcript.stored_messages()][1:]


def test_a_stale_version_is_refused_even_when_its_messages_are_cached(
    as_annotator, transcript, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        old = as_annotator.get(f"/transcripts/{transcript.pk}").json()["version"]
    with django_capture_on_commit_callbacks(execute=True):
        first = as_annotator.patch(
            f"/transcripts/{transcript.pk}/messages/0", {"version": old, "content": "Won."}
        )
    assert first.status_code == 200
    # The same message changed since: refused (another message would be merged: test_merge).
    late = as_annotator.patch(
        f"/transcripts/{transcript.pk}/messages/0", {"version": old, "content": "Lost."}
    )
    assert_error(late, 409, "version-conflict")
    stored = type(transcript).objects.get(pk=transcript.pk).stored_messages()
    assert stored[0].content == "Won."


@pytest.fixture
def shared_cache(settings):
    settings.REDIS_URL = "redis://shared-cache-stand-in"  # the tests' cache stands in for it


def test_a_token_seen_recently_costs_no_query(shared_cache, client, annotator):
    _, token = ApiToken.issue(annotator)
    with CaptureQueriesContext(connection) as cold:
        assert ApiClient(client, token).get("/datasets").status_code == 200
    with CaptureQueriesContext(connection) as warm:
        assert ApiClient(client, token).get("/datasets").status_code == 200
    assert _queries_on("editor_apitoken", cold)
    assert not _queries_on("editor_apitoken", warm)


def test_a_revoked_token_is_refused_at_once(shared_cache, client, annotator):
    row, token = ApiToken.issue(annotator)
    assert ApiClient(client, token).get("/datasets").status_code == 200
    row.revoke()
    assert_error(ApiClient(client, token).get("/datasets"), 401, "unauthenticated")


def test_a_deleted_token_is_refused_at_once(shared_cache, client, annotator):
    row, token = ApiToken.issue(annotator)
    assert ApiClient(client, token).get("/datasets").status_code == 200
    row.delete()
    assert_error(ApiClient(client, token).get("/datasets"), 401, "unauthenticated")


def test_a_deactivated_users_token_is_refused_at_once(shared_cache, client, annotator):
    _, token = ApiToken.issue(annotator)
    assert ApiClient(client, token).get("/datasets").status_code == 200
    annotator.is_active = False
    annotator.save()
    assert_error(ApiClient(client, token).get("/datasets"), 401, "unauthenticated")


def test_a_user_made_superuser_is_judged_as_one_at_once(shared_cache, client, outsider, dataset):
    _, token = ApiToken.issue(outsider)
    assert ApiClient(client, token).get("/datasets").json()["items"] == []
    outsider.is_superuser = True
    outsider.save()
    assert ApiClient(client, token).get("/datasets").json()["items"] != []


def test_a_bulk_deactivation_reaches_the_api_when_the_entry_expires(
    shared_cache, client, annotator
):
    """A QuerySet.update sends no signal: the cached entry is not dropped, but it lives only
    TOKEN_CACHE_SECONDS (10 s), after which the token's user is read afresh."""
    from unittest import mock

    from django.contrib.auth import get_user_model

    from editor.db import token_cache

    assert token_cache.TOKEN_CACHE_SECONDS <= 10
    _, token = ApiToken.issue(annotator)
    with mock.patch.object(token_cache.cache, "set", wraps=token_cache.cache.set) as stored:
        assert ApiClient(client, token).get("/datasets").status_code == 200
    assert stored.call_args.args[2] == token_cache.TOKEN_CACHE_SECONDS
    get_user_model().objects.filter(pk=annotator.pk).update(is_active=False)
    token_cache.cache.clear()  # what the entry's expiry does
    assert_error(ApiClient(client, token).get("/datasets"), 401, "unauthenticated")
