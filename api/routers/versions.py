"""Dataset versions (``editor.versions``): named, immutable selections of a dataset's
transcripts at their versions; list, create (curators), read, export, compare."""

from django.http import StreamingHttpResponse
from ninja import Query, Router, Status
from ninja.pagination import paginate

from editor import versions
from editor.visibility import export_audience, visible_dataset

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas.pipelines import (
    VersionDetailOut,
    VersionDiffOut,
    VersionExportQuery,
    VersionIn,
    VersionOut,
)

router = Router(tags=["versions"])


@router.get(
    "/datasets/{slug}/versions",
    response={200: list[VersionOut], **errors(404, 422)},
    summary="The dataset's versions, newest first",
)
@paginate(LimitOffset)
def list_versions(request, slug: str):
    return versions.versions_of(visible_dataset(request.auth, slug))


@router.post(
    "/datasets/{slug}/versions",
    response={201: VersionOut, **errors(403, 404, 409, 422)},
    summary="Freeze the dataset, or a filter of it, as a named version (curators)",
    description="The live transcripts the `filters` select, each at its current version: no "
    "text is copied. 409 `version-name-taken` when the name is used.",
)
def create_version(request, slug: str, body: VersionIn):
    dataset = visible_dataset(request.auth, slug)
    version = versions.create_version(
        dataset,
        body.name,
        filters=body.filters,
        author=request.auth,
        description=body.description,
    )
    return Status(201, version)


@router.get(
    "/datasets/{slug}/versions/{name}",
    response={200: VersionDetailOut, **errors(404, 422)},
    summary="A version with its members (`[id, version, status]`)",
)
def get_version(request, slug: str, name: str):
    return versions.version_of(visible_dataset(request.auth, slug), name)


@router.get(
    "/datasets/{slug}/versions/{name}/export",
    response=errors(403, 404, 422, 429),
    summary="Stream a version as NDJSON: the same bytes every time",
    description="The lines of `GET /datasets/{slug}/export` (`format` jsonl or messages, "
    "`spec`) for the version's transcripts at their versions, whatever changed since. "
    "Everything is exported: viewers get 403.",
    openapi_extra={
        "responses": {
            200: {
                "description": "One JSON object per line.",
                "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
            }
        }
    },
)
def export_version(request, slug: str, name: str, options: Query[VersionExportQuery]):
    dataset = visible_dataset(request.auth, slug)
    export_audience(dataset, request.auth, None)
    version = versions.version_of(dataset, name)
    lines = versions.export_version(version, spec=options.spec, format=options.format)
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
    filename = f"{dataset.slug}-{version.name}-{options.spec or options.format}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Hash"] = version.content_hash
    return response


@router.get(
    "/datasets/{slug}/versions/{name}/diff/{other}",
    response={200: VersionDiffOut, **errors(404, 422)},
    summary="Compare two versions: transcripts added, removed and changed from `name` to `other`",
)
def diff_versions(request, slug: str, name: str, other: str):
    dataset = visible_dataset(request.auth, slug)
    old, new = versions.version_of(dataset, name), versions.version_of(dataset, other)
    return versions.diff_versions(old, new).to_dict()
