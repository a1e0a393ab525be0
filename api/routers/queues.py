"""Review queues (``editor.queues``): curators create them over a dataset filter; annotators
claim the next item, submit or skip it; reviewers approve or reject with a comment."""

from django.http import Http404, HttpResponse
from ninja import Router, Status
from ninja.pagination import paginate

from editor import queues
from editor.errors import NotAllowed
from editor.models import AssignmentState, Dataset, QueueAssignment, ReviewQueue, Role
from editor.visibility import visible_dataset

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas import (
    AssignmentOut,
    QueueFiguresOut,
    QueueIn,
    QueueOut,
    QueueSchemasIn,
    ReviewIn,
)

router = Router(tags=["queues"])


def _queue(user, pk: int) -> ReviewQueue:
    queue = (
        ReviewQueue.objects.select_related("dataset")
        .filter(dataset__in=Dataset.objects.for_user(user), pk=pk)
        .first()
    )
    if queue is None:
        raise Http404(f"No queue {pk} among your datasets'.")
    return queue


@router.get(
    "/datasets/{slug}/queues",
    response={200: list[QueueOut], **errors(404, 422)},
    summary="The review queues of a dataset, newest first",
)
@paginate(LimitOffset)
def list_queues(request, slug: str):
    dataset = visible_dataset(request.auth, slug)
    return dataset.queues.select_related("dataset").prefetch_related("assignees", "schemas")


@router.post(
    "/datasets/{slug}/queues",
    response={201: QueueOut, **errors(403, 404, 422)},
    summary="Create a queue over the transcripts a filter selects (curators)",
)
def create_queue(request, slug: str, payload: QueueIn):
    dataset = visible_dataset(request.auth, slug)
    filters = payload.filters.dict()
    queue = queues.create_queue(
        dataset,
        queues.matching_transcripts(dataset, filters),
        name=payload.name,
        author=request.auth,
        overlap=payload.overlap,
        reservation_minutes=payload.reservation_minutes,
        assignees=queues.users_named(payload.assignees),
        instructions=payload.instructions,
        filters=filters,
        schemas=queues.schemas_by_id(dataset, payload.schemas),
    )
    return Status(201, queue)


@router.get(
    "/queues/{pk}",
    response={200: QueueOut, **errors(404, 422)},
    summary="A queue with its progress",
)
def get_queue(request, pk: int):
    return _queue(request.auth, pk)


@router.put(
    "/queues/{pk}/schemas",
    response={200: QueueOut, **errors(403, 404, 422)},
    summary="Choose the label schemas the queue asks (curators); empty: every active schema",
)
def set_schemas(request, pk: int, payload: QueueSchemasIn):
    queue = _queue(request.auth, pk)
    queues.set_schemas(
        queue, queues.schemas_by_id(queue.dataset, payload.schemas), author=request.auth
    )
    return queue


@router.get(
    "/queues/{pk}/figures",
    response={200: QueueFiguresOut, **errors(403, 404, 422)},
    summary="Progress, per annotator figures, answer distributions and agreement (reviewers, "
    "curators)",
    description="`labels` has one entry per question about whole transcripts: the "
    "distribution of submitted answers and the agreement between annotators (Cohen's kappa "
    "for two, Krippendorff's alpha for more; `null` for free text and spans).",
)
def figures(request, pk: int):
    queue = _queue(request.auth, pk)
    if not queue.dataset.can_review(request.auth):
        raise NotAllowed("Only reviewers and curators see a queue's figures.")
    return {
        "progress": queues.progress(queue),
        "annotators": [
            {
                "name": row["name"],
                "done": row["done"],
                "states": dict(zip(AssignmentState.values, row["counts"], strict=True)),
                "median_seconds": row["median_seconds"],
                "per_hour": row["per_hour"],
            }
            for row in queues.annotator_figures(queue)
        ],
        "labels": [
            {
                "schema": figure["schema"].name,
                "question": figure["question"].key,
                "kind": figure["question"].kind,
                "answered_items": figure["answered_items"],
                "distribution": [
                    {"label": label, "count": count} for label, count in figure["distribution"]
                ],
                "agreement": None if figure["agreement"] is None else figure["agreement"].to_dict(),
            }
            for figure in queues.label_figures(queue)
        ],
    }


@router.post(
    "/queues/{pk}/claim",
    response={200: AssignmentOut, 204: None, **errors(403, 404, 422)},
    summary="Claim the next item (the one you hold already, if any); 204 when none is left",
)
def claim(request, pk: int):
    assignment = queues.claim_next(_queue(request.auth, pk), request.auth)
    if assignment is None:
        return HttpResponse(status=204)
    return assignment


@router.get(
    "/queues/{pk}/assignments",
    response={200: list[AssignmentOut], **errors(404, 422)},
    summary="Assignments of the queue: yours; reviewers and curators see everyone's",
)
@paginate(LimitOffset)
def list_assignments(request, pk: int, state: AssignmentState | None = None):
    queue = _queue(request.auth, pk)
    rows = QueueAssignment.objects.filter(item__queue=queue).select_related(
        "item", "annotator", "reviewer"
    )
    if queue.dataset.role_of(request.auth) not in (Role.REVIEWER, Role.CURATOR):
        rows = rows.filter(annotator=request.auth)
    if state is not None:
        rows = rows.filter(state=state)
    return rows.order_by("item__position", "pk")


@router.post(
    "/assignments/{pk}/submit",
    response={200: AssignmentOut, **errors(403, 404, 409, 422)},
    summary="Hand in a claimed (or rejected) item; its transcript goes to review",
)
def submit(request, pk: int):
    return queues.submit(queues.assignment_for(request.auth, pk), request.auth)


@router.post(
    "/assignments/{pk}/skip",
    response={200: AssignmentOut, **errors(403, 404, 409, 422)},
    summary="Give a claimed item back to the pool (you will not get it again)",
)
def skip(request, pk: int):
    return queues.skip(queues.assignment_for(request.auth, pk), request.auth)


@router.post(
    "/assignments/{pk}/review",
    response={200: AssignmentOut, **errors(403, 404, 409, 422)},
    summary="Approve or reject a submitted item (reviewers, curators); a rejection needs a "
    "comment and returns the item to its annotator",
)
def review(request, pk: int, payload: ReviewIn):
    return queues.review(
        queues.assignment_for(request.auth, pk),
        request.auth,
        decision=payload.decision,
        comment=payload.comment,
    )
