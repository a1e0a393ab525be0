"""The authorization matrix: every HTML view and every API route, per caller, on an object of
the caller's dataset and on one of another dataset.

Rules the table holds (issue 12, item 3):
- an object of a dataset the caller has no role in is a 404, never a 403 (existence never
  leaks): the ``other`` column, asked by every member of ``home`` for the object of ``away``;
- anonymous HTML requests are redirected to the login page, anonymous API requests are 401;
- viewers read end-user renderings only and write nothing (403);
- curator-only actions refuse annotators and reviewers.

``test_every_route_is_in_the_matrix`` fails when a URL pattern or an API operation is missing
from ``MATRIX``: a new route must be added here with its expected statuses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from editor import alternatives, formats, queues, versions
from editor.exporting.tasks import run_export_task, start_export_task
from editor.labels import create_label_schema
from editor.models import (
    ApiToken,
    BulkTask,
    Dataset,
    DatasetTokenizer,
    ImportTask,
    Membership,
    ModelConnection,
    PreferencePair,
    Role,
    WebhookDelivery,
    WebhookEndpoint,
)
from editor.storage.create import create_transcript
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

CALLERS = ("anonymous", "outsider", "viewer", "annotator", "reviewer", "curator")
MEMBERS = ("viewer", "annotator", "reviewer", "curator")
LOGIN = "/accounts/login/"
HIDDEN = "HIDDEN-FROM-END-USERS"

QUESTIONS = [
    {
        "key": "helpful",
        "kind": "choice",
        "prompt": "Helpful?",
        "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}],
    }
]


@dataclass
class World:
    """Two datasets with the same kinds of objects: ``home`` (where the callers hold their
    roles) and ``away`` (where only ``outsider`` is a member)."""

    users: dict
    objects: dict = field(default_factory=dict)  # "home"/"away" -> {kind: value}


def _with_hidden_parts() -> str:
    """A transcript whose hidden parts (system, analysis) carry ``HIDDEN``."""
    m = formats.Message
    messages = [
        m(role="user", content="Weather?"),
        m(role="system", content=f"{HIDDEN} system prompt"),
        m(role="assistant", channel="analysis", content=f"{HIDDEN} reasoning"),
        m(role="assistant", channel="final", content="Sunny."),
    ]
    return formats.serialize(formats.Transcript(spec="openchatml-2.2", messages=messages))


def _populate(dataset, curator, annotator, tag):
    transcript = create_transcript(
        dataset,
        author=curator,
        text=_with_hidden_parts(),
        spec="openchatml-2.2",
        title=f"{tag} one",
    )
    spare = create_transcript(
        dataset, author=curator, text=conversation(), spec="openchatml-2.2", title=f"{tag} two"
    )
    queue = queues.create_queue(dataset, [transcript, spare], name=f"{tag} queue", author=curator)
    assignment = queues.claim_next(queue, annotator)
    schema = create_label_schema(dataset, author=curator, name=f"{tag} labels", questions=QUESTIONS)
    from editor.labels.annotations import create_annotation

    annotation = create_annotation(
        transcript, annotator=annotator, schema=schema, question="helpful", value="yes"
    )
    task = ImportTask.objects.create(dataset=dataset, created_by=curator, source_name="x.jsonl")
    export = start_export_task(dataset, curator, format="jsonl")
    bulk_task = BulkTask.objects.create(
        dataset=dataset, created_by=curator, action="revalidate", transcript_ids=[spare.pk]
    )
    run_export_task(export.pk)
    # The tokenizer its members read (and curators change or remove).
    DatasetTokenizer.objects.create(
        dataset=dataset, kind="tiktoken", encoding="cl100k_base", name="cl100k_base"
    )
    # An imported pair the annotator recorded: theirs to exclude, and any curator's.
    pair = PreferencePair.objects.create(
        transcript=transcript,
        message_index=3,
        source="import",
        prompt=[],
        chosen=[],
        rejected=[],
        author=annotator,
    )
    # The turn at message 2 (the analysis and the final answer) with an annotator's
    # alternative: its creator and curators may delete it.
    alternative = alternatives.add_alternative(
        transcript, 2, [{"role": "assistant", "content": "Rainy."}], source="hand", author=annotator
    )
    # A webhook endpoint with one delivery, and a version (created by the curator).
    webhook = WebhookEndpoint.objects.create(
        dataset=dataset, url="http://93.184.216.34/hook", secret="whsec_AAAA"
    )
    delivery = WebhookDelivery.objects.create(
        endpoint=webhook, message_id=f"msg_{tag}", event_type="export.ready", payload={}
    )
    dataset_version = versions.create_version(dataset, f"{tag}-v1", author=curator)
    # A model connection to a port nobody listens on: a test call fails at once.
    model_connection = ModelConnection.objects.create(
        dataset=dataset, name=f"{tag}-model", base_url="http://127.0.0.1:9/v1", model="m"
    )
    # A judge on its own connection, an ended run of it and the suggestion it left.
    from editor.assist.judges import DEFAULT_PROMPT_TEMPLATE
    from editor.models import Judge, JudgeRun, Suggestion, TaskStatus

    judge = Judge.objects.create(
        schema=schema,
        question="helpful",
        prompt_template=DEFAULT_PROMPT_TEMPLATE,
        connection=ModelConnection.objects.create(
            dataset=dataset, name=f"{tag}-judge", base_url="http://127.0.0.1:9/v1", model="m"
        ),
    )
    judge_run = JudgeRun.objects.create(
        dataset=dataset,
        judge=judge,
        schema_version=schema.current_version,
        created_by=curator,
        status=TaskStatus.FAILED,
        transcript_ids=[transcript.pk, spare.pk],
    )
    suggestion = Suggestion.objects.create(
        transcript=transcript,
        schema_version=schema.current_version,
        question="helpful",
        value="no",
        model="m",
        run=judge_run,
    )
    return {
        "judge": judge.pk,
        "judge_run": judge_run.pk,
        "suggestion": suggestion.pk,
        "model_connection": model_connection.pk,
        "webhook": webhook.pk,
        "delivery": delivery.pk,
        "dataset_version": dataset_version.name,
        "alternative": alternative.pk,
        "slug": dataset.slug,
        "transcript": transcript.pk,
        "version": transcript.version,
        "queue": queue.pk,
        "assignment": assignment.pk,
        "schema": schema.pk,
        "annotation": annotation.pk,
        "import": task.pk,
        "export": export.pk,
        "bulk": bulk_task.pk,
        "pair": pair.pk,
    }


@pytest.fixture
def world(django_user_model):
    users = {name: django_user_model.objects.create_user(name) for name in CALLERS[1:]}
    users["anonymous"] = None
    home = Dataset.objects.create(name="Home", slug="home")
    away = Dataset.objects.create(name="Away", slug="away")
    for name in MEMBERS:
        Membership.objects.create(user=users[name], dataset=home, role=name)
    away_curator = django_user_model.objects.create_user("away-curator")
    away_annotator = django_user_model.objects.create_user("away-annotator")
    Membership.objects.create(user=away_curator, dataset=away, role=Role.CURATOR)
    Membership.objects.create(user=away_annotator, dataset=away, role=Role.ANNOTATOR)
    Membership.objects.create(user=users["outsider"], dataset=away, role=Role.CURATOR)
    return World(
        users=users,
        objects={
            "home": _populate(home, users["curator"], users["annotator"], "home"),
            "away": _populate(away, away_curator, away_annotator, "away"),
        },
    )


def client_for(world, caller, api):
    user = world.users[caller]
    client = Client()
    headers = {}
    if user is not None:
        if api:
            headers = {"Authorization": f"Bearer {ApiToken.issue(user)[1]}"}
        else:
            client.force_login(user)
    return client, headers


def call(world, caller, route, where):
    """One cell: the request, in a savepoint rolled back after it (each cell starts afresh)."""
    with transaction.atomic():
        response = _request(world, caller, route, where)
        transaction.set_rollback(True)
    return response


def _request(world, caller, route, where):
    objects = world.objects[where]
    client, headers = client_for(world, caller, route.api)
    if route.htmx:
        headers = {**headers, "HX-Request": "true"}
    url = ("/api/v1" if route.api else "") + route.path.format(**objects)
    body = route.body(objects) if callable(route.body) else route.body
    method = route.method.lower()
    if route.multipart:
        return client.post(url, body, headers=headers)
    if route.api and method in {"post", "put", "patch"}:
        return getattr(client, method)(
            url, json.dumps(body or {}), content_type="application/json", headers=headers
        )
    if method == "post":
        return client.post(url, body or {}, headers=headers)
    if method == "delete":
        return client.delete(url, headers=headers)
    return getattr(client, method)(url, body or {}, headers=headers)


@dataclass(frozen=True)
class Route:
    key: str  # the URL name (HTML) or "METHOD /api/path" (API), as the resolver names it
    method: str
    path: str  # formatted with the objects of the dataset asked about
    expected: dict  # caller -> status, for the object of the caller's own dataset ("home")
    body: object = None
    api: bool = False
    scoped: bool = True  # False: the route names no object of a dataset (nothing in "away")
    multipart: bool = False
    htmx: bool = False  # sent as htmx does (HX-Request): the fragment, not a redirect


def html(name, method, path, expected, body=None, scoped=True, htmx=False):
    expanded = _expand(expected, api=False)
    return Route(name, method, path, expanded, body, False, scoped, htmx=htmx)


PK_OF = {
    "/transcripts/": "transcript",
    "/queues/": "queue",
    "/assignments/": "assignment",
    "/label-schemas/": "schema",
    "/annotations/": "annotation",
    "/imports/": "import",
    "/exports/": "export",
    "/bulk/": "bulk",
    "/pairs/": "pair",
    "/judge-runs/": "judge_run",
    "/suggestions/": "suggestion",
}


def api(method, path, expected, body=None, query="", scoped=True, multipart=False):
    """``path`` as the OpenAPI schema spells it; its parameters are filled from the objects."""
    concrete = path.replace("{index}", "0").replace("{number}", "1")
    concrete = concrete.replace("{username}", "viewer").replace("{invitation_id}", "999999")
    concrete = concrete.replace("{alt_id}", "{alternative}")
    concrete = concrete.replace("{delivery_id}", "{delivery}")
    concrete = concrete.replace("{name}", "{dataset_version}")
    concrete = concrete.replace("{other}", "{dataset_version}")
    if path.startswith("/datasets/{slug}/webhooks/"):
        concrete = concrete.replace("{pk}", "{webhook}")
    if path.startswith("/datasets/{slug}/judges/"):
        concrete = concrete.replace("{pk}", "{judge}")
    if path.startswith("/datasets/{slug}/model-connections/"):
        concrete = concrete.replace("{pk}", "{model_connection}")
    for prefix, kind in PK_OF.items():
        if path.startswith(prefix):
            concrete = concrete.replace("{pk}", "{" + kind + "}")
    key = f"{method.upper()} {path}"
    expanded = _expand(expected, api=True)
    return Route(key, method, concrete + query, expanded, body, True, scoped, multipart)


def _expand(expected: str, *, api: bool) -> dict:
    """``"v a r c"`` statuses for viewer, annotator, reviewer, curator; the anonymous caller
    (302 to the login page / 401) and the outsider (404) follow the rules unless given."""
    parts = expected.split()
    statuses = [int(part) for part in parts]
    if len(statuses) == 4:
        statuses = [401 if api else 302, 404, *statuses]
    return dict(zip(CALLERS, statuses, strict=True))


def _version(o):
    return {"version": o["version"]}


def _version(o):
    return {"version": o["version"]}


def _tokenizer_upload(o):
    """A tokenizer.json: a tiny BPE trained here (nothing downloaded)."""
    from tokenizers import Tokenizer, models, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.train_from_iterator(["hi there"], trainers.BpeTrainer(special_tokens=["[UNK]"]))
    return {"file": SimpleUploadedFile("tokenizer.json", tokenizer.to_str().encode())}


def _upload(o):
    line = json.dumps({"text": "<|start|>user<|message|>Hi<|end|>", "spec": "openchatml-2.2"})
    return {"file": SimpleUploadedFile("more.jsonl", line.encode() + b"\n")}


TEXT = "<|start|>user<|message|>Hi<|end|>"
ANSWER = {"question": "helpful", "value": "no"}

# Columns: viewer annotator reviewer curator, on the object of their own dataset; anonymous
# (302 to the login page / 401) and outsider (404) are implied unless six are given.
# 302 on an HTML write is its redirect after success (not the login redirect: checked).
MATRIX = [
    # --- HTML views ------------------------------------------------------------------------
    html("dashboard", "GET", "/", "302 200 200 200 200 200", scoped=False),
    # A turn's alternatives (htmx fragments); the annotator added the one of the turn at 2.
    html(
        "alternatives-panel",
        "GET",
        "/transcripts/{transcript}/alternatives/3/",
        "403 200 200 200",
        htmx=True,
    ),
    html(
        "alternative-add",
        "POST",
        "/transcripts/{transcript}/alternatives/add/",
        "403 200 200 200",
        {"message_index": 2, "messages": "Snow."},
        htmx=True,
    ),
    html(
        "alternative-promote",
        "POST",
        "/transcripts/{transcript}/alternatives/{alternative}/promote/",
        "403 204 204 204",
        _version,
        htmx=True,
    ),
    html(
        "alternative-delete",
        "POST",
        "/transcripts/{transcript}/alternatives/{alternative}/delete/",
        "403 200 403 200",
        htmx=True,
    ),
    html(
        "dataset-create",
        "POST",
        "/datasets/",
        "302 302 302 302 302 302",
        {"name": "New", "slug": "new", "default_spec": "openchatml-2.2"},
        scoped=False,
    ),
    html("dataset", "GET", "/datasets/{slug}/", "200 200 200 200"),
    # The page's sections below the table, fetched after it (htmx); without htmx, a page each.
    html(
        "dataset-queues-section",
        "GET",
        "/datasets/{slug}/sections/queues/",
        "200 200 200 200",
        htmx=True,
    ),
    html(
        "dataset-members-section",
        "GET",
        "/datasets/{slug}/sections/members/",
        "200 200 200 200",
        htmx=True,
    ),
    html("dataset-members-section", "GET", "/datasets/{slug}/sections/members/", "200 200 200 200"),
    html(
        "dataset-import-section",
        "GET",
        "/datasets/{slug}/sections/import/",
        "403 200 200 200",
        htmx=True,
    ),
    html("dataset-import-section", "GET", "/datasets/{slug}/sections/import/", "403 200 200 200"),
    html(
        "dataset-export-section",
        "GET",
        "/datasets/{slug}/sections/export/",
        "200 200 200 200",
        htmx=True,
    ),
    html(
        "dataset-edit",
        "POST",
        "/datasets/{slug}/edit/",
        "403 403 403 302",
        {"name": "Renamed", "description": "", "default_spec": "openchatml-2.2"},
    ),
    # The curator's cell: a wrong confirmation (400); the deletion itself is in the API's row.
    html(
        "dataset-delete", "POST", "/datasets/{slug}/delete/", "403 403 403 400", {"confirm": "no"}
    ),
    html(
        "member-add",
        "POST",
        "/datasets/{slug}/members/",
        "403 403 403 302",
        {"username": "away-curator", "role": "viewer"},
    ),
    html(
        "member-role",
        "POST",
        "/datasets/{slug}/members/viewer/",
        "403 403 403 302",
        {"role": "annotator"},
    ),
    html("member-remove", "POST", "/datasets/{slug}/members/viewer/remove/", "403 403 403 302"),
    html(
        "invitation-withdraw",
        "POST",
        "/datasets/{slug}/invitations/away-curator/withdraw/",
        "403 403 403 302",
    ),
    # Nobody has an invitation here: whoever asks, no such invitation for them.
    html(
        "invitation-accept",
        "POST",
        "/invitations/999999/accept/",
        "302 404 404 404 404 404",
        scoped=False,
    ),
    html(
        "invitation-decline",
        "POST",
        "/invitations/999999/decline/",
        "302 404 404 404 404 404",
        scoped=False,
    ),
    html(
        "dataset-import",
        "POST",
        "/datasets/{slug}/import/",
        "403 302 302 302",
        lambda o: {**_upload(o), "on_conflict": "update"},
    ),
    html("dataset-export", "GET", "/datasets/{slug}/export/?format=jsonl", "403 200 200 200"),
    html(
        "dataset-export",
        "GET",
        "/datasets/{slug}/export/?format=jsonl&audience=end_user",
        "200 200 200 200",
    ),
    html("import-task", "GET", "/imports/{import}/", "200 200 200 200"),
    html(
        "export-task-start",
        "POST",
        "/datasets/{slug}/exports/",
        "403 302 302 302",
        {"format": "jsonl"},
    ),
    html(
        "export-task-start",
        "POST",
        "/datasets/{slug}/exports/",
        "302 302 302 302",
        {"format": "jsonl", "audience": "end_user"},
    ),
    # The export of the objects is a full-content one: viewers may not see it.
    html("export-task", "GET", "/exports/{export}/", "403 200 200 200"),
    html("export-task-download", "GET", "/exports/{export}/download/", "403 200 200 200"),
    html(
        "dataset-bulk",
        "POST",
        "/datasets/{slug}/bulk/",
        "403 302 302 302",
        lambda o: {"action": "revalidate", "ids": [o["transcript"]]},
    ),
    html("bulk-task", "GET", "/bulk/{bulk}/", "200 200 200 200"),
    html(
        "queue-create",
        "POST",
        "/datasets/{slug}/queues/",
        "403 403 403 302",
        {"name": "Another", "overlap": "1", "reservation_minutes": "30"},
    ),
    html("queue", "GET", "/queues/{queue}/", "403 200 200 200"),
    html("queue-claim", "POST", "/queues/{queue}/claim/", "403 302 302 302"),
    html("queue-schemas", "POST", "/queues/{queue}/schemas/", "403 403 403 302", {"schemas": []}),
    html("queue-review", "GET", "/queues/{queue}/review/", "403 403 200 200"),
    html("queue-dashboard", "GET", "/queues/{queue}/dashboard/", "403 403 200 200"),
    # The assignment is the annotator's: nobody else submits, skips or answers it.
    html("assignment-move", "POST", "/assignments/{assignment}/submit/", "403 302 403 403"),
    html("assignment-move", "POST", "/assignments/{assignment}/skip/", "403 302 403 403"),
    html("assignment-resume", "POST", "/assignments/{assignment}/resume/", "403 302 403 403"),
    # Answers and tags are one's own: every editor gives theirs; viewers none.
    html(
        "transcript-answer",
        "POST",
        "/transcripts/{transcript}/answers/",
        "403 200 200 200",
        lambda o: {"schema": o["schema"], **ANSWER},
    ),
    html(
        "transcript-span",
        "POST",
        "/transcripts/{transcript}/spans/",
        "403 200 200 200",
        lambda o: {"schema": o["schema"], **ANSWER, "message_index": 0, "start": 0, "end": 1},
    ),
    # The annotation is the annotator's draft: nobody else removes it.
    html("annotation-delete", "POST", "/annotations/{annotation}/delete/", "403 200 403 403"),
    html("label-schemas", "GET", "/datasets/{slug}/labels/", "403 403 403 200"),
    html(
        "label-schema-save",
        "POST",
        "/datasets/{slug}/labels/save/",
        "403 403 403 302",
        {"name": "More", "questions": json.dumps(QUESTIONS)},
    ),
    html(
        "assignment-review",
        "POST",
        "/assignments/{assignment}/review/",
        "403 403 302 302",
        {"decision": "approve"},
    ),
    html("transcript", "GET", "/transcripts/{transcript}/", "200 200 200 200"),
    html("transcript", "GET", "/transcripts/{transcript}/?audience=annotator", "403 200 200 200"),
    html("transcript", "GET", "/transcripts/{transcript}/?audience=debug", "403 200 200 200"),
    # The training rendering shows hidden channels: the annotator rendering's roles.
    html("transcript", "GET", "/transcripts/{transcript}/?audience=training", "403 200 200 200"),
    html(
        "transcript-undo",
        "POST",
        "/transcripts/{transcript}/undo/",
        "403 302 302 302",
        lambda o: {"revision": 1, **_version(o)},
    ),
    # No such quick fix: a 409 to editors, still a 403 to viewers.
    html(
        "transcript-fix",
        "POST",
        "/transcripts/{transcript}/fixes/",
        "403 409 409 409",
        lambda o: {"code": "W-NONE", "fix_id": "x", **_version(o)},
    ),
    html(
        "transcript-transition",
        "POST",
        "/transcripts/{transcript}/status/",
        "403 302 302 302",
        lambda o: {"name": "submit", **_version(o)},
    ),
    html("message-new", "GET", "/transcripts/{transcript}/messages/new/", "403 200 200 200"),
    html(
        "message-insert",
        "POST",
        "/transcripts/{transcript}/messages/insert/",
        "403 302 302 302",
        lambda o: {"after": 0, "role": "user", "content": "Hi", **_version(o)},
    ),
    # Without htmx a message's URL redirects to its place on the page.
    html("message", "GET", "/transcripts/{transcript}/messages/0/", "302 302 302 302"),
    html(
        "message",
        "GET",
        "/transcripts/{transcript}/messages/2/?audience=annotator",
        "403 302 302 302",
    ),
    # The fragment of a hidden message (2: analysis), as htmx asks for it: a viewer's has
    # no hidden content (checked on every viewer 200).
    html("message", "GET", "/transcripts/{transcript}/messages/2/", "200 200 200 200", htmx=True),
    html("message-edit", "GET", "/transcripts/{transcript}/messages/0/edit/", "403 302 302 302"),
    html(
        "message-save",
        "POST",
        "/transcripts/{transcript}/messages/0/save/",
        "403 302 302 302",
        lambda o: {"content": "Changed", **_version(o)},
    ),
    html(
        "message-validate",
        "POST",
        "/transcripts/{transcript}/messages/0/validate/",
        "403 200 200 200",
        {"content": "Draft"},
    ),
    html(
        "message-resolve",
        "POST",
        "/transcripts/{transcript}/messages/0/resolve/",
        "403 302 302 302",
        lambda o: {"choice": "theirs", **_version(o)},
    ),
    html(
        "message-delete",
        "POST",
        "/transcripts/{transcript}/messages/0/delete/",
        "403 302 302 302",
        _version,
    ),
    html(
        "message-move",
        "POST",
        "/transcripts/{transcript}/messages/0/move/",
        "403 302 302 302",
        lambda o: {"to": 1, **_version(o)},
    ),
    html(
        "message-duplicate",
        "POST",
        "/transcripts/{transcript}/messages/0/duplicate/",
        "403 302 302 302",
        _version,
    ),
    html("transcript-source", "GET", "/transcripts/{transcript}/source/", "403 200 200 200"),
    html(
        "transcript-source",
        "POST",
        "/transcripts/{transcript}/source/",
        "403 302 302 302",
        lambda o: {"text": TEXT, **_version(o)},
    ),
    html(
        "transcript-presence",
        "POST",
        "/transcripts/{transcript}/presence/",
        "200 200 200 200",
        {"seen": 1},
    ),
    html(
        "transcript-source-validate",
        "POST",
        "/transcripts/{transcript}/source/validate/",
        "403 200 200 200",
        {"text": TEXT},
    ),
    html(
        "transcript-source-convert",
        "POST",
        "/transcripts/{transcript}/source/convert/",
        "403 200 200 200",
        {"text": TEXT, "convert_to": "chatml"},
    ),
    html("transcript-export", "GET", "/transcripts/{transcript}/export/", "403 200 200 200"),
    html(
        "transcript-export",
        "GET",
        "/transcripts/{transcript}/export/?audience=end_user",
        "200 200 200 200",
    ),
    html("transcript-history", "GET", "/transcripts/{transcript}/history/", "403 200 200 200"),
    # Pairs hold hidden channels: the annotator's rendering's audience reads them.
    html("transcript-pairs", "GET", "/transcripts/{transcript}/pairs/", "403 200 200 200"),
    html("dataset-pairs", "GET", "/datasets/{slug}/pairs/", "403 200 200 200"),
    html("pair-exclude", "POST", "/pairs/{pair}/exclude/", "403 302 403 302"),
    # The Judges page and its runs: curators.
    html("dataset-judges", "GET", "/datasets/{slug}/judges/", "403 403 403 200"),
    html(
        "judge-attach",
        "POST",
        "/datasets/{slug}/judges/attach/",
        "403 403 403 302",
        lambda o: {"question": f"{o['schema']}:helpful", "connection": o["model_connection"]},
    ),
    html("judge-run-start", "POST", "/datasets/{slug}/judges/{judge}/run/", "403 403 403 302"),
    html("judge-run-row", "GET", "/judge-runs/{judge_run}/", "403 403 403 200"),
    html("judge-run-cancel", "POST", "/judge-runs/{judge_run}/cancel/", "403 403 403 302"),
    html("judge-run-resume", "POST", "/judge-runs/{judge_run}/resume/", "403 403 403 302"),
    # A model's suggestion becomes the caller's answer: the roles that label.
    html("suggestion-accept", "POST", "/suggestions/{suggestion}/accept/", "403 302 302 302"),
    html("pair-include", "POST", "/pairs/{pair}/include/", "403 302 403 302"),
    html("dataset-models", "GET", "/datasets/{slug}/models/", "403 403 403 200"),
    html(
        "dataset-model-create",
        "POST",
        "/datasets/{slug}/models/add/",
        "403 403 403 302",
        {"name": "matrix", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
    ),
    html(
        "dataset-model-update",
        "POST",
        "/datasets/{slug}/models/{model_connection}/",
        "403 403 403 302",
        {"name": "renamed", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
    ),
    html(
        "dataset-model-delete",
        "POST",
        "/datasets/{slug}/models/{model_connection}/delete/",
        "403 403 403 302",
    ),
    # The connection's server is not listening: the page shows the error (200).
    html(
        "dataset-model-test",
        "POST",
        "/datasets/{slug}/models/{model_connection}/test/",
        "403 403 403 200",
    ),
    html("dataset-webhooks", "GET", "/datasets/{slug}/webhooks/", "403 403 403 200"),
    html(
        "webhook-create",
        "POST",
        "/datasets/{slug}/webhooks/add/",
        "403 403 403 302",
        {"url": "http://93.184.216.34/"},
    ),
    html("webhook-detail", "GET", "/datasets/{slug}/webhooks/{webhook}/", "403 403 403 200"),
    html(
        "webhook-toggle", "POST", "/datasets/{slug}/webhooks/{webhook}/toggle/", "403 403 403 302"
    ),
    html(
        "webhook-delete", "POST", "/datasets/{slug}/webhooks/{webhook}/delete/", "403 403 403 302"
    ),
    html("webhook-test", "POST", "/datasets/{slug}/webhooks/{webhook}/test/", "403 403 403 302"),
    html(
        "webhook-delivery-resend",
        "POST",
        "/datasets/{slug}/webhooks/{webhook}/deliveries/{delivery}/resend/",
        "403 403 403 302",
    ),
    html("dataset-versions", "GET", "/datasets/{slug}/versions/", "200 200 200 200"),
    html(
        "dataset-version-create",
        "POST",
        "/datasets/{slug}/version-create/",
        "403 403 403 302",
        {"name": "matrix"},
    ),
    html(
        "dataset-version", "GET", "/datasets/{slug}/versions/{dataset_version}/", "200 200 200 200"
    ),
    html(
        "dataset-version-export",
        "GET",
        "/datasets/{slug}/versions/{dataset_version}/export/",
        "403 200 200 200",
    ),
    html(
        "dataset-version-compare",
        "GET",
        "/datasets/{slug}/versions/{dataset_version}/compare/?to={dataset_version}",
        "200 200 200 200",
    ),
    html("dataset-tokenizer", "GET", "/datasets/{slug}/tokenizer/", "200 200 200 200"),
    html(
        "dataset-tokenizer-set",
        "POST",
        "/datasets/{slug}/tokenizer/set/",
        "403 403 403 302",
        {"source": "cl100k_base", "context_length": "4096"},
    ),
    html(
        "dataset-tokenizer-delete", "POST", "/datasets/{slug}/tokenizer/delete/", "403 403 403 302"
    ),
    html(
        "revision-restore",
        "GET",
        "/transcripts/{transcript}/revisions/1/restore/",
        "403 200 200 200",
    ),
    html(
        "revision-restore",
        "POST",
        "/transcripts/{transcript}/revisions/1/restore/",
        "403 302 302 302",
        lambda o: {"expected_version": o["version"]},
    ),
    # --- API routes ------------------------------------------------------------------------
    api("get", "/formats/specs", "401 200 200 200 200 200", scoped=False),
    api("post", "/formats/detect", "401 200 200 200 200 200", {"text": TEXT}, scoped=False),
    api("post", "/formats/parse", "401 200 200 200 200 200", {"text": TEXT}, scoped=False),
    api("post", "/validate", "401 200 200 200 200 200", {"text": TEXT}, scoped=False),
    api(
        "post",
        "/convert",
        "401 200 200 200 200 200",
        {"text": TEXT, "to": "chatml"},
        scoped=False,
    ),
    api("post", "/render", "401 200 200 200 200 200", {"text": TEXT}, scoped=False),
    api("get", "/datasets", "401 200 200 200 200 200", scoped=False),
    api("get", "/datasets/{slug}", "200 200 200 200"),
    api(
        "post",
        "/datasets",
        "401 201 201 201 201 201",
        {"name": "New", "slug": "new"},
        scoped=False,
    ),
    api("patch", "/datasets/{slug}", "403 403 403 200", {"name": "Renamed"}),
    api("delete", "/datasets/{slug}", "403 403 403 204"),
    api("get", "/datasets/{slug}/members", "200 200 200 200"),
    api("get", "/datasets/{slug}/member-changes", "200 200 200 200"),
    api("get", "/datasets/{slug}/edits", "200 200 200 200"),
    api("post", "/datasets/{slug}/members", "403 403 403 202", {"username": "away-curator"}),
    api("get", "/datasets/{slug}/invitations", "403 403 403 200"),
    api("delete", "/datasets/{slug}/invitations/{username}", "403 403 403 404"),
    api("get", "/invitations", "401 200 200 200 200 200", scoped=False),
    api("post", "/invitations/{invitation_id}/accept", "401 404 404 404 404 404", scoped=False),
    api("post", "/invitations/{invitation_id}/decline", "401 404 404 404 404 404", scoped=False),
    api("patch", "/datasets/{slug}/members/{username}", "403 403 403 200", {"role": "annotator"}),
    api("delete", "/datasets/{slug}/members/{username}", "403 403 403 204"),
    api("get", "/datasets/{slug}/export", "403 200 200 200"),
    api("get", "/datasets/{slug}/export", "200 200 200 200", query="?audience=end_user"),
    api("get", "/datasets/{slug}/transcripts", "200 200 200 200"),
    api(
        "post",
        "/datasets/{slug}/transcripts",
        "403 201 201 201",
        {"text": TEXT, "spec": "openchatml-2.2"},
    ),
    api("post", "/datasets/{slug}/imports", "403 202 202 202", _upload, multipart=True),
    api("get", "/imports/{pk}", "200 200 200 200"),
    api("post", "/datasets/{slug}/exports", "403 202 202 202", {"format": "jsonl"}),
    api(
        "post",
        "/datasets/{slug}/exports",
        "202 202 202 202",
        {"format": "jsonl", "audience": "end_user"},
    ),
    api("get", "/exports/{pk}", "403 200 200 200"),
    api(
        "post",
        "/datasets/{slug}/bulk",
        "403 200 200 200",
        lambda o: {"action": "revalidate", "ids": [o["transcript"]]},
    ),
    api("get", "/bulk/{pk}", "200 200 200 200"),
    api("get", "/exports/{pk}/download", "403 200 200 200"),
    api("get", "/transcripts/{pk}", "403 200 200 200"),
    api(
        "put",
        "/transcripts/{pk}",
        "403 200 200 200",
        lambda o: {"expected_version": o["version"], "title": "Renamed"},
    ),
    api("delete", "/transcripts/{pk}", "403 200 200 200", query="?expected_version=1"),
    # Curators only; the transcript is not deleted, so the curator's answer is a 400.
    api("post", "/transcripts/{pk}/undelete", "403 403 403 400"),
    api("get", "/transcripts/{pk}/render", "200 200 200 200", query="?audience=end_user"),
    api("get", "/transcripts/{pk}/render", "403 200 200 200", query="?audience=annotator"),
    api("get", "/transcripts/{pk}/render", "403 200 200 200", query="?audience=debug"),
    api("get", "/transcripts/{pk}/render", "403 200 200 200", query="?audience=training"),
    api("get", "/transcripts/{pk}/export", "403 200 200 200"),
    api("get", "/transcripts/{pk}/export", "200 200 200 200", query="?audience=end_user"),
    api("get", "/transcripts/{pk}/validate", "403 200 200 200"),
    api("get", "/transcripts/{pk}/revisions", "200 200 200 200"),
    api("get", "/transcripts/{pk}/revisions/{number}", "403 200 200 200"),
    api("get", "/transcripts/{pk}/diff", "403 200 200 200", query="?from=1&to=1"),
    api(
        "post",
        "/transcripts/{pk}/revisions/{number}/restore",
        "403 200 200 200",
        lambda o: {"expected_version": o["version"]},
    ),
    api("get", "/transcripts/{pk}/messages/{index}", "403 200 200 200"),
    api(
        "patch",
        "/transcripts/{pk}/messages/{index}",
        "403 200 200 200",
        lambda o: {"content": "Changed", **_version(o)},
    ),
    api("delete", "/transcripts/{pk}/messages/{index}", "403 200 200 200", query="?version=1"),
    api(
        "post",
        "/transcripts/{pk}/messages",
        "403 201 201 201",
        lambda o: {"message": {"role": "user", "content": "Hi"}, **_version(o)},
    ),
    api(
        "post",
        "/transcripts/{pk}/messages/{index}/move",
        "403 200 200 200",
        lambda o: {"to": 1, **_version(o)},
    ),
    api("post", "/transcripts/{pk}/messages/{index}/duplicate", "403 201 201 201", _version),
    api(
        "post",
        "/transcripts/{pk}/fixes",
        "403 409 409 409",
        lambda o: {"code": "W-NONE", "message_index": None, "fix_id": "x", **_version(o)},
    ),
    api(
        "post",
        "/transcripts/{pk}/source",
        "403 200 200 200",
        lambda o: {"text": TEXT, **_version(o)},
    ),
    api("post", "/transcripts/{pk}/drafts/validate", "403 200 200 200", {"text": TEXT}),
    api("get", "/transcripts/{pk}/transitions", "200 200 200 200"),
    api(
        "post",
        "/transcripts/{pk}/transitions",
        "403 200 200 200",
        lambda o: {"name": "submit", **_version(o)},
    ),
    api("get", "/datasets/{slug}/queues", "200 200 200 200"),
    api("post", "/datasets/{slug}/queues", "403 403 403 201", {"name": "Another"}),
    api("get", "/queues/{pk}", "200 200 200 200"),
    api("post", "/queues/{pk}/claim", "403 200 200 200"),
    api("get", "/queues/{pk}/figures", "403 403 200 200"),
    api("put", "/queues/{pk}/schemas", "403 403 403 200", {"schemas": []}),
    api("get", "/queues/{pk}/assignments", "200 200 200 200"),
    api("post", "/assignments/{pk}/submit", "403 200 403 403"),
    api("post", "/assignments/{pk}/skip", "403 200 403 403"),
    # The assignment is claimed, not submitted: nothing to review yet (409) for reviewers.
    api("post", "/assignments/{pk}/review", "403 403 409 409", {"decision": "approve"}),
    api("get", "/datasets/{slug}/label-schemas", "200 200 200 200"),
    api(
        "post",
        "/datasets/{slug}/label-schemas",
        "403 403 403 201",
        {"name": "More", "questions": QUESTIONS},
    ),
    api("get", "/label-schemas/{pk}", "200 200 200 200"),
    api("post", "/label-schemas/{pk}/versions", "403 403 403 200", {"questions": QUESTIONS}),
    api("get", "/label-schemas/{pk}/versions", "200 200 200 200"),
    api("get", "/label-schemas/{pk}/versions/{number}", "200 200 200 200"),
    api("post", "/label-schemas/{pk}/archive", "403 403 403 200", {"archived": True}),
    api("get", "/transcripts/{pk}/pairs", "403 200 200 200"),
    api("get", "/datasets/{slug}/pairs", "403 200 200 200"),
    api("post", "/pairs/{pk}/exclude", "403 200 403 200"),
    api("post", "/pairs/{pk}/include", "403 200 403 200"),
    api("get", "/datasets/{slug}/webhooks", "403 403 403 200"),
    api("post", "/datasets/{slug}/webhooks", "403 403 403 201", {"url": "http://93.184.216.34/"}),
    api("get", "/datasets/{slug}/webhooks/{pk}", "403 403 403 200"),
    api("patch", "/datasets/{slug}/webhooks/{pk}", "403 403 403 200", {"description": "x"}),
    api("delete", "/datasets/{slug}/webhooks/{pk}", "403 403 403 204"),
    api("get", "/datasets/{slug}/webhooks/{pk}/deliveries", "403 403 403 200"),
    api(
        "post", "/datasets/{slug}/webhooks/{pk}/deliveries/{delivery_id}/resend", "403 403 403 202"
    ),
    api("get", "/datasets/{slug}/versions", "200 200 200 200"),
    api("post", "/datasets/{slug}/versions", "403 403 403 201", {"name": "matrix"}),
    api("get", "/datasets/{slug}/versions/{name}", "200 200 200 200"),
    # A version's export holds everything: viewers read end-user renderings only.
    api("get", "/datasets/{slug}/versions/{name}/export", "403 200 200 200"),
    api("get", "/datasets/{slug}/versions/{name}/diff/{other}", "200 200 200 200"),
    # Judges: curators attach and run them; the roles that see hidden parts read them and
    # their suggestions (a judge read the whole transcript); annotators accept suggestions.
    api("get", "/datasets/{slug}/judges", "403 200 200 200"),
    api(
        "post",
        "/datasets/{slug}/judges",
        "403 403 403 201",
        lambda o: {
            "schema": o["schema"],
            "question": "helpful",
            "connection": o["model_connection"],
        },
    ),
    api("get", "/datasets/{slug}/judges/{pk}", "403 200 200 200"),
    api(
        "patch",
        "/datasets/{slug}/judges/{pk}",
        "403 403 403 200",
        {"prompt_template": "{question} {transcript}"},
    ),
    api("delete", "/datasets/{slug}/judges/{pk}", "403 403 403 204"),
    api(
        "post",
        "/judge-runs",
        "403 403 403 202",
        lambda o: {"dataset": o["slug"], "schema": o["schema"], "question": "helpful"},
    ),
    api("get", "/judge-runs", "403 200 200 200", query="?dataset={slug}"),
    api("get", "/judge-runs/{pk}", "403 200 200 200"),
    api("post", "/judge-runs/{pk}/cancel", "403 403 403 200"),
    api("post", "/judge-runs/{pk}/resume", "403 403 403 202"),
    api("get", "/transcripts/{pk}/suggestions", "403 200 200 200"),
    api("post", "/suggestions/{pk}/accept", "403 200 200 200"),
    api("get", "/queues/{pk}/judge-agreement", "403 403 200 200"),
    api("get", "/datasets/{slug}/model-connections", "403 200 200 200"),
    api(
        "post",
        "/datasets/{slug}/model-connections",
        "403 403 403 201",
        {"name": "matrix", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
    ),
    api("get", "/datasets/{slug}/model-connections/{pk}", "403 200 200 200"),
    api("patch", "/datasets/{slug}/model-connections/{pk}", "403 403 403 200", {"model": "m2"}),
    api("delete", "/datasets/{slug}/model-connections/{pk}", "403 403 403 204"),
    api("post", "/datasets/{slug}/model-connections/{pk}/test", "403 403 403 200"),
    # Message 0 is the user's: no turn to regenerate (422) once everything else is allowed.
    api(
        "post",
        "/transcripts/{pk}/messages/{index}/regenerate",
        "403 422 422 422",
        lambda o: {"connection_id": o["model_connection"]},
    ),
    api("get", "/datasets/{slug}/tokenizer", "200 200 200 200"),
    api(
        "put",
        "/datasets/{slug}/tokenizer",
        "403 403 403 200",
        {"kind": "tiktoken", "encoding": "cl100k_base", "context_length": 4096},
    ),
    api("post", "/datasets/{slug}/tokenizer", "403 403 403 200", _tokenizer_upload, multipart=True),
    api("delete", "/datasets/{slug}/tokenizer", "403 403 403 204"),
    api("get", "/transcripts/{pk}/annotations", "403 200 200 200"),
    # The annotator answered this question already (409 annotation-exists).
    api(
        "post",
        "/transcripts/{pk}/annotations",
        "403 409 201 201",
        lambda o: {"label_schema": o["schema"], **ANSWER},
    ),
    api("get", "/annotations/{pk}", "403 200 200 200"),
    api("get", "/transcripts/{pk}/alternatives", "403 200 200 200"),
    api(
        "post",
        "/transcripts/{pk}/alternatives",
        "403 201 201 201",
        {"message_index": 2, "messages": [{"role": "assistant", "content": "Snow."}]},
    ),
    # The annotator added it: theirs to delete, and any curator's.
    api("delete", "/transcripts/{pk}/alternatives/{alt_id}", "403 204 403 204"),
    api("post", "/transcripts/{pk}/alternatives/{alt_id}/promote", "403 200 200 200", _version),
    api("put", "/annotations/{pk}", "403 200 403 403", {"value": "no"}),
    api("post", "/annotations/{pk}/submit", "403 200 403 403"),
    api("delete", "/annotations/{pk}", "403 204 403 403"),
]

# Public by design: the login and logout pages, and the health check (counts, no content).
PUBLIC_VIEWS = {"login", "logout", "healthz"}


def _body(response) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return response.content


def _cell_problems(world, route, caller, where, expected) -> list[str]:
    response = call(world, caller, route, where)
    status = response.status_code
    cell = f"{route.method} {route.path} as {caller} on {where}"
    if status != expected:
        return [f"{cell}: {status}, expected {expected}"]
    problems = []
    redirect = response["Location"] if status == 302 else ""
    if caller == "anonymous" and not route.api and not redirect.startswith(LOGIN):
        problems.append(f"{cell}: redirected to {response['Location']}, not the login page")
    if caller != "anonymous" and redirect.startswith(LOGIN):
        problems.append(f"{cell}: a member was sent to the login page")
    if route.api and status in (401, 403, 404):
        code = json.loads(response.content).get("code")
        if not code:
            problems.append(f"{cell}: {status} without an error code")
    if caller == "viewer" and status == 200 and HIDDEN.encode() in _body(response):
        problems.append(f"{cell}: a viewer was shown content hidden from end users")
    return problems


@pytest.mark.parametrize("route", MATRIX, ids=lambda r: f"{r.method} {r.path}")
def test_authorization_matrix(world, route):
    """Each cell of the route's row: every caller on the object of the dataset they work in
    (``home``), and every member of ``home`` on the same kind of object in ``away``."""
    problems = []
    for caller in CALLERS:
        problems += _cell_problems(world, route, caller, "home", route.expected[caller])
    if route.scoped:
        for caller in MEMBERS:
            problems += _cell_problems(world, route, caller, "away", 404)
    assert not problems, "\n".join(problems)


def _url_names(patterns, namespace=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace in {"admin"} or str(pattern.pattern).startswith("api/"):
                continue
            yield from _url_names(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            yield pattern.name or str(pattern.pattern)


def test_every_route_is_in_the_matrix():
    """A new URL or API operation fails here until it has a row in ``MATRIX``."""
    from api.api import api as ninja_api

    covered = {route.key for route in MATRIX}
    views = set(_url_names(get_resolver().url_patterns)) - PUBLIC_VIEWS
    operations = {
        f"{method.upper()} {path.removeprefix('/api/v1')}"
        for path, item in ninja_api.get_openapi_schema()["paths"].items()
        for method in item
    }
    assert views - covered == set(), "HTML views missing from MATRIX"
    assert operations - covered == set(), "API operations missing from MATRIX"
    assert covered - views - operations == set(), "MATRIX rows for routes that do not exist"


def test_the_hidden_parts_are_there_for_annotators(world):
    """The viewer cells' check for ``HIDDEN`` means something: editors do see it."""
    route = html("transcript", "GET", "/transcripts/{transcript}/?audience=annotator", "0 0 0 0")
    assert HIDDEN.encode() in _body(call(world, "annotator", route, "home"))
    route = api("get", "/transcripts/{pk}/export", "0 0 0 0")
    assert HIDDEN.encode() in _body(call(world, "annotator", route, "home"))
