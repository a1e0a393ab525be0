"""Judges (a model answering one question of a label schema), their runs over a dataset's
transcripts, the suggestions they leave, and how far they agree with people.

Curators attach judges and start, cancel and resume runs; the roles that see hidden parts
read suggestions (a judge read the whole transcript) and annotators accept them into their
own answers. docs/api.md, docs/labels.md."""

from ninja import Query, Router, Schema, Status
from ninja.pagination import paginate

from editor.assist import judges, runs, suggestions, tasks, versus
from editor.assist.connections import connection_of
from editor.errors import JudgeNotFound, NotAllowed
from editor.models import Judge, JudgeRun, LabelSchema
from editor.visibility import (
    visible_dataset,
    visible_judge_run,
    visible_queue,
    visible_suggestion,
    visible_transcript,
)

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas.judges import (
    JudgeAgreementOut,
    JudgeIn,
    JudgeOut,
    JudgePatchIn,
    JudgeRunIn,
    JudgeRunOut,
    SuggestionOut,
)
from ..schemas.labels import AnnotationOut

router = Router(tags=["judges"])


def _schema_of(dataset, pk: int) -> LabelSchema:
    schema = (
        LabelSchema.objects.select_related("dataset", "current_version")
        .filter(dataset=dataset, pk=pk)
        .first()
    )
    if schema is None:
        raise JudgeNotFound(f"No label schema {pk} in {dataset.name}.")
    return schema


def visible_judge_for(dataset, pk: int) -> Judge:
    judge = (
        Judge.objects.select_related("schema__dataset", "schema__current_version", "connection")
        .filter(schema__dataset=dataset, pk=pk)
        .first()
    )
    if judge is None:
        raise JudgeNotFound(f"No judge {pk} in {dataset.name}.")
    return judge


def run_out(run: JudgeRun) -> dict:
    return {
        "id": run.pk,
        "dataset": run.dataset.slug,
        "judge": run.judge_id,
        "label_schema": run.judge.schema_id,
        "question": run.judge.question,
        "status": run.status,
        "cancelled": run.cancel_requested_at is not None,
        "progress": runs.progress_of(run),
        "error": run.error,
        "failures": run.failures,
        "filters": run.filters,
        "transcripts": len(run.transcript_ids),
        "tokens": runs.run_tokens(run),
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


# --- judges ------------------------------------------------------------------------------------


@router.get(
    "/datasets/{slug}/judges",
    response={200: list[JudgeOut], **errors(403, 404, 422)},
    summary="The dataset's judges",
)
def list_judges(request, slug: str):
    dataset = visible_dataset(request.auth, slug)
    suggestions.require_reader(dataset, request.auth)
    return list(
        judges.judges_of(dataset).select_related("connection").order_by("schema_id", "question")
    )


@router.post(
    "/datasets/{slug}/judges",
    response={201: JudgeOut, **errors(403, 404, 422)},
    summary="Attach a judge to a question (curators); attaching again changes it",
    description="The question: choice, multi_choice, rating or text, about the whole "
    "transcript (span and pairwise are not asked of a model). The prompt template fills "
    "{transcript} (as annotators see it), {question} and {options}.",
)
def attach_judge(request, slug: str, payload: JudgeIn):
    dataset = visible_dataset(request.auth, slug)
    schema = _schema_of(dataset, payload.schema_id)
    judge = judges.attach_judge(
        schema,
        question=payload.question,
        connection=connection_of(dataset, payload.connection),
        prompt_template=payload.prompt_template,
        user=request.auth,
    )
    return Status(201, judge)


@router.get(
    "/datasets/{slug}/judges/{pk}",
    response={200: JudgeOut, **errors(403, 404, 422)},
    summary="A judge",
)
def get_judge(request, slug: str, pk: int):
    dataset = visible_dataset(request.auth, slug)
    suggestions.require_reader(dataset, request.auth)
    return visible_judge_for(dataset, pk)


@router.patch(
    "/datasets/{slug}/judges/{pk}",
    response={200: JudgeOut, **errors(403, 404, 422)},
    summary="Change a judge's connection or prompt template (curators)",
)
def change_judge(request, slug: str, pk: int, payload: JudgePatchIn):
    dataset = visible_dataset(request.auth, slug)
    judge = visible_judge_for(dataset, pk)
    connection = (
        connection_of(dataset, payload.connection)
        if payload.connection is not None
        else judge.connection
    )
    return judges.attach_judge(
        judge.schema,
        question=judge.question,
        connection=connection,
        prompt_template=payload.prompt_template or judge.prompt_template,
        user=request.auth,
    )


@router.delete(
    "/datasets/{slug}/judges/{pk}",
    response={204: None, **errors(403, 404, 422)},
    summary="Detach a judge (curators): its runs go, its suggestions stay",
)
def detach_judge(request, slug: str, pk: int):
    judge = visible_judge_for(visible_dataset(request.auth, slug), pk)
    judges.detach_judge(judge, user=request.auth)
    return Status(204, None)


# --- runs ----------------------------------------------------------------------------------------


@router.post(
    "/judge-runs",
    response={202: JudgeRunOut, **errors(403, 404, 422)},
    summary="Start a judge run over the transcripts the filters select (curators)",
    description="Answers at once with the run; poll `GET /judge-runs/{id}`. The selection is "
    "fixed at the start; each transcript gets one suggestion, however often the run is "
    "resumed.",
)
def start_run(request, payload: JudgeRunIn):
    dataset = visible_dataset(request.auth, payload.dataset)
    schema = _schema_of(dataset, payload.schema_id)
    judge = judges.judges_of(dataset).filter(schema=schema, question=payload.question).first()
    if judge is None:
        raise JudgeNotFound(f"No judge on {payload.question!r} of {schema.name!r}: attach one.")
    run = tasks.start_run(judge, user=request.auth, filters=payload.filters)
    return Status(202, run_out(visible_judge_run(request.auth, run.pk)))


class RunFilters(Schema):
    dataset: str


@router.get(
    "/judge-runs",
    response={200: list[JudgeRunOut], **errors(403, 404, 422)},
    summary="A dataset's judge runs, newest first",
)
@paginate(LimitOffset)
def list_runs(request, filters: Query[RunFilters]):
    dataset = visible_dataset(request.auth, filters.dataset)
    suggestions.require_reader(dataset, request.auth)
    return [
        run_out(run)
        for run in JudgeRun.objects.filter(dataset=dataset).select_related("dataset", "judge")
    ]


@router.get(
    "/judge-runs/{pk}",
    response={200: JudgeRunOut, **errors(403, 404, 422)},
    summary="A judge run: status, progress, failures, tokens in and out",
)
def get_run(request, pk: int):
    run = visible_judge_run(request.auth, pk)
    suggestions.require_reader(run.dataset, request.auth)
    return run_out(run)


@router.post(
    "/judge-runs/{pk}/cancel",
    response={200: JudgeRunOut, **errors(403, 404, 422)},
    summary="Cancel a run (curators): requests in flight finish, nothing more is asked",
)
def cancel_run(request, pk: int):
    return run_out(tasks.cancel_run(visible_judge_run(request.auth, pk), user=request.auth))


@router.post(
    "/judge-runs/{pk}/resume",
    response={202: JudgeRunOut, **errors(403, 404, 409, 422)},
    summary="Resume an ended run (curators): only transcripts without its suggestion are asked",
)
def resume_run(request, pk: int):
    run = tasks.resume_run(visible_judge_run(request.auth, pk), user=request.auth)
    return Status(202, run_out(visible_judge_run(request.auth, run.pk)))


# --- suggestions and agreement -----------------------------------------------------------------


@router.get(
    "/transcripts/{pk}/suggestions",
    response={200: list[SuggestionOut], **errors(403, 404, 410, 422)},
    summary="The model's newest suggestion per question of the active schemas",
    description="Suggestions are the model's (`source: model`), never a person's answer.",
)
def transcript_suggestions(request, pk: int):
    transcript = visible_transcript(request.auth, pk)
    return suggestions.suggestions_of(transcript, request.auth)


@router.post(
    "/suggestions/{pk}/accept",
    response={200: AnnotationOut, **errors(403, 404, 409, 422)},
    summary="Accept a suggestion: it becomes your answer (a draft annotation of yours)",
)
def accept_suggestion(request, pk: int):
    return suggestions.accept(visible_suggestion(request.auth, pk), user=request.auth)


@router.get(
    "/queues/{pk}/judge-agreement",
    response={200: list[JudgeAgreementOut], **errors(403, 404, 422)},
    summary="Judge vs people per judged question of the queue: agreement, confusion table",
)
def judge_agreement(request, pk: int):
    queue = visible_queue(request.auth, pk)
    if not queue.dataset.can_review(request.auth):
        raise NotAllowed("Only reviewers and curators read a queue's figures.")
    return [versus.to_dict(figure) for figure in versus.judge_figures(queue)]
