"""Alternatives of a transcript's assistant turns (``editor.alternatives``): list, add,
delete, promote (one revision, version-checked like every edit).

Alternatives hold whole messages: they are read by the roles that see the annotator's
rendering (viewers: 403). Adding and promoting: editors; deleting: a curator or the one who
added it. Pairwise answers about them go through the annotation routes."""

from ninja import Query, Router, Status
from ninja.pagination import paginate

from editor import alternatives, editing
from editor.models import Transcript
from editor.visibility import FULL_CONTENT, require_audience, visible_transcript

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas import EditOut
from ..schemas.alternatives import AlternativeFilters, AlternativeIn, AlternativeOut, PromoteIn
from .messages import WRITE_ERRORS, expected_version

router = Router(tags=["alternatives"])


def _readable(request, pk: int) -> Transcript:
    transcript = visible_transcript(request.auth, pk)
    require_audience(transcript.dataset, request.auth, FULL_CONTENT)
    return transcript


@router.get(
    "/transcripts/{pk}/alternatives",
    response={200: list[AlternativeOut], **errors(403, 404, 410, 422)},
    summary="The alternatives of the transcript's turns, by turn then as added",
)
@paginate(LimitOffset)
def list_alternatives(request, pk: int, filters: Query[AlternativeFilters]):
    transcript = _readable(request, pk)
    messages = transcript.stored_messages()
    return [
        alternatives.alternative_dict(alternative, messages)
        for alternative in alternatives.alternatives_of(transcript, filters.message_index)
    ]


@router.post(
    "/transcripts/{pk}/alternatives",
    response={201: AlternativeOut, 200: AlternativeOut, **errors(403, 404, 410, 422)},
    summary="Add an alternative of a turn (201; the same content again: 200, the one there)",
    description="The turn's first alternative stores the turn as the transcript holds it too "
    "(source `transcript`).",
)
def add_alternative(request, pk: int, payload: AlternativeIn):
    transcript = _readable(request, pk)
    before = alternatives.alternatives_of(transcript, payload.message_index).count()
    added = alternatives.add_alternative(
        transcript,
        payload.message_index,
        payload.messages,
        source=payload.source,
        author=request.auth,
        note=payload.note,
        generation=payload.generation,
    )
    after = alternatives.alternatives_of(transcript, payload.message_index).count()
    out = alternatives.alternative_dict(added, transcript.stored_messages())
    return Status(201 if after > before else 200, out)


@router.delete(
    "/transcripts/{pk}/alternatives/{alt_id}",
    response={204: None, **errors(403, 404, 409, 410, 422)},
    summary="Delete an alternative (a curator or the one who added it)",
    description="The turn as the transcript holds it now cannot be deleted: 409 "
    "`alternative-is-current`.",
)
def delete_alternative(request, pk: int, alt_id: int):
    transcript = _readable(request, pk)
    alternatives.delete_alternative(
        alternatives.alternative_of(transcript, alt_id), user=request.auth
    )
    return Status(204, None)


@router.post(
    "/transcripts/{pk}/alternatives/{alt_id}/promote",
    response={200: EditOut, **WRITE_ERRORS},
    summary="Make an alternative the turn's messages: one revision",
    description="The turn it replaces stays as an alternative. A stale `version` is a 409 "
    "`version-conflict`.",
)
def promote_alternative(request, pk: int, alt_id: int, payload: PromoteIn | None = None):
    transcript = _readable(request, pk)
    alternative = alternatives.alternative_of(transcript, alt_id)
    saved = alternatives.promote(
        transcript,
        alternative,
        expected_version=expected_version(request, payload),
        author=request.auth,
        note=payload.note if payload is not None else "",
    )
    return editing.EditResult(saved).to_dict()
