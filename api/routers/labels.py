"""Label schemas (``editor.labels``) and annotations (``editor.labels.annotations``).

Curators write schemas; every member reads them. Annotators, reviewers and curators answer
(their own answers only); reviewers and curators read everyone's answers, annotators their
own; viewers read no answers (403). Outside a dataset everything is a 404.
"""

from django.http import Http404
from ninja import Query, Router, Status
from ninja.pagination import paginate

from editor import labels
from editor.labels import annotations
from editor.models import LabelSchema
from editor.visibility import (
    visible_annotation,
    visible_dataset,
    visible_label_schema,
    visible_transcript,
)

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas import (
    AnnotationFilters,
    AnnotationIn,
    AnnotationOut,
    AnnotationUpdateIn,
    ArchiveIn,
    LabelSchemaFilters,
    LabelSchemaIn,
    LabelSchemaOut,
    LabelSchemaVersionIn,
    LabelSchemaVersionOut,
)

router = Router(tags=["labels"])


# --- schemas ----------------------------------------------------------------------------------


@router.get(
    "/datasets/{slug}/label-schemas",
    response={200: list[LabelSchemaOut], **errors(404, 422)},
    summary="The label schemas of a dataset, each with its current version",
)
@paginate(LimitOffset)
def list_label_schemas(request, slug: str, filters: Query[LabelSchemaFilters]):
    dataset = visible_dataset(request.auth, slug)
    schemas = LabelSchema.objects.filter(dataset=dataset).with_current_version()
    schemas = schemas.archived() if filters.archived else schemas.active()
    return schemas.select_related("dataset").order_by("name", "pk")


@router.post(
    "/datasets/{slug}/label-schemas",
    response={201: LabelSchemaOut, **errors(403, 404, 409, 422)},
    summary="Create a label schema (curators); its first version",
    description="A definition that does not hold is a 422 `invalid-label-schema` whose "
    "`details` list `{question, field, message}`; a name the dataset has already, a 409 "
    "`label-schema-exists`.",
)
def create_label_schema(request, slug: str, payload: LabelSchemaIn):
    dataset = visible_dataset(request.auth, slug)
    schema = labels.create_label_schema(dataset, author=request.auth, **payload.dict())
    return Status(201, schema)


@router.get(
    "/label-schemas/{pk}",
    response={200: LabelSchemaOut, **errors(404, 422)},
    summary="A label schema with its current version",
)
def get_label_schema(request, pk: int):
    return visible_label_schema(request.auth, pk)


@router.post(
    "/label-schemas/{pk}/versions",
    response={200: LabelSchemaVersionOut, 201: LabelSchemaVersionOut, **errors(403, 404, 409, 422)},
    summary="Change a schema: a new version (curators)",
    description="The old versions and the answers given under them stay as they are. Content "
    "equal to the current version's makes no new version (200, the current one). With "
    "`expected_version`, a schema that moved on since is a 409 `version-conflict`.",
)
def new_schema_version(request, pk: int, payload: LabelSchemaVersionIn):
    version, created = labels.new_schema_version(
        visible_label_schema(request.auth, pk), author=request.auth, **payload.dict()
    )
    return Status(201 if created else 200, version)


@router.get(
    "/label-schemas/{pk}/versions",
    response={200: list[LabelSchemaVersionOut], **errors(404, 422)},
    summary="Every version of a schema, oldest first",
)
@paginate(LimitOffset)
def list_schema_versions(request, pk: int):
    schema = visible_label_schema(request.auth, pk)
    return schema.versions.select_related("created_by").order_by("number")


@router.get(
    "/label-schemas/{pk}/versions/{number}",
    response={200: LabelSchemaVersionOut, **errors(404, 422)},
    summary="One version of a schema",
)
def get_schema_version(request, pk: int, number: int):
    schema = visible_label_schema(request.auth, pk)
    version = schema.versions.select_related("created_by").filter(number=number).first()
    if version is None:
        raise Http404(f"Label schema {pk} has no version {number}.")
    return version


@router.post(
    "/label-schemas/{pk}/archive",
    response={200: LabelSchemaOut, **errors(403, 404, 422)},
    summary="Archive a schema, or bring it back (curators)",
    description="An archived schema takes no new answers and its answers become read-only; "
    "every version and answer is kept. `archived: false` brings it back.",
)
def archive_label_schema(request, pk: int, payload: ArchiveIn):
    return labels.set_archived(
        visible_label_schema(request.auth, pk), author=request.auth, archived=payload.archived
    )


# --- annotations --------------------------------------------------------------------------------


@router.get(
    "/transcripts/{pk}/annotations",
    response={200: list[AnnotationOut], **errors(403, 404, 410, 422)},
    summary="The annotations of a transcript you may read, oldest first",
    description="Reviewers and curators see everyone's, annotators their own; viewers get 403.",
)
@paginate(LimitOffset)
def list_annotations(request, pk: int, filters: Query[AnnotationFilters]):
    rows = annotations.annotations_of(visible_transcript(request.auth, pk), request.auth)
    if filters.label_schema is not None:
        rows = rows.filter(schema_version__schema_id=filters.label_schema)
    if filters.annotator is not None:
        rows = rows.filter(annotator__username=filters.annotator)
    for name in ("question", "state", "anchor_state", "message_index"):
        if getattr(filters, name) is not None:
            rows = rows.filter(**{name: getattr(filters, name)})
    return rows


@router.post(
    "/transcripts/{pk}/annotations",
    response={201: AnnotationOut, **errors(403, 404, 409, 410, 422)},
    summary="Answer a question about the transcript, a message or a span (a draft)",
    description="A value or target the question does not take is a 422 `invalid-annotation`; "
    "a second answer to the same question about the same target, a 409 `annotation-exists` "
    "(`details.id`: update that one); an archived schema, a 409 `label-schema-archived`.",
)
def create_annotation(request, pk: int, payload: AnnotationIn):
    transcript = visible_transcript(request.auth, pk)
    schema = visible_label_schema(request.auth, payload.label_schema)
    annotation = annotations.create_annotation(
        transcript,
        annotator=request.auth,
        schema=schema,
        **payload.dict(exclude={"label_schema"}),
    )
    return Status(201, annotation)


@router.get(
    "/annotations/{pk}",
    response={200: AnnotationOut, **errors(403, 404, 422)},
    summary="One annotation",
)
def get_annotation(request, pk: int):
    return visible_annotation(request.auth, pk)


@router.put(
    "/annotations/{pk}",
    response={200: AnnotationOut, **errors(403, 404, 409, 410, 422)},
    summary="Change your answer (a submitted one becomes a draft again)",
    description="Checked against the schema version it was given under. New `start`/`end` "
    "anchor a span again (a flagged one included); an orphaned answer is a 409 "
    "`annotation-locked`.",
)
def update_annotation(request, pk: int, payload: AnnotationUpdateIn):
    return annotations.update_annotation(
        visible_annotation(request.auth, pk), user=request.auth, **payload.dict()
    )


@router.post(
    "/annotations/{pk}/submit",
    response={200: AnnotationOut, **errors(403, 404, 410, 422)},
    summary="Submit your answer",
)
def submit_annotation(request, pk: int):
    return annotations.submit_annotation(visible_annotation(request.auth, pk), user=request.auth)


@router.delete(
    "/annotations/{pk}",
    response={204: None, **errors(403, 404, 409, 410, 422)},
    summary="Delete your draft answer (a submitted one is kept: 409)",
)
def delete_annotation(request, pk: int):
    annotations.delete_annotation(visible_annotation(request.auth, pk), user=request.auth)
    return Status(204, None)
