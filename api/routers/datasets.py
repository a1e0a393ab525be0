"""Datasets: the caller's list, one with the caller's role, and the streamed export."""

from django.http import StreamingHttpResponse
from ninja import Query, Router
from ninja.pagination import paginate

from editor.exporting import export_dataset
from editor.models import Dataset
from editor.visibility import export_audience

from ..access import visible_dataset
from ..errors import errors
from ..pagination import LimitOffset
from ..schemas import DatasetExportQuery, DatasetOut

router = Router(tags=["datasets"])


@router.get(
    "/datasets",
    response={200: list[DatasetOut], **errors(422)},
    summary="The datasets you are a member of (every one for a superuser)",
)
@paginate(LimitOffset)
def list_datasets(request):
    user = request.auth
    return (
        Dataset.objects.for_user(user)
        .with_roles(user)
        .with_transcript_counts()
        .order_by("name", "pk")
    )


@router.get(
    "/datasets/{slug}",
    response={200: DatasetOut, **errors(404)},
    summary="One dataset, with your role in it",
)
def get_dataset(request, slug: str):
    return visible_dataset(request.auth, slug, with_counts=True)


@router.get(
    "/datasets/{slug}/export",
    response=errors(403, 404, 422),
    summary="Stream the dataset as NDJSON, one transcript per line",
    description="Constant memory however big the dataset. `format=jsonl` lines are "
    '`{"id", "title", "spec", "status", "metadata", "text" | "document"}` (re-importable); '
    '`format=messages` lines are `{"messages": [...], "tools"?}` rows. Without '
    "`audience=end_user` the export holds everything, which a viewer may not see (403 "
    "`E-PERM-VISIBILITY`).",
    openapi_extra={
        "responses": {
            200: {
                "description": "One JSON object per line.",
                "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
            }
        }
    },
)
def export(request, slug: str, options: Query[DatasetExportQuery]):
    dataset = visible_dataset(request.auth, slug)
    export_audience(dataset, request.auth, options.audience)
    lines = export_dataset(
        dataset,
        spec=options.spec,
        format=options.format,
        statuses=options.status,
        audience=options.audience,
    )
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
    name = f"{dataset.slug}-{options.spec or options.format}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
