"""A dataset's model connections (``editor.assist.connections``: curators manage, editors
read), a connection test, and regenerating an assistant turn with one
(``editor.assist.regenerate``): whole (201 with the alternative) or streamed as server-sent
events. No route takes or gives an API key: only the name of the variable that holds it."""

import json

from django.http import StreamingHttpResponse
from ninja import Router, Status
from ninja.pagination import paginate

from editor import alternatives
from editor.assist import client, connections, regenerate
from editor.visibility import FULL_CONTENT, require_audience, visible_dataset, visible_transcript

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas.alternatives import AlternativeOut
from ..schemas.models import (
    ConnectionTestOut,
    ModelConnectionFields,
    ModelConnectionIn,
    ModelConnectionOut,
    RegenerateIn,
)

router = Router(tags=["models"])


def _sent(request) -> dict:
    """The body's fields as sent: the schema drops unknown ones, and ``clean`` must see them
    (a field ``api_key`` is refused by name, not ignored)."""
    body = json.loads(request.body or b"{}")
    return body if isinstance(body, dict) else {}


def _connection(request, slug: str, pk: int):
    dataset = visible_dataset(request.auth, slug)
    connections.require_reader(dataset, request.auth)
    return connections.connection_of(dataset, pk)


@router.get(
    "/datasets/{slug}/model-connections",
    response={200: list[ModelConnectionOut], **errors(403, 404, 422)},
    summary="The dataset's model connections, with the tokens each has used (editors)",
)
@paginate(LimitOffset)
def list_model_connections(request, slug: str):
    dataset = visible_dataset(request.auth, slug)
    connections.require_reader(dataset, request.auth)
    return [connections.connection_dict(c) for c in connections.connections_of(dataset)]


@router.post(
    "/datasets/{slug}/model-connections",
    response={201: ModelConnectionOut, **errors(403, 404, 409, 422)},
    summary="Add a model connection (curators)",
    description="`api_key_env` names the server's environment variable holding the key; a "
    "field `api_key` is refused (422 `invalid-model-connection`). A name already used: 409.",
)
def create_model_connection(request, slug: str, payload: ModelConnectionIn):
    dataset = visible_dataset(request.auth, slug)
    created = connections.create_connection(dataset, request.auth, _sent(request))
    return Status(201, connections.connection_dict(created))


@router.get(
    "/datasets/{slug}/model-connections/{pk}",
    response={200: ModelConnectionOut, **errors(403, 404, 422)},
    summary="One model connection (editors)",
)
def get_model_connection(request, slug: str, pk: int):
    return connections.connection_dict(_connection(request, slug, pk))


@router.patch(
    "/datasets/{slug}/model-connections/{pk}",
    response={200: ModelConnectionOut, **errors(403, 404, 409, 422)},
    summary="Change a model connection's fields (curators)",
)
def update_model_connection(request, slug: str, pk: int, payload: ModelConnectionFields):
    connection = _connection(request, slug, pk)
    updated = connections.update_connection(connection, request.auth, _sent(request))
    return connections.connection_dict(updated)


@router.delete(
    "/datasets/{slug}/model-connections/{pk}",
    response={204: None, **errors(403, 404, 409, 422)},
    summary="Delete a model connection and the record of its requests (curators)",
    description="A connection a judge uses: 409 `model-connection-in-use`.",
)
def delete_model_connection(request, slug: str, pk: int):
    connections.delete_connection(_connection(request, slug, pk), request.auth)
    return Status(204, None)


@router.post(
    "/datasets/{slug}/model-connections/{pk}/test",
    response={200: ConnectionTestOut, **errors(403, 404, 422, 429)},
    summary="Ask the model a one-line question: its answer, or the server's exact error",
    description="Always 200: `ok` says whether the model answered; `error` what went wrong.",
)
def test_model_connection(request, slug: str, pk: int):
    connection = _connection(request, slug, pk)
    connections.require_curator(connection.dataset, request.auth)
    return client.test_connection(connection, request.auth)


@router.post(
    "/transcripts/{pk}/messages/{index}/regenerate",
    response={201: AlternativeOut, **errors(403, 404, 410, 422, 429, 502)},
    summary="Regenerate the assistant turn at `index` with a model connection (editors)",
    description="The conversation before the turn is sent (converted to Chat Completions "
    "messages, with the transcript's tools) with the connection's options; the answer is "
    "kept as an alternative of the turn (`source` `model`, `generation` says how), to "
    "promote, keep or delete. `?stream=true`: `text/event-stream` of `delta` events "
    '(`{"content"}`, `{"reasoning"}`, `{"tool_call"}`), then `done` (`{"alternative"}`) '
    "or `error` (`{code, message, details}`). A model server failing: 502 "
    "`model-call-failed` (`details.retryable`, `retry_after`).",
)
def regenerate_turn(request, pk: int, index: int, payload: RegenerateIn, stream: bool = False):
    transcript = visible_transcript(request.auth, pk)
    require_audience(transcript.dataset, request.auth, FULL_CONTENT)
    prepared = regenerate.prepare(transcript, index, payload.connection_id, request.auth)
    if stream:
        response = StreamingHttpResponse(
            regenerate.events(prepared, request.auth), content_type="text/event-stream"
        )
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on as it comes
        return response
    alternative = regenerate.run(prepared, request.auth)
    return Status(201, alternatives.alternative_dict(alternative, transcript.stored_messages()))
