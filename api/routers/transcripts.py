"""Transcripts: list and add in a dataset; read, save, delete, render, export, validate one;
its revision history (list, show, diff, restore)."""

from django.http import Http404
from ninja import Query, Router, Status
from ninja.pagination import paginate

from editor.exporting import export_transcript
from editor.listing import TranscriptList
from editor.models import Transcript
from editor.presentation.render_pages import RENDER_PAGE_MAX, render_page
from editor.revisions import diff_revisions, list_revisions, restore_revision
from editor.storage.content import TranscriptContent
from editor.storage.create import create_transcript
from editor.storage.save import delete_transcript, save_transcript, undelete_transcript
from editor.visibility import (
    FULL_CONTENT,
    export_audience,
    require_audience,
    visible_dataset,
    visible_transcript,
)

from ..errors import errors
from ..pagination import MAX_LIMIT, LimitOffset, next_page_url
from ..schemas import (
    Audience,
    DiagnosticsOut,
    DiffQuery,
    ExportOut,
    Int32,
    NoteIn,
    RenderAudience,
    RenderPageOut,
    RenderPageQuery,
    RestoreIn,
    RevisionDetailOut,
    RevisionOut,
    SpecId,
    TrainingConvention,
    TranscriptCreateIn,
    TranscriptFilters,
    TranscriptOut,
    TranscriptSummaryOut,
    TranscriptUpdateIn,
)

router = Router(tags=["transcripts"])


def _full(request, pk: int, *, deleted_ok: bool = False) -> Transcript:
    """A transcript whose whole content (source text included) the caller may read."""
    transcript = visible_transcript(request.auth, pk, deleted_ok=deleted_ok)
    require_audience(transcript.dataset, request.auth, FULL_CONTENT)
    return transcript


@router.get(
    "/datasets/{slug}/transcripts",
    response={200: list[TranscriptSummaryOut], **errors(404, 422, 429)},
    summary="The transcripts of a dataset, filtered and sorted (oldest first by default)",
)
@paginate(LimitOffset)
def list_transcripts(request, slug: str, filters: Query[TranscriptFilters]):
    dataset = visible_dataset(request.auth, slug)
    wanted = filters.to_filter(dataset)
    listed = TranscriptList.of(
        dataset, request.auth, wanted, sort=filters.sort, deleted=bool(filters.deleted)
    )
    return listed.first_rows(MAX_LIMIT)


@router.post(
    "/datasets/{slug}/transcripts",
    response={201: TranscriptOut, **errors(403, 404, 409, 422)},
    summary="Add a transcript from text (spec detected unless given) or a canonical one",
    description="An `external_id` the dataset already has (deleted transcripts included) is "
    "a 409 `duplicate-external-id`.",
)
def create(request, slug: str, payload: TranscriptCreateIn):
    dataset = visible_dataset(request.auth, slug)
    transcript = create_transcript(dataset, author=request.auth, **payload.dict())
    return Status(201, transcript)


@router.get(
    "/transcripts/{pk}",
    response={200: TranscriptOut, **errors(403, 404, 410, 422)},
    summary="A transcript: the canonical model, its source text, version and diagnostics",
)
def get_transcript(request, pk: int):
    return TranscriptOut.of(_full(request, pk))


@router.put(
    "/transcripts/{pk}",
    response={200: TranscriptOut, **errors(403, 404, 409, 410, 422)},
    summary="Save a change, if the transcript is still at expected_version",
    description="Send at most one of `text` (in `spec`, the transcript's own by default), "
    "`messages` (header kept) or `canonical`; `title` and `metadata` replace theirs when "
    "given. A stale `expected_version` is a 409 `version-conflict` whose details hold "
    "`expected_version`, `current_version` and `current` (the stored snapshot): nothing "
    "is overwritten. Saving what is stored changes nothing (same version).",
)
def update(request, pk: int, payload: TranscriptUpdateIn):
    transcript = visible_transcript(request.auth, pk)
    return save_transcript(transcript, author=request.auth, **payload.dict())


@router.delete(
    "/transcripts/{pk}",
    response={200: TranscriptOut, **errors(403, 404, 409, 410, 422)},
    summary="Delete (reversibly) the transcript at expected_version",
)
def delete(request, pk: int, expected_version: Int32, note: str = ""):
    transcript = visible_transcript(request.auth, pk)
    return delete_transcript(
        transcript, author=request.auth, expected_version=expected_version, note=note
    )


@router.post(
    "/transcripts/{pk}/undelete",
    response={200: TranscriptOut, **errors(400, 403, 404, 422)},
    summary="Bring a deleted transcript back (curators)",
)
def undelete(request, pk: int, payload: NoteIn | None = None):
    transcript = visible_transcript(request.auth, pk, deleted_ok=True)
    return undelete_transcript(
        transcript, author=request.auth, note=payload.note if payload else ""
    )


@router.get(
    "/transcripts/{pk}/render",
    response={200: RenderPageOut, **errors(403, 404, 410, 422, 429)},
    exclude_none=True,  # source and spans exist only in the debug rendering
    summary="The transcript as an audience sees it, a page of items at a time",
    description="`end_user`: only what end users see; `annotator`: every message marked "
    "visible or not, with the reason; `debug`: as annotator plus the source and its control "
    "tokens; `training`: as annotator, each item with `trained`, `trained_reason`, the "
    "`parts` / `spans` of the serialized text a text spec trains on and `trained_tokens` "
    "(under `convention`: all_assistant, last_assistant_turn, gpt_oss; default gpt_oss for "
    "harmony, else all_assistant). A role that may not see the audience gets 403 "
    "`E-PERM-VISIBILITY`.\n\n"
    f"Paged: `offset` and `limit` (1 to {RENDER_PAGE_MAX:,}, default {RENDER_PAGE_MAX:,}) over "
    "the items; the answer says `total`, `offset`, `limit` and `next` (the next page's URL, "
    "null on the last page). The pages' items, one after another, are the whole "
    "rendering's. `debug`: the page's part of the source (`source_offset` where it begins; "
    "the spans' offsets are in the whole source). `training`: `trained_tokens` is the "
    "page's (the whole transcript's when it is one page).",
)
def render(
    request,
    pk: int,
    page: Query[RenderPageQuery],
    audience: RenderAudience = "end_user",
    convention: TrainingConvention | None = None,
):
    transcript = visible_transcript(request.auth, pk)
    require_audience(transcript.dataset, request.auth, audience)
    rendered = render_page(
        transcript, audience, offset=page.offset, limit=page.limit, convention=convention
    )
    rendered["next"] = next_page_url(request, rendered)
    return rendered


@router.get(
    "/transcripts/{pk}/export",
    response={200: ExportOut, **errors(403, 404, 410, 422, 429)},
    summary="The transcript written in a spec (its own by default), with what is lost",
)
def export(request, pk: int, spec: SpecId | None = None, audience: Audience | None = None):
    transcript = visible_transcript(request.auth, pk)
    export_audience(transcript.dataset, request.auth, audience)
    return export_transcript(transcript, spec=spec, audience=audience)


@router.get(
    "/transcripts/{pk}/validate",
    response={200: DiagnosticsOut, **errors(403, 404, 410, 422)},
    summary="Validate the stored transcript now: parse and semantic diagnostics",
)
def validate(request, pk: int):
    content = TranscriptContent.of_stored(_full(request, pk))
    return {
        "diagnostics": content.diagnostics,
        "error_count": content.error_count,
        "warning_count": content.warning_count,
    }


# --- revisions ------------------------------------------------------------------------------


def _revision(transcript: Transcript, number: int):
    revision = list_revisions(transcript).filter(number=number).first()
    if revision is None:
        raise Http404(f"Transcript {transcript.pk} has no revision {number}.")
    return revision


@router.get(
    "/transcripts/{pk}/revisions",
    response={200: list[RevisionOut], **errors(404, 422)},
    summary="The revision history, newest first",
)
@paginate(LimitOffset)
def revisions(request, pk: int):
    return list_revisions(visible_transcript(request.auth, pk, deleted_ok=True))


@router.get(
    "/transcripts/{pk}/revisions/{number}",
    response={200: RevisionDetailOut, **errors(403, 404, 422)},
    summary="One revision with its snapshot",
)
def revision(request, pk: int, number: int):
    return _revision(_full(request, pk, deleted_ok=True), number)


@router.get(
    "/transcripts/{pk}/diff",
    response={200: dict, **errors(403, 404, 422)},
    summary="What changed between two revisions",
    description="Title, spec, header, attrs and metadata changes, per message "
    "added/removed/changed/unchanged with field changes and content diffs, and a unified "
    "diff of the source texts.",
)
def diff(request, pk: int, between: Query[DiffQuery]):
    transcript = _full(request, pk, deleted_ok=True)
    return diff_revisions(
        _revision(transcript, between.from_), _revision(transcript, between.to)
    ).to_dict()


@router.post(
    "/transcripts/{pk}/revisions/{number}/restore",
    response={200: TranscriptOut, **errors(403, 404, 409, 410, 422)},
    summary="Make an old revision current (a new revision; version-checked)",
)
def restore(request, pk: int, number: int, payload: RestoreIn):
    transcript = visible_transcript(request.auth, pk)
    return restore_revision(
        _revision(transcript, number),
        expected_version=payload.expected_version,
        author=request.auth,
        note=payload.note,
    )
