"""Imports: upload a file into a dataset (a background task) and follow its progress."""

from ninja import File, Form, Router, Status
from ninja.files import UploadedFile

from editor.importing.tasks import start_import_task
from editor.visibility import visible_dataset, visible_import_task

from ..errors import errors
from ..schemas import ImportIn, ImportTaskOut

router = Router(tags=["imports"])


@router.post(
    "/datasets/{slug}/imports",
    response={202: ImportTaskOut, **errors(403, 404, 422, 503)},
    summary="Start importing a file: a transcript, JSONL (one per line) or a zip",
    description="Answers at once with the task; poll `GET /imports/{id}` for its progress "
    "and, once finished, its report (per item: created, updated, skipped or failed). "
    "All or nothing unless `partial`.",
)
def start_import(request, slug: str, file: File[UploadedFile], options: Form[ImportIn]):
    dataset = visible_dataset(request.auth, slug)
    task = start_import_task(
        dataset=dataset,
        author=request.auth,
        upload=file,
        name=file.name,
        spec=options.spec,
        on_conflict=options.on_conflict,
        partial=options.partial,
        shape=options.shape,
    )
    return Status(202, task)


@router.get(
    "/imports/{pk}",
    response={200: ImportTaskOut, **errors(404, 422)},
    summary="An import: its status, progress and report",
)
def get_import(request, pk: int):
    return visible_import_task(request.auth, pk)
