"""The review workflow of a transcript (``editor.workflow``): which moves the caller may make,
and making one."""

from ninja import Router

from editor import editing, workflow
from editor.visibility import visible_transcript

from ..errors import errors
from ..schemas import EditOut, TransitionIn, TransitionOut
from .messages import WRITE_ERRORS, expected_version

router = Router(tags=["workflow"])


@router.get(
    "/transcripts/{pk}/transitions",
    response={200: list[TransitionOut], **errors(404, 410, 422)},
    summary="The workflow moves you may make on the transcript now",
)
def list_transitions(request, pk: int):
    transcript = visible_transcript(request.auth, pk)
    return [
        {"name": t.name, "label": t.label, "target": t.target}
        for t in workflow.allowed_transitions(transcript, request.auth)
    ]


@router.post(
    "/transcripts/{pk}/transitions",
    response={200: EditOut, **WRITE_ERRORS},
    summary="Move the transcript along the workflow (submit, resubmit, approve, reject, reopen)",
    description="A move its status does not allow is a 409 `transition-refused`; one your role "
    "may not make, a 403. Editing the content of an approved transcript sends it back to "
    "review by itself (status `in_review`).",
)
def make_transition(request, pk: int, payload: TransitionIn):
    result = editing.apply_transition(
        visible_transcript(request.auth, pk),
        payload.name,
        expected_version=expected_version(request, payload),
        author=request.auth,
        note=payload.note,
    )
    return result.to_dict()
