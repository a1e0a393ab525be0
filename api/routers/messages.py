"""Editing a transcript message by message: the browser editor's operations
(``editor.editing``), one route each.

Every write takes the version the caller edited, in the body (`version`) or as `If-Match`,
and answers the new version and the fresh diagnostics; a stale version is a 409
`version-conflict` whose details hold the current version and state.
"""

from django.http import HttpRequest
from ninja import Router, Status
from ninja.errors import HttpError

from editor import editing
from editor.errors import InvalidContent
from editor.models import Transcript
from editor.visibility import FULL_CONTENT, require_audience, visible_transcript

from ..errors import errors
from ..schemas import (
    DiagnosticsOut,
    DraftIn,
    EditOut,
    FixIn,
    Int32,
    MessageInsertIn,
    MessageMoveIn,
    MessageOut,
    MessagePatchIn,
    SourceIn,
    VersionedIn,
)

router = Router(tags=["editing"])

WRITE_ERRORS = errors(403, 404, 409, 410, 422, 428)


class VersionRequired(HttpError):
    code = "version-required"

    def __init__(self):
        super().__init__(
            428, 'Say which version you edited: "version" in the body or an If-Match header.'
        )


def expected_version(request: HttpRequest, payload: VersionedIn | None) -> int:
    """The version the write was made from: the body's, else the ``If-Match`` header's."""
    if payload is not None and payload.version is not None:
        return payload.version
    header = request.headers.get("If-Match", "").strip()
    value = header.removeprefix("W/").strip('"')
    if value.isdigit():
        return int(value)
    raise VersionRequired


def _editable(request, pk: int) -> Transcript:
    """A transcript of the caller's datasets whose whole content they may see; whether they
    may change it is the domain's decision (403 ``forbidden`` for viewers)."""
    transcript = visible_transcript(request.auth, pk)
    require_audience(transcript.dataset, request.auth, FULL_CONTENT)
    return transcript


def _edited(result: editing.EditResult, index: int | None = None) -> dict:
    out = result.to_dict()
    if index is not None:
        out["message"] = result.transcript.message_dicts()[index]
    return out


@router.get(
    "/transcripts/{pk}/messages/{index}",
    response={200: MessageOut, **errors(403, 404, 410, 422)},
    summary="One message of a transcript (canonical fields)",
)
def get_message(request, pk: int, index: int):
    messages = _editable(request, pk).stored_messages()
    editing.check_index(messages, index)
    return {"index": index, "message": messages[index].to_dict()}


@router.patch(
    "/transcripts/{pk}/messages/{index}",
    response={200: EditOut, **WRITE_ERRORS},
    summary="Change some fields of one message",
    description="Only the fields sent change (`null` clears an optional field; `end: null` "
    "marks the message cut off). Only that message's bytes change in the source text.",
)
def patch_message(request, pk: int, index: int, payload: MessagePatchIn):
    changes = payload.dict(exclude_unset=True, exclude={"version", "note"})
    result = editing.edit_message(
        _editable(request, pk),
        index,
        changes,
        expected_version=expected_version(request, payload),
        author=request.auth,
        note=payload.note,
    )
    return _edited(result, index)


@router.post(
    "/transcripts/{pk}/messages",
    response={201: EditOut, **WRITE_ERRORS},
    summary="Insert a message after `after` (at the start when absent)",
)
def insert_message(request, pk: int, payload: MessageInsertIn):
    message = None if payload.message is None else payload.message.dict(exclude_unset=True)
    result = editing.insert_message(
        _editable(request, pk),
        payload.after,
        message,
        expected_version=expected_version(request, payload),
        author=request.auth,
        note=payload.note,
    )
    return Status(201, _edited(result, 0 if payload.after is None else payload.after + 1))


@router.delete(
    "/transcripts/{pk}/messages/{index}",
    response={200: EditOut, **WRITE_ERRORS},
    summary="Delete one message (undo: restore the revision before)",
    description="Send the version as `?version=` or `If-Match`.",
)
def delete_message(request, pk: int, index: int, version: Int32 | None = None, note: str = ""):
    result = editing.delete_message(
        _editable(request, pk),
        index,
        expected_version=expected_version(request, VersionedIn(version=version)),
        author=request.auth,
        note=note,
    )
    return _edited(result)


@router.post(
    "/transcripts/{pk}/messages/{index}/move",
    response={200: EditOut, **WRITE_ERRORS},
    summary="Move one message so that it ends up at index `to`",
)
def move_message(request, pk: int, index: int, payload: MessageMoveIn):
    result = editing.move_message(
        _editable(request, pk),
        index,
        payload.to,
        expected_version=expected_version(request, payload),
        author=request.auth,
        note=payload.note,
    )
    return _edited(result, payload.to)


@router.post(
    "/transcripts/{pk}/messages/{index}/duplicate",
    response={201: EditOut, **WRITE_ERRORS},
    summary="Insert a copy of one message right after it",
)
def duplicate_message(request, pk: int, index: int, payload: VersionedIn):
    result = editing.duplicate_message(
        _editable(request, pk),
        index,
        expected_version=expected_version(request, payload),
        author=request.auth,
        note=payload.note,
    )
    return Status(201, _edited(result, index + 1))


@router.post(
    "/transcripts/{pk}/fixes",
    response={200: EditOut, **WRITE_ERRORS},
    summary="Apply a diagnostic's quick fix",
    description="Name the fix as the diagnostic carries it: `code`, `message_index` and "
    "`fix.id`. A fix the stored transcript no longer offers is a 409 `fix-not-found`.",
)
def apply_fix(request, pk: int, payload: FixIn):
    result = editing.apply_fix(
        _editable(request, pk),
        code=payload.code,
        message_index=payload.message_index,
        fix_id=payload.fix_id,
        expected_version=expected_version(request, payload),
        author=request.auth,
        note=payload.note,
    )
    return _edited(result)


@router.post(
    "/transcripts/{pk}/source",
    response={200: EditOut, **WRITE_ERRORS},
    summary="Replace the whole source text (raw mode), optionally converting it first",
    description="Text with errors is refused (422 `has-errors`, the diagnostics in "
    "`details`) unless `draft` is true: then it is saved with its diagnostics and the "
    "status becomes draft. With `convert_to`, the text is converted first and the losses "
    "come back in `losses`; preview them with `POST /convert` (nothing saved).",
)
def replace_source(request, pk: int, payload: SourceIn):
    result = editing.replace_source(
        _editable(request, pk),
        payload.text,
        spec=payload.spec,
        convert_to=payload.convert_to,
        as_draft=payload.draft,
        expected_version=expected_version(request, payload),
        author=request.auth,
        note=payload.note,
    )
    return _edited(result)


@router.post(
    "/transcripts/{pk}/drafts/validate",
    response={200: DiagnosticsOut, **errors(403, 404, 410, 422, 429)},
    summary="Validate a draft without saving it (live validation)",
    description="Send `index` and the message's changed `fields` (the rest of the "
    "transcript as stored), or a whole draft `text`. Answers `{diagnostics, error_count, "
    "warning_count}` as the transcript would have them once saved; nothing is written.",
)
def validate_draft(request, pk: int, payload: DraftIn):
    transcript = _editable(request, pk)
    if payload.text is not None:
        check = editing.validate_source_draft(payload.text, payload.spec or transcript.spec)
    elif payload.index is not None:
        fields = {} if payload.fields is None else payload.fields.dict(exclude_unset=True)
        check = editing.validate_message_draft(transcript, payload.index, fields)
    else:
        raise InvalidContent(
            "Send a whole draft `text`, or `index` and `fields`.", code="invalid-request"
        )
    return check.to_dict()
