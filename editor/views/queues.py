"""Review queues in the browser: the annotator's focused view (the editor embedded, the next
item without a page reload), the reviewer's list, the curator's dashboard, and creating a
queue from the dataset page. Thin views over ``editor.queues``."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from editor import alternatives, queues
from editor.assist import suggestions, versus
from editor.errors import DomainError, NotAllowed
from editor.labels import annotations
from editor.models import (
    AssignmentState,
    QueueAssignment,
    ReviewQueue,
    Status,
)
from editor.presentation.transcript_view import transcript_view
from editor.views.shared import int_param
from editor.views.transcripts import message_list_context, transcript_context
from editor.visibility import visible_dataset, visible_queue
from editor.workflow import REVIEWERS

TEMPLATE = "editor/queue.html"
WORKING_AUDIENCE = "annotator"


def _queue(request, pk: int) -> ReviewQueue:
    return visible_queue(request.user, pk)


def _workspace_context(request, queue: ReviewQueue, assignment: QueueAssignment | None) -> dict:
    """What the focused view shows: progress, the assignment's transcript with the editor,
    and what came back from review."""
    done = QueueAssignment.objects.filter(
        item__queue=queue,
        annotator=request.user,
        state__in=(AssignmentState.SUBMITTED, AssignmentState.APPROVED),
    ).count()
    context = {
        "queue": queue,
        "assignment": assignment,
        "done": done,
        "total": queue.items.count(),
        "returned": QueueAssignment.objects.filter(
            item__queue=queue, annotator=request.user, state=AssignmentState.REJECTED
        ).select_related("item__transcript"),
    }
    if assignment is None:
        # Said before Start is pressed, not only after: a finished annotator is told so.
        context["nothing_left"] = not queues.has_open_item(queue, request.user)
    else:
        transcript = assignment.item.transcript
        context["questions"] = suggestions.with_suggestions(
            transcript,
            request.user,
            annotations.with_my_answers(transcript, request.user, queues.queue_questions(queue)),
        )
        context["pairwise"] = alternatives.pairwise_items(
            transcript, request.user, queues.queue_questions(queue, "turn")
        )
        view = transcript_view(transcript, WORKING_AUDIENCE)
        context.update(
            transcript_context(
                request,
                transcript,
                WORKING_AUDIENCE,
                message_questions=queues.queue_questions(queue, "message"),
            )
        )
        context.update(message_list_context(view, 0))
        context["revisions"] = []
        # Blind: the pairwise items show the alternatives, unlabelled; no panels here.
        context["turn_alternatives"] = alternatives.TurnPanels(offered=False)
    return context


def _assignment(request, pk: int) -> QueueAssignment:
    """The assignment ``pk`` in a queue of one of the user's datasets, else a 404 page."""
    try:
        return queues.assignment_for(request.user, pk)
    except queues.NoSuchAssignment as missing:
        raise Http404(missing.message) from None


@require_GET
@vary_on_headers("HX-Request")
def queue_detail(request, pk):
    """The annotator's view: the item they hold (or a start button); ``?open=<id>``: one of
    their items that came back from review (the dashboard links there)."""
    queue = _queue(request, pk)
    if not queue.may_work(request.user):
        raise PermissionDenied("You may not work in this queue.")
    queues.expire_reservations(queue)
    mine = QueueAssignment.objects.filter(item__queue=queue, annotator=request.user)
    mine = mine.select_related("item__transcript__dataset")
    returned = int_param(request.GET.get("open"))
    held = None
    if returned is not None:
        held = mine.filter(pk=returned, state=AssignmentState.REJECTED).first()
    held = held or mine.filter(state=AssignmentState.CLAIMED).first()
    context = _workspace_context(request, queue, held)
    template = TEMPLATE + ("#queue-workspace" if request.htmx else "")
    return render(request, template, context)


def _answer_workspace(request, queue, assignment, *, toast: str = ""):
    context = _workspace_context(request, queue, assignment)
    context["toast"] = toast
    if not request.htmx:
        if toast:
            messages.info(request, toast)
        return redirect("queue", pk=queue.pk)
    return render(request, TEMPLATE + "#queue-workspace", context)


@require_POST
def queue_claim(request, pk):
    queue = _queue(request, pk)
    try:
        assignment = queues.claim_next(queue, request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    if assignment is None:
        return _answer_workspace(request, queue, None, toast="Nothing left to do in this queue.")
    return _answer_workspace(request, queue, assignment)


@require_POST
def assignment_move(request, pk, move):
    """Submit or skip the item the annotator holds, then the next one."""
    # Looked up outside the try: a missing assignment is a 404, not a toast.
    assignment = _assignment(request, pk)
    try:
        mover = {"submit": queues.submit, "skip": queues.skip}[move]
        done = mover(assignment, request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:
        # Nothing moved: show the item as it is now (still held, or gone), with why.
        current = _assignment(request, pk)
        held = (
            current
            if current.state in (AssignmentState.CLAIMED, AssignmentState.REJECTED)
            else None
        )
        return _answer_workspace(request, current.item.queue, held, toast=refused.message)
    queue = done.item.queue
    nxt = queues.claim_next(queue, request.user)
    word = "Submitted" if move == "submit" else "Skipped"
    toast = f"{word} item #{done.item.position + 1}." + ("" if nxt else " Nothing left to do.")
    return _answer_workspace(request, queue, nxt, toast=toast)


@require_POST
def assignment_resume(request, pk):
    """Reopen an item that came back from review: it becomes the one shown; submit resubmits."""
    assignment = _assignment(request, pk)
    if assignment.annotator_id != request.user.pk:
        raise PermissionDenied("This item is another annotator's.")
    return _answer_workspace(request, assignment.item.queue, assignment)


# --- reviewing and the dashboard --------------------------------------------------------------


def _reviewable(request, pk) -> ReviewQueue:
    queue = _queue(request, pk)
    if queue.dataset.role_of(request.user) not in REVIEWERS:
        raise PermissionDenied("Only reviewers and curators review.")
    return queue


REVIEW_TEMPLATE = "editor/queue_review.html"


def _review_context(request, queue: ReviewQueue, *, item_pk=None, assignment_pk=None) -> dict:
    """The review page on one item: the one asked for while it waits for review, else the
    next one waiting after it (the first when none is), with every annotator's work on it and
    the decision on one of its submissions (the one asked for, else the first waiting)."""
    waiting = list(queues.waiting_items(queue).select_related("transcript"))
    context = {"queue": queue, "waiting": waiting, "item": None}
    if not waiting:
        return context
    asked = next((i for i in waiting if i.pk == item_pk), None)
    if asked is None and item_pk is not None:
        before = queue.items.filter(pk=item_pk).values_list("position", flat=True).first()
        asked = next((i for i in waiting if before is not None and i.position > before), None)
    item = asked or waiting[0]
    review = queues.item_review(item)
    pending = [a for a in review.assignments if a.state == AssignmentState.SUBMITTED]
    deciding = next((a for a in pending if a.pk == assignment_pk), pending[0])
    for assignment in review.assignments:
        assignment.fixes = list(queues.assignment_revisions(assignment).defer("snapshot"))
    later = [i for i in waiting if i.position > item.position]
    transcript = item.transcript
    view = transcript_view(transcript, WORKING_AUDIENCE)
    context.update(transcript_context(request, transcript, WORKING_AUDIENCE))
    context.update(message_list_context(view, 0))
    context.update(
        {
            "item": item,
            "review": review,
            "deciding": deciding,
            "pending": pending,
            "next_item": (later or waiting)[0] if len(waiting) > 1 else None,
            # The transcript as the annotators saw it, their work on it, and no editing here.
            "labels_by_message": review.messages,
            "can_edit": False,
            "audiences": [],
            "revisions": [],
        }
    )
    return context


@require_GET
@vary_on_headers("HX-Request")
def queue_review(request, pk):
    """One submitted item at a time (``?item=``), every annotator's work on it compared, to
    approve or reject each submission (``?assignment=`` picks which)."""
    queue = _reviewable(request, pk)
    context = _review_context(
        request,
        queue,
        item_pk=int_param(request.GET.get("item")),
        assignment_pk=int_param(request.GET.get("assignment")),
    )
    template = REVIEW_TEMPLATE + ("#review-workspace" if request.htmx else "")
    return render(request, template, context)


@require_POST
def assignment_review(request, pk):
    """Approve or reject one submission; with htmx, the review page's workspace answers: the
    item's next submission waiting, else the next item (the refusal in place, 422, when the
    decision was refused)."""
    assignment = _assignment(request, pk)
    queue = assignment.item.queue
    decision = request.POST.get("decision", "")
    comment = request.POST.get("comment", "")
    try:
        queues.review(assignment, request.user, decision=decision, comment=comment)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:
        if not request.htmx:
            messages.error(request, refused.message)
            return redirect("queue-review", pk=queue.pk)
        context = _review_context(
            request, queue, item_pk=assignment.item_id, assignment_pk=assignment.pk
        )
        context.update({"refusal": refused.message, "comment": comment})
        return render(request, REVIEW_TEMPLATE + "#review-workspace", context, status=422)
    done = {"approve": "approved", "reject": "rejected"}[decision]
    toast = f"Item #{assignment.item.position + 1}: {done} the work of {assignment.annotator}."
    if not request.htmx:
        messages.success(request, toast)
        return redirect("queue-review", pk=queue.pk)
    context = _review_context(request, queue, item_pk=assignment.item_id)
    context["toast"] = toast
    return render(request, REVIEW_TEMPLATE + "#review-workspace", context)


@require_GET
def queue_dashboard(request, pk):
    """Counts per state, and per annotator: items done and the median time per item."""
    queue = _reviewable(request, pk)
    annotators = queues.annotator_figures(queue)
    progress = queues.progress(queue)
    return render(
        request,
        "editor/queue_dashboard.html",
        {
            "queue": queue,
            "progress": progress,
            "counts": [(state, label, progress[state]) for state, label in AssignmentState.choices],
            "annotators": annotators,
            "state_labels": AssignmentState.labels,
            "labels": queues.label_figures(queue),
            "judges": versus.judge_figures(queue),
        },
    )


# --- creating a queue (dataset page) ----------------------------------------------------------


@require_POST
def queue_create(request, slug):
    dataset = visible_dataset(request.user, slug)
    filters = {
        "status": [s for s in request.POST.getlist("status") if s in Status.values],
        "has_errors": {"yes": True, "no": False}.get(request.POST.get("has_errors", "")),
    }
    if request.POST.get("text", "").strip():
        filters["text"] = request.POST["text"].strip()[:500]
    if request.POST.get("label_question", "").strip():
        value = request.POST.get("label_value", "").strip()
        filters["label"] = {
            "question": request.POST["label_question"].strip(),
            "value": int(value) if value.isdigit() else value,
        }
    usernames = [u for u in request.POST.get("assignees", "").replace(",", " ").split() if u]
    try:
        assignees = queues.users_named(usernames)
        schema_ids = [int(pk) for pk in request.POST.getlist("schemas")]
        queue = queues.create_queue(
            dataset,
            queues.matching_transcripts(dataset, filters),
            name=request.POST.get("name", ""),
            author=request.user,
            overlap=int(request.POST.get("overlap") or 1),
            reservation_minutes=int(request.POST.get("reservation_minutes") or 30),
            assignees=assignees,
            instructions=request.POST.get("instructions", ""),
            filters=filters,
            schemas=queues.schemas_by_id(dataset, schema_ids),
        )
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except (DomainError, ValueError) as refused:
        messages.error(
            request, getattr(refused, "message", "Overlap and reservation must be numbers.")
        )
        return redirect("dataset", slug=dataset.slug)
    messages.success(request, f"Queue “{queue.name}” created with {queue.items.count()} items.")
    return redirect("queue-dashboard", pk=queue.pk)
