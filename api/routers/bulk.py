"""Bulk actions on a dataset's transcripts: a list of ids, or everything a filter matches."""

from datetime import datetime
from typing import Literal

from django.http import QueryDict
from ninja import Field, Router, Schema

from editor import bulk
from editor.visibility import visible_bulk_task, visible_dataset

from ..errors import errors
from ..schemas import Int32

router = Router(tags=["datasets"])


class BulkIn(Schema):
    action: Literal[
        "transition", "set_status", "delete", "undelete", "revalidate", "add_to_queue", "export"
    ]
    ids: list[Int32] | None = Field(None, description="The transcripts to act on…")
    filter: dict[str, str | list[str]] | None = Field(
        None,
        description="…or every transcript matching the dataset page's filters "
        "(q, status, spec, has_errors, code, has, updated_by, updated_since), e.g. "
        '`{"status": ["in_review"], "has_errors": "false"}`. Exactly one of the two.',
    )
    transition: str | None = Field(
        None, description="For `transition`: submit, resubmit, approve, reject or reopen."
    )
    status: str | None = Field(
        None,
        description="For `set_status`: draft, in_review, approved or rejected; each transcript "
        "takes the workflow move that leads there from its status (skipped where none does).",
    )
    queue: int | None = Field(None, description="For `add_to_queue`: a queue of the dataset.")
    note: str = Field("", description="Kept with each revision the action writes.")
    spec: str | None = Field(None, description="For `export`: the spec to write.")
    format: Literal["jsonl", "messages"] = "jsonl"
    audience: Literal["end_user"] | None = None
    with_annotations: bool = False


class BulkOut(Schema):
    action: str
    matched: int = Field(description="How many transcripts the selection holds.")
    changed: list[int] = Field(description="The ids changed (or added to the queue).")
    skipped: list[dict] = Field(description="`{id, reason}` of those the action left alone.")
    task: dict | None = Field(
        None,
        description='A selection acted on in the background: `{"kind": "bulk", "id"}` (poll '
        '`GET /bulk/{id}`) or `{"kind": "export", "id"}` (`GET /exports/{id}`).',
    )


@router.post(
    "/datasets/{slug}/bulk",
    response={200: BulkOut, **errors(403, 404, 409, 422)},
    summary="Act on many transcripts at once, in one transaction",
    description="`transition` (a workflow move; transcripts whose status does not allow it "
    "are skipped), `set_status` (the move that leads to `status`, chosen per transcript), `delete` (soft; `undelete` with the ids brings them back), `revalidate` "
    "(stored diagnostics recomputed; no revision, the content is unchanged), `add_to_queue`, "
    "`export` (prepared in the background). All or nothing: a failure on one transcript "
    f"changes none. More than {bulk.INLINE_LIMIT} transcripts run as a background task.",
)
def act(request, slug: str, payload: BulkIn):
    dataset = visible_dataset(request.auth, slug)
    filters = None
    if payload.filter is not None:
        filters = QueryDict(mutable=True)
        for key, value in payload.filter.items():
            filters.setlist(key, value if isinstance(value, list) else [value])
    params = payload.dict(
        include={"transition", "status", "queue", "note", "spec", "format", "audience"}
    )
    params["with_annotations"] = payload.with_annotations
    result = bulk.start(
        dataset, request.auth, payload.action, ids=payload.ids, filters=filters, params=params
    )
    return result.to_dict()


class BulkTaskOut(Schema):
    id: int
    dataset: str = Field(alias="dataset.slug")
    action: str
    status: str
    created_at: datetime
    finished_at: datetime | None
    attempts: int
    progress: dict = Field(description="{done, total} transcripts.")
    result: dict = Field(description="Once succeeded: as the answer of a small bulk action.")
    error: str


@router.get(
    "/bulk/{pk}",
    response={200: BulkTaskOut, **errors(404, 422)},
    summary="A bulk action running in the background: its status, progress and result",
)
def get_bulk_task(request, pk: int):
    return visible_bulk_task(request.auth, pk)
