"""Exports prepared as a file in the background: start one, follow it, download the file.

For a dataset too big to stream while you wait (`GET /datasets/{slug}/export` streams).
"""

from django.http import FileResponse, HttpResponseRedirect
from ninja import Router, Status

from editor.exporting.tasks import (
    check_may_see,
    content_type_of,
    download_url,
    open_download,
    start_export_task,
)
from editor.models import ExportTask
from editor.visibility import visible_dataset, visible_export_task

from ..errors import errors
from ..schemas import ExportTaskOut, PreparedExportQuery

router = Router(tags=["exports"])


def _visible_export(user, pk: int) -> ExportTask:
    task = visible_export_task(user, pk)
    check_may_see(task, user)
    return task


@router.post(
    "/datasets/{slug}/exports",
    response={202: ExportTaskOut, **errors(403, 404, 422, 429)},
    summary="Prepare an export of the dataset as a file, in the background",
    description="The same lines as `GET /datasets/{slug}/export`, written to a file by a task "
    "worker. Poll `GET /exports/{id}`; once `succeeded`, download `GET /exports/{id}/download`. "
    "`losses` then says what the chosen spec could not carry (`format=preference`: also "
    "`pairs` and `left_out`). `file_format=parquet` writes the rows as Parquet.",
)
def start_export(request, slug: str, options: PreparedExportQuery):
    dataset = visible_dataset(request.auth, slug)
    task = start_export_task(
        dataset, request.auth, file_format=options.file_format, **options.export_options()
    )
    return Status(202, task)


@router.get(
    "/exports/{pk}",
    response={200: ExportTaskOut, **errors(403, 404, 422)},
    summary="A prepared export: its status, progress and losses",
)
def get_export(request, pk: int):
    return _visible_export(request.auth, pk)


@router.get(
    "/exports/{pk}/download",
    response=errors(403, 404, 409, 422, 503),
    summary="Download a prepared export (409 `export-not-ready` until it has succeeded)",
    openapi_extra={
        "responses": {
            200: {
                "description": "One JSON object per line (file_format=parquet: a Parquet file).",
                "content": {
                    "application/x-ndjson": {"schema": {"type": "string"}},
                    "application/vnd.apache.parquet": {
                        "schema": {"type": "string", "format": "binary"}
                    },
                },
            },
            302: {
                "description": "When exports live in object storage: a redirect to a signed "
                "URL of the file, valid a short time (`OCM_STORAGE_URL_EXPIRY`, 300 s)."
            },
        }
    },
)
def download_export(request, pk: int):
    task = _visible_export(request.auth, pk)
    url = download_url(task)  # in a bucket: a short-lived signed URL
    if url:
        return HttpResponseRedirect(url)
    return FileResponse(
        open_download(task),
        as_attachment=True,
        filename=task.file_name,
        content_type=content_type_of(task),
    )
