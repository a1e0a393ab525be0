"""A dataset's judges in the browser (curators; ``editor.assist``): attach a judge to a
question (connection, prompt template with the default filled in), start a run over the
dataset list's current filters, the runs with their progress (polled with htmx while one
runs), cancel, resume, the failures and the tokens in and out."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from editor.assist import judges, runs, tasks
from editor.assist.connections import connection_of, connections_of
from editor.errors import DomainError, NotAllowed
from editor.models import JudgeRun, LabelSchema
from editor.visibility import visible_dataset, visible_judge_run

PAGE = "editor/judges.html"
RUNS_SHOWN = 20


def _curated(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.can_curate(request.user):
        raise PermissionDenied("Only curators manage judges.")
    return dataset


def _runs(dataset) -> list[dict]:
    return [
        {"run": run, "progress": runs.progress_of(run), "tokens": runs.run_tokens(run)}
        for run in JudgeRun.objects.filter(dataset=dataset).select_related(
            "judge__schema", "judge__connection"
        )[:RUNS_SHOWN]
    ]


def _page(request, dataset, *, error=None, status=200):
    schemas = list(LabelSchema.objects.filter(dataset=dataset).active().with_current_version())
    return render(
        request,
        PAGE,
        {
            "dataset": dataset,
            "judges": list(judges.judges_of(dataset).order_by("schema__name", "question")),
            "questions": [
                (schema, question)
                for schema in schemas
                for question in judges.judgeable_questions(schema)
            ],
            "connections": list(connections_of(dataset)),
            "default_template": judges.DEFAULT_PROMPT_TEMPLATE,
            "runs": _runs(dataset),
            "tokens": runs.dataset_tokens(dataset),
            "filters": request.GET.urlencode(),
            "error": error,
        },
        status=status,
    )


@require_GET
def judges_page(request, slug):
    return _page(request, _curated(request, slug))


@require_POST
def judge_attach(request, slug):
    dataset = _curated(request, slug)
    schema_pk, _, question = request.POST.get("question", "").partition(":")
    try:
        schema = LabelSchema.objects.filter(dataset=dataset, pk=int(schema_pk)).first()
        if schema is None:
            raise Http404("No such schema.")
        connection = connection_of(dataset, int(request.POST.get("connection") or 0))
        judges.attach_judge(
            schema,
            question=question,
            connection=connection,
            prompt_template=request.POST.get("prompt_template") or None,
            user=request.user,
        )
    except ValueError:
        return _page(
            request, dataset, error={"message": "Pick a question and a connection."}, status=422
        )
    except DomainError as refused:
        return _page(request, dataset, error=refused, status=refused.status)
    messages.success(request, f"Judge attached to {question}.")
    return redirect("dataset-judges", dataset.slug)


@require_POST
def judge_run_start(request, slug, pk):
    dataset = _curated(request, slug)
    judge = judges.judges_of(dataset).filter(pk=pk).first()
    if judge is None:
        raise Http404("No such judge.")
    try:
        run = tasks.start_run(judge, user=request.user, filters=request.POST.get("filters", ""))
    except DomainError as refused:
        return _page(request, dataset, error=refused, status=refused.status)
    messages.success(
        request, f"Judge run {run.pk} started over {len(run.transcript_ids)} transcripts."
    )
    return redirect("dataset-judges", dataset.slug)


def _run_of(request, pk):
    run = visible_judge_run(request.user, pk)
    if not run.dataset.can_curate(request.user):
        raise PermissionDenied("Only curators manage judge runs.")
    return run


@require_GET
def judge_run_row(request, pk):
    """One run's row (the htmx poll while it runs)."""
    run = _run_of(request, pk)
    return render(
        request,
        f"{PAGE}#run-row",
        {"r": {"run": run, "progress": runs.progress_of(run), "tokens": runs.run_tokens(run)}},
    )


@require_POST
def judge_run_cancel(request, pk):
    run = _run_of(request, pk)
    tasks.cancel_run(run, user=request.user)
    return redirect("dataset-judges", run.dataset.slug)


@require_POST
def judge_run_resume(request, pk):
    run = _run_of(request, pk)
    try:
        tasks.resume_run(run, user=request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:
        messages.error(request, refused.message)
    return redirect("dataset-judges", run.dataset.slug)
