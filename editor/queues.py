"""Review queues: curators make them over a selection of transcripts, annotators claim the
next item, submit or skip it, reviewers approve or reject what was submitted.

Every move between assignment states is in ``editor.workflow`` (``ASSIGNMENT_TRANSITIONS``).
An item goes to at most ``overlap`` distinct annotators at once: each assignment that counts
holds one of the item's numbered places, and the database's unique (item, place) constraint
refuses a second holder however many claim at the same moment. On PostgreSQL, claimers also
skip items another claimer has locked (``SELECT … FOR UPDATE SKIP LOCKED``), so eight claimers
do not all queue up behind the same row; SQLite has no row locks (its writes are serialized)
and relies on the constraint alone.

Reviewing feeds the transcript's own workflow: a submitted item is in review, an approved one
approved (what exports filter on), a rejected one rejected; an item several annotators worked
on is approved only once every required submission is (``workflow.item_status``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from statistics import median
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from editor import webhooks, workflow
from editor.db.storable import check_storable_text
from editor.errors import ConflictError, DomainError, InvalidContent, NoSuchAssignment, NotAllowed
from editor.labels import Question, definition_of
from editor.labels.agreement import for_question_kind
from editor.labels.annotations import submit_answers
from editor.models import (
    EDITING_ROLES,
    REVIEWING_ROLES,
    AnchorState,
    Annotation,
    AnnotationState,
    AssignmentState,
    Dataset,
    LabelSchema,
    QueueAssignment,
    QueueItem,
    ReviewQueue,
    Revision,
    Transcript,
    TranscriptFilter,
)
from editor.storage.save import save_transcript

# A claimer that loses the race for a place tries the next free item; past this many lost
# races in a row something else is wrong.
MAX_CLAIM_ATTEMPTS = 20
MAX_OVERLAP = 20
DONE_STATES = (AssignmentState.SUBMITTED, AssignmentState.APPROVED, AssignmentState.REJECTED)


class _PlaceTaken(Exception):
    """The item filled up between finding it and taking a place (SQLite: no row lock)."""


def users_named(usernames: Iterable[str]) -> list:
    """The users called ``usernames``; ``InvalidContent`` (``unknown-user``) naming any that
    is none. A name with a NUL is none: no username has one, and PostgreSQL refuses one in a
    query."""
    wanted = set(usernames)
    users = list(
        get_user_model().objects.filter(username__in=[n for n in wanted if "\x00" not in n])
    )
    missing = sorted(wanted - {user.get_username() for user in users})
    if missing:
        raise InvalidContent(f"No such user: {', '.join(missing)}.", code="unknown-user")
    return users


def create_queue(
    dataset: Dataset,
    transcripts: Iterable[Transcript],
    *,
    name: str,
    author,
    overlap: int = 1,
    reservation_minutes: int = 30,
    assignees: Iterable = (),
    instructions: str = "",
    filters: dict | None = None,
    schemas: Iterable[LabelSchema] = (),
) -> ReviewQueue:
    """A queue over ``transcripts`` (of ``dataset``, in that order) asking the questions of
    ``schemas`` (none: every active schema of the dataset); curators only."""
    if not dataset.can_curate(author):
        raise NotAllowed("Only a curator of the dataset may create review queues.")
    if not name.strip():
        raise InvalidContent("A queue needs a name.", code="invalid-queue")
    check_storable_text(name, "The name")
    check_storable_text(instructions, "The instructions")
    check_storable_text(filters or {}, "The filters")
    if not 1 <= overlap <= MAX_OVERLAP:
        raise InvalidContent(f"overlap must be between 1 and {MAX_OVERLAP}.", code="invalid-queue")
    if reservation_minutes < 1:
        raise InvalidContent("reservation_minutes must be at least 1.", code="invalid-queue")
    assignees = list(assignees)
    outsiders = [user for user in assignees if not dataset.can_edit(user)]
    if outsiders:
        raise InvalidContent(
            f"Not an editor of the dataset: {', '.join(u.get_username() for u in outsiders)}.",
            code="invalid-queue",
        )
    schemas = list(schemas)
    _check_schemas(dataset, schemas)
    with transaction.atomic():
        queue = ReviewQueue.objects.create(
            dataset=dataset,
            name=name.strip(),
            instructions=instructions,
            filters=filters or {},
            overlap=overlap,
            reservation_minutes=reservation_minutes,
            created_by=author,
        )
        queue.assignees.set(assignees)
        queue.schemas.set(schemas)
        QueueItem.objects.bulk_create(
            [
                QueueItem(queue=queue, transcript_id=transcript.pk, position=position)
                for position, transcript in enumerate(transcripts)
                if transcript.dataset_id == dataset.pk
            ],
            batch_size=1000,
        )
    return queue


def schemas_by_id(dataset: Dataset, ids: Iterable[int]) -> list[LabelSchema]:
    """The schemas of ``dataset`` with these ids; ``InvalidContent`` (``unknown-schema``)
    naming any id that is none of them."""
    wanted = set(ids)
    # an id past what a database integer holds is no schema (and SQLite refuses to read it)
    possible = [pk for pk in wanted if 0 < pk < 2**63]
    found = list(LabelSchema.objects.filter(dataset=dataset, pk__in=possible))
    missing = sorted(wanted - {schema.pk for schema in found})
    if missing:
        raise InvalidContent(
            f"No such label schema in the dataset: {', '.join(map(str, missing))}.",
            code="unknown-schema",
        )
    return found


def _check_schemas(dataset: Dataset, schemas: list[LabelSchema]) -> None:
    strangers = [schema.name for schema in schemas if schema.dataset_id != dataset.pk]
    if strangers:
        raise InvalidContent(
            f"Not a schema of the dataset: {', '.join(strangers)}.", code="unknown-schema"
        )


def set_schemas(queue: ReviewQueue, schemas: Iterable[LabelSchema], *, author) -> None:
    """Choose the schemas the queue asks (none: every active schema of the dataset); curators
    only. Answers already given stay as they are."""
    if not queue.dataset.can_curate(author):
        raise NotAllowed("Only a curator of the dataset may choose what its queues ask.")
    schemas = list(schemas)
    _check_schemas(queue.dataset, schemas)
    queue.schemas.set(schemas)


def queue_questions(
    queue: ReviewQueue, target: str | tuple[str, ...] = "transcript"
) -> list[tuple]:
    """What the queue asks about ``target`` ("transcript", "message" or "turn", or a tuple of
    them, read in one query): the questions of
    the schemas it chose, or of every active schema of its dataset when it chose none; each
    schema at its current version, archived ones left out (they take no answers)."""
    targets = (target,) if isinstance(target, str) else target
    chosen = ReviewQueue.schemas.through.objects.filter(
        reviewqueue=queue.pk, labelschema=OuterRef("pk")
    )
    schemas = list(  # one query: the dataset's schemas, each saying whether the queue chose it
        LabelSchema.objects.filter(dataset=queue.dataset_id)
        .with_current_version()
        .annotate(chosen=Exists(chosen))
    )
    chose_some = any(schema.chosen for schema in schemas)
    return [
        (schema, question)
        for schema in schemas
        if (schema.chosen or not chose_some) and not schema.is_archived
        for question in definition_of(schema.current_version).questions
        if question.applies_to in targets
    ]


def add_items(queue: ReviewQueue, transcript_ids: Iterable[int], *, author) -> list[int]:
    """Append transcripts of the queue's dataset to its end; the ids added (those already
    in the queue are left where they are). Curators only."""
    if not queue.dataset.can_curate(author):
        raise NotAllowed("Only a curator of the dataset may add to its queues.")
    with transaction.atomic():
        # The queue row is locked so that two additions never take the same positions.
        ReviewQueue.objects.select_for_update().filter(pk=queue.pk).first()
        present = set(queue.items.values_list("transcript_id", flat=True))
        wanted = Transcript.objects.filter(dataset=queue.dataset, pk__in=list(transcript_ids))
        new = [pk for pk in wanted.order_by("pk").values_list("pk", flat=True) if pk not in present]
        last = queue.items.aggregate(last=Max("position"))["last"]
        start = 0 if last is None else last + 1
        QueueItem.objects.bulk_create(
            [
                QueueItem(queue=queue, transcript_id=pk, position=start + n)
                for n, pk in enumerate(new)
            ],
            batch_size=1000,
        )
    return new


def matching_transcripts(dataset: Dataset, filters: dict):
    """The live transcripts of ``dataset`` a queue filter selects, oldest first:
    ``{"status": [...], "spec": [...], "has_errors": bool, "label": {"question", "value"},
    "text": "words"}`` (each optional; ``label``: a submitted answer with that value;
    ``text``: words in one message, as the dataset page's search)."""
    label = filters.get("label") or None
    rows = Transcript.objects.filter(dataset=dataset).matching(
        TranscriptFilter(
            statuses=filters.get("status") or (),
            has_errors=filters.get("has_errors"),
            label=(label["question"], label["value"]) if label else None,
            # curators make queues, and they see every part of a transcript
            text=filters.get("text") or None,
            search_hidden=True,
        )
    )
    if filters.get("spec"):
        rows = rows.filter(spec__in=filters["spec"])
    return rows.only("pk", "dataset_id").order_by("pk")


def expire_reservations(queue: ReviewQueue, now=None) -> int:
    """Give back the places of claims whose reservation ran out; how many."""
    now = now or timezone.now()
    return QueueAssignment.objects.filter(
        item__queue=queue, state=AssignmentState.CLAIMED, expires_at__lte=now
    ).update(state=workflow.check_assignment_move(AssignmentState.CLAIMED, "expire"), slot=None)


def claim_next(queue: ReviewQueue, user, *, now=None) -> QueueAssignment | None:
    """The item ``user`` should work on: the one they hold already, else the first item with
    a free place they have not worked on (None when there is none)."""
    if not queue.may_work(user):
        raise NotAllowed("You may not work in this queue.")
    now = now or timezone.now()
    expire_reservations(queue, now)
    held = (
        QueueAssignment.objects.filter(
            item__queue=queue, annotator=user, state=AssignmentState.CLAIMED
        )
        .select_related("item__transcript")
        .first()
    )
    if held is not None:
        return held
    for _ in range(MAX_CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                item = _first_open_item(queue, user, now)
                if item is None:
                    return None
                return _take_a_place(queue, item, user, now)
        except (IntegrityError, _PlaceTaken):
            continue  # another claimer took that place first: try again
    raise DomainError("Too many claims at once; try again.", code="claim-contention")


def has_open_item(queue: ReviewQueue, user) -> bool:
    """Whether ``user`` could claim an item of ``queue`` now (one they hold aside)."""
    return _open_items(queue, user, timezone.now()).exists()


def _open_items(queue: ReviewQueue, user, now):
    """The items of ``queue`` with a free place that ``user`` has not worked on, in queue
    order (``_open_item_rows``)."""
    return _open_item_rows(user, now).filter(queue=queue).order_by("position")


def _open_item_rows(user, now):
    """Queue items with a free place that ``user`` has not worked on, as ``claim_next`` decides
    at ``now``: a claim that ran out neither holds a place nor counts as worked on, even
    before ``expire_reservations`` writes it (the queue page and the dashboard ask without
    writing)."""
    ran_out = Q(state=AssignmentState.CLAIMED, expires_at__lte=now)
    worked_on = (
        QueueAssignment.objects.filter(item=OuterRef("pk"), annotator=user)
        .exclude(state=AssignmentState.EXPIRED)
        .exclude(ran_out)
    )
    places = (
        QueueAssignment.objects.filter(item=OuterRef("pk"), slot__isnull=False)
        .exclude(ran_out)
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        QueueItem.objects.exclude(Exists(worked_on))
        .alias(taken=Coalesce(Subquery(places), 0))
        .filter(taken__lt=F("queue__overlap"))
    )


def _first_open_item(queue: ReviewQueue, user, now) -> QueueItem | None:
    """The first open item, locked. Claimers spread over the items by skipping the ones another
    claimer holds locked; when only locked ones are left, this waits for them rather than say
    nothing is left: the other claimer may take one place of several, and an annotator told
    "nothing left" would leave an item short of its overlap (``_take_a_place`` reads the places
    again once the lock is had)."""
    items = _open_items(queue, user, now).select_related("transcript")
    if not connection.features.has_select_for_update_skip_locked:
        return items.first()  # SQLite: one writer at a time, no row locks
    return (
        items.select_for_update(skip_locked=True, of=("self",)).first()
        or items.select_for_update(of=("self",)).first()
    )


def _take_a_place(queue: ReviewQueue, item: QueueItem, user, now) -> QueueAssignment:
    taken = set(
        QueueAssignment.objects.filter(item=item, slot__isnull=False).values_list("slot", flat=True)
    )
    free = set(range(queue.overlap)) - taken
    if not free:
        raise _PlaceTaken
    slot = min(free)
    expires = now + timedelta(minutes=queue.reservation_minutes)
    fields = {
        "state": AssignmentState.CLAIMED,
        "slot": slot,
        "claimed_at": now,
        "expires_at": expires,
        "submitted_at": None,
    }
    expired = QueueAssignment.objects.filter(
        item=item, annotator=user, state=AssignmentState.EXPIRED
    ).first()
    if expired is not None:
        workflow.check_assignment_move(expired.state, "claim")
        for name, value in fields.items():
            setattr(expired, name, value)
        expired.save(update_fields=list(fields))
        return expired
    return QueueAssignment.objects.create(item=item, annotator=user, **fields)


def assignment_for(user, pk: int) -> QueueAssignment:
    """An assignment in a queue of a dataset ``user`` belongs to (404 otherwise)."""
    assignment = (
        QueueAssignment.objects.select_related(
            "item__queue__dataset", "item__transcript__dataset", "annotator"
        )
        .filter(item__queue__dataset__in=Dataset.objects.for_user(user), pk=pk)
        .first()
    )
    if assignment is None:
        raise NoSuchAssignment(f"No assignment {pk} among your datasets' queues.")
    return assignment


def _move(assignment: QueueAssignment, move: str, **fields) -> QueueAssignment:
    """Change the state of ``assignment`` if it is still where it was read (compare and swap,
    like transcript versions): a concurrent move makes this one a 409."""
    target = workflow.check_assignment_move(assignment.state, move)
    if target not in workflow.HOLDS_A_PLACE:
        fields["slot"] = None
    updated = QueueAssignment.objects.filter(pk=assignment.pk, state=assignment.state).update(
        state=target, **fields
    )
    if not updated:
        raise workflow.TransitionRefused("The assignment changed meanwhile; reload it.")
    # What the update wrote, without reading the row (and its relations) back.
    assignment.state = target
    for name, value in fields.items():
        setattr(assignment, name, value)
    return assignment


def submit(assignment: QueueAssignment, user, *, now=None) -> QueueAssignment:
    """Hand in the item: the annotator's answers about its transcript are submitted (every
    required question answered first), and the transcript goes to review."""
    _require_owner(assignment, user)
    now = now or timezone.now()
    with transaction.atomic(), webhooks.one_read():
        queue = assignment.item.queue
        submit_answers(
            assignment.item.transcript,
            user=user,
            questions=queue_questions(queue, ("transcript", "turn")),
        )
        read = _lock_item(assignment.item)
        assignment = _move(assignment, "submit", submitted_at=now)
        _follow_item(assignment, read, user, "submitted")
        _emit_item_event(assignment, webhooks.events.QUEUE_ITEM_SUBMITTED, by=user)
    return assignment


def skip(assignment: QueueAssignment, user) -> QueueAssignment:
    """Give the item back to the pool; the annotator does not get it again."""
    _require_owner(assignment, user)
    return _move(assignment, "skip")


def review(
    assignment: QueueAssignment, reviewer, *, decision: str, comment: str = "", now=None
) -> QueueAssignment:
    """Approve or reject a submitted assignment (a rejection needs a comment: the annotator
    gets the item back with it). The transcript's status follows."""
    if decision not in workflow.REVIEW_MOVES:
        raise InvalidContent("decision must be approve or reject.", code="invalid-decision")
    dataset = assignment.item.queue.dataset
    if dataset.role_of(reviewer) not in workflow.REVIEWERS:
        raise NotAllowed("Only reviewers and curators review.")
    if decision == "reject" and not comment.strip():
        raise InvalidContent("Say why in a comment when rejecting.", code="comment-required")
    check_storable_text(comment, "The comment")
    now = now or timezone.now()
    with transaction.atomic(), webhooks.one_read():
        # On PostgreSQL this also locks the queue's row (the query joins it for its ordering):
        # approvals in one queue take turns, so the last two made at once never both miss
        # the other's (test_queue_completed's race test fails if that lock goes).
        read = _lock_item(assignment.item)
        assignment = _move(
            assignment,
            decision,
            reviewer=reviewer,
            reviewed_at=now,
            review_comment=comment.strip(),
        )
        _follow_item(assignment, read, reviewer, f"review: {decision}")
        _emit_item_event(
            assignment, webhooks.events.QUEUE_ITEM_REVIEWED, by=reviewer, decision=decision
        )
        if decision == "approve":
            _emit_if_completed(assignment.item.queue)
    return assignment


def _emit_if_completed(queue: ReviewQueue) -> None:
    """``queue.completed`` once per completion: its key names the queue and the items and
    overlap it was completed with, so a second approval seeing the same complete queue (or a
    retry of the same one) tells nothing new, and items added later make a new completion."""
    figures = _completion(queue)
    if not figures["items"] or figures["short"]:
        return
    webhooks.emit(
        queue.dataset_id,
        webhooks.events.QUEUE_COMPLETED,
        {"queue_id": queue.pk, "queue": queue.name, "items": figures["items"]},
        key=f"queue.completed:{queue.pk}:{figures['items']}:{figures['last']}:{queue.overlap}",
    )


def _emit_item_event(assignment: QueueAssignment, event_type: str, *, by, **extra) -> None:
    """A queue item's webhook event, in the caller's transaction."""
    item = assignment.item
    webhooks.emit(
        item.queue.dataset_id,
        event_type,
        {
            "queue_id": item.queue_id,
            "item_id": item.pk,
            "assignment_id": assignment.pk,
            "transcript_id": item.transcript_id,
            "annotator": assignment.annotator.username,
            "by": by.username,
            **extra,
        },
    )


def is_complete(queue: ReviewQueue) -> bool:
    """Every item of ``queue`` has as many approved assignments as its overlap asks."""
    figures = _completion(queue)
    return bool(figures["items"]) and not figures["short"]


def _completion(queue: ReviewQueue) -> dict:
    """In one query: the queue's items, how many lack approvals, and the last item's id."""
    approved = Count("assignments", filter=Q(assignments__state=AssignmentState.APPROVED))
    return queue.items.annotate(approved=approved).aggregate(
        items=Count("pk"), short=Count("pk", filter=Q(approved__lt=queue.overlap)), last=Max("pk")
    )


@dataclass
class _ItemAsRead:
    """An item's assignments and its transcript's status as read under lock."""

    states: dict[int, str]  # assignment id -> state
    status: str
    version: int


def _lock_item(item: QueueItem) -> _ItemAsRead:
    """Moves on the assignments of one item take turns (PostgreSQL: their rows and the
    transcript's are locked; SQLite serializes writers anyway), so that the last one sees the
    others' states as they are: two approvals at once must not both see the other waiting.
    One query: the states and the transcript's status and version (another assignment's move
    may have changed it since this one was read)."""
    rows = list(
        QueueAssignment.objects.select_for_update()
        .filter(item=item)
        .values_list("pk", "state", "item__transcript__status", "item__transcript__version")
    )
    return _ItemAsRead({pk: state for pk, state, _, _ in rows}, rows[0][2], rows[0][3])


def _follow_item(assignment: QueueAssignment, read: _ItemAsRead, author, note: str) -> None:
    """The transcript takes the status the item's submissions give it together once
    ``assignment`` moved (``workflow.item_status``: approved once every required one is,
    rejected if any is)."""
    states = {**read.states, assignment.pk: assignment.state}
    status = workflow.item_status(states.values(), required=assignment.item.queue.overlap)
    transcript = assignment.item.transcript
    transcript.status, transcript.version = (
        read.status,
        read.version,
    )  # save_transcript reads the rest
    _set_transcript_status(transcript, status, author, note)


def _require_owner(assignment: QueueAssignment, user) -> None:
    if assignment.annotator_id != user.pk:
        raise NotAllowed("This item is another annotator's.")


def _set_transcript_status(transcript: Transcript, status: str, author, note: str) -> None:
    """The transcript follows its queue item (a revision records it); nothing to do when it
    is already there. Annotators of the same item submit at the same time: a save that lost
    the race reads the transcript again (a status is not content: nothing to merge)."""
    for attempt in range(MAX_CLAIM_ATTEMPTS):
        if attempt:  # the transcript as read first had changed: read it again
            transcript.refresh_from_db()
        if transcript.status == status:
            return
        try:
            with transaction.atomic():
                previous = transcript.status
                saved = save_transcript(
                    transcript,
                    expected_version=transcript.version,
                    author=author,
                    status=status,
                    note=f"{note} (review queue)",
                )
                webhooks.status_changed(saved, previous, author)
            return
        except ConflictError:
            continue
    raise DomainError("The transcript keeps changing; try again.", code="status-contention")


def progress(queue: ReviewQueue) -> dict:
    """Counts for the queue's dashboard: items, and assignments by state, and how many items
    still have a free place."""
    expire_reservations(queue)
    states = Counter(
        dict(
            QueueAssignment.objects.filter(item__queue=queue)
            .values_list("state")
            .annotate(n=Count("pk"))
            .values_list("state", "n")
        )
    )
    items = queue.items.count()
    full = (
        queue.items.annotate(taken=Count("assignments", filter=Q(assignments__slot__isnull=False)))
        .filter(taken__gte=queue.overlap)
        .count()
    )
    return {
        "items": items,
        "open_items": items - full,
        **{state: states.get(state, 0) for state in AssignmentState.values},
    }


def label_figures(queue: ReviewQueue) -> list[dict]:
    """Per question about whole transcripts, and per pairwise question (about turns): how the
    submitted answers on the queue's items are distributed, and how far the annotators agree
    (``editor.labels.agreement``). A pairwise item is one turn of a transcript; its answers
    are counted by the place of the one chosen (a bias check), compared by its id."""

    transcripts = queue.items.values("transcript_id")
    figures = []
    for schema, question in queue_questions(queue) + queue_questions(queue, "turn"):
        answers: dict = {}
        pairwise = question.kind == "pairwise"
        for transcript_id, index, annotator_id, value in Annotation.objects.filter(
            transcript__in=transcripts,
            schema_version=schema.current_version,
            question=question.key,
            message_index__isnull=not pairwise,
            state=AnnotationState.SUBMITTED,
        ).values_list("transcript_id", "message_index", "annotator_id", "value"):
            answers.setdefault((transcript_id, index), {})[annotator_id] = value
        counts = Counter()
        for by_annotator in answers.values():
            for value in by_annotator.values():
                if pairwise:
                    value = _place_chosen(value)
                counts.update(value if isinstance(value, list) else [value])
        if pairwise:
            choices = [(1, "Shown first"), (2, "Shown second"), (3, "Shown later"), (0, "Tie")]
        elif question.options:
            choices = [(option.value, option.label) for option in question.options]
        elif question.kind == "rating":
            choices = [(n, str(n)) for n in range(1, question.scale + 1)]
        else:  # free text: nothing to count per value
            choices = []
        figures.append(
            {
                "schema": schema,
                "question": question,
                "answered_items": len(answers),
                "distribution": [(label, counts.get(value, 0)) for value, label in choices],
                "agreement": for_question_kind(question.kind, answers),
            }
        )
    return figures


def _place_chosen(value: dict) -> int:
    """Where the alternative a pairwise answer chose was shown: 1, 2, 3 for any later place,
    0 for a tie."""
    if value["choice"] == "tie":
        return 0
    return min(value["order"].index(value["choice"]) + 1, 3)


def annotator_figures(queue: ReviewQueue) -> list[dict]:
    """Per annotator: items done (submitted, approved or rejected), assignments per state and
    the median time from claim to submission, in seconds."""
    rows: dict = {}
    for assignment in QueueAssignment.objects.filter(item__queue=queue).select_related("annotator"):
        row = rows.setdefault(
            assignment.annotator.get_username(),
            {"states": Counter(), "seconds": [], "first": None, "last": None},
        )
        row["states"][assignment.state] += 1
        if assignment.submitted_at is not None:
            row["seconds"].append((assignment.submitted_at - assignment.claimed_at).total_seconds())
            row["first"] = min(filter(None, (row["first"], assignment.claimed_at)))
            row["last"] = max(filter(None, (row["last"], assignment.submitted_at)))
    return [
        {
            "name": name,
            "done": sum(row["states"][s] for s in DONE_STATES),
            "counts": [row["states"][state] for state in AssignmentState.values],
            "median_seconds": median(row["seconds"]) if row["seconds"] else None,
            "per_hour": _per_hour(len(row["seconds"]), row["first"], row["last"]),
        }
        for name, row in sorted(rows.items())
    ]


def _per_hour(done: int, first, last) -> float | None:
    """Throughput: items handed in per hour, from the first claim to the last submission."""
    if not done or first is None or last is None:
        return None
    hours = (last - first).total_seconds() / 3600
    return done / hours if hours > 0 else None


def assignment_revisions(assignment: QueueAssignment):
    """The revisions the annotator made to the item's transcript while working on it (from
    the claim to the submission): the fixes a reviewer reviews."""

    until = assignment.submitted_at or timezone.now()
    return Revision.objects.filter(
        transcript_id=assignment.item.transcript_id,
        author_id=assignment.annotator_id,
        created_at__gte=assignment.claimed_at,
        created_at__lte=until,
    ).order_by("number")


# --- reviewing an item -----------------------------------------------------------------------
#
# A reviewer decides on one item at a time, with every annotator's work on it side by side:
# the answers about the whole transcript, and per message the answers and span tags, each by
# its option's label, with the questions on which the annotators differ marked.

REVIEWED_STATES = (AssignmentState.SUBMITTED, AssignmentState.APPROVED, AssignmentState.REJECTED)


@dataclass
class Comparison:
    """One question as the annotators of an item answered it: ``answers`` holds each one's
    answer by its label ("" for none), in the order of ``ItemReview.annotators``."""

    prompt: str
    kind: str
    answers: list[tuple[str, str]]

    @property
    def disagree(self) -> bool:
        """Two annotators gave different answers (no answer counts as one); free text is
        not compared."""
        return self.kind != "text" and len({label for _, label in self.answers}) > 1


@dataclass
class ReviewSpan:
    start: int
    end: int
    value: str  # the tag's label
    who: str
    text: str


@dataclass
class MessageReview:
    """What the annotators said about one message, for its card on the review page (the
    transcript partial reads ``spannable`` and ``spans``; ``review`` picks the review block)."""

    questions: list[Comparison] = field(default_factory=list)
    spans: list[ReviewSpan] = field(default_factory=list)
    spans_disagree: bool = False
    review = True

    @property
    def spannable(self) -> bool:
        return bool(self.spans)

    @property
    def disagree(self) -> bool:
        return self.spans_disagree or any(q.disagree for q in self.questions)


@dataclass
class ItemReview:
    item: QueueItem
    assignments: list[QueueAssignment]  # submitted, approved or rejected, by annotator
    transcript_questions: list[Comparison]
    messages: dict[int, MessageReview]

    @property
    def annotators(self) -> list[str]:
        return [a.annotator.get_username() for a in self.assignments]

    @property
    def disagreements(self) -> int:
        return sum(q.disagree for q in self.transcript_questions) + sum(
            m.disagree for m in self.messages.values()
        )


def answer_label(question: Question | None, value: Any) -> str:
    """An answer as a reviewer reads it: an option (or a span's tag) by its label, a rating
    out of its scale."""
    if value is None:
        return ""
    choices = (question.options or question.tags) if question else []
    labels = {choice.value: choice.label for choice in choices}
    if isinstance(value, list):
        return ", ".join(labels.get(v, str(v)) for v in value)
    if question is not None and question.kind == "rating":
        return f"{value} / {question.scale}"
    if question is not None and question.kind == "pairwise":  # by id: the order shown differs
        return "tie" if value["choice"] == "tie" else f"alternative {value['choice']}"
    return labels.get(value, str(value))


def waiting_items(queue: ReviewQueue):
    """The queue's items with a submission waiting for review, in queue order."""
    waiting = QueueAssignment.objects.filter(item=OuterRef("pk"), state=AssignmentState.SUBMITTED)
    return queue.items.filter(Exists(waiting)).order_by("position")


def item_review(item: QueueItem) -> ItemReview:
    """Every annotator's work on ``item`` compared (see the section's comment)."""
    assignments = list(
        QueueAssignment.objects.filter(item=item, state__in=REVIEWED_STATES)
        .select_related("annotator")
        .order_by("annotator__username", "pk")
    )
    who = {a.annotator_id: a.annotator.get_username() for a in assignments}
    given: dict = {}  # (message index, schema, question) -> {annotator: value}
    spans: dict[int, list[ReviewSpan]] = {}
    tagged: dict[int, dict[str, set]] = {}  # message -> annotator -> its tags
    definitions: dict = {}  # schema version id -> its questions, read once
    for annotation in (
        Annotation.objects.filter(transcript_id=item.transcript_id, annotator_id__in=list(who))
        .exclude(anchor_state=AnchorState.ORPHANED)
        .select_related("schema_version")
        .order_by("message_index", "start", "pk")
    ):
        name = who[annotation.annotator_id]
        version = annotation.schema_version
        if version.pk not in definitions:
            definitions[version.pk] = definition_of(version)
        question = definitions[version.pk].question(annotation.question)
        if annotation.start is not None:
            label = answer_label(question, annotation.value)
            index = annotation.message_index
            spans.setdefault(index, []).append(
                ReviewSpan(annotation.start, annotation.end, label, name, annotation.text)
            )
            tagged.setdefault(index, {}).setdefault(name, set()).add(
                (annotation.start, annotation.end, annotation.value)
            )
            continue
        key = (annotation.message_index, annotation.schema_version.schema_id, annotation.question)
        given.setdefault(key, {})[name] = annotation.value

    def compared(index, schema, question) -> Comparison:
        values = given.get((index, schema.pk, question.key), {})
        return Comparison(
            question.prompt,
            question.kind,
            [(name, answer_label(question, values.get(name))) for name in who.values()],
        )

    queue = item.queue
    messages: dict[int, MessageReview] = {}
    for schema, question in queue_questions(queue, "message") + queue_questions(queue, "turn"):
        if question.kind == "span":
            continue
        answered = sorted(i for i, s, q in given if s == schema.pk and q == question.key)
        for index in answered:
            messages.setdefault(index, MessageReview()).questions.append(
                compared(index, schema, question)
            )
    for index, found in spans.items():
        review = messages.setdefault(index, MessageReview())
        review.spans = found
        sets = [frozenset(tagged.get(index, {}).get(name, ())) for name in who.values()]
        review.spans_disagree = len(set(sets)) > 1
    return ItemReview(
        item=item,
        assignments=assignments,
        transcript_questions=[
            compared(None, schema, question) for schema, question in queue_questions(queue)
        ],
        messages=messages,
    )


# --- "my work" (the dashboard) ---------------------------------------------------------------

MY_QUEUES = 20
MY_RETURNED = 20
MY_EDITS = 10


def my_work(user, *, now=None) -> dict:
    """What waits for ``user``, in four queries whatever the number of queues and items:
    ``queues`` they may work in, each with ``open_for_me`` (items they may still claim),
    ``held`` and ``returned``; ``returned`` (their items a reviewer rejected, with the
    comment); ``to_review`` (queues of datasets where they review, with ``waiting``
    submitted assignments); ``edits`` (the last revisions they made)."""
    now = now or timezone.now()
    datasets = Dataset.objects.for_user(user).with_roles(user)
    editing = datasets.filter(user_role__in=EDITING_ROLES).values("pk")
    reviewing = datasets.filter(user_role__in=REVIEWING_ROLES).values("pk")
    return {
        "queues": list(_my_queues(user, editing, now)[:MY_QUEUES]),
        "returned": list(
            QueueAssignment.objects.filter(
                annotator=user, state=AssignmentState.REJECTED, item__queue__dataset__in=editing
            )
            .select_related("item__queue", "reviewer")
            .only(
                "pk",
                "review_comment",
                "reviewed_at",
                "item__position",
                "item__transcript_id",
                "item__queue__name",
                "reviewer__username",
            )
            .order_by("-reviewed_at", "-pk")[:MY_RETURNED]
        ),
        "to_review": list(
            ReviewQueue.objects.filter(dataset__in=reviewing)
            .select_related("dataset")
            .only("pk", "name", "dataset__name", "dataset__slug")
            .annotate(
                waiting=Count(
                    "items__assignments",
                    filter=Q(items__assignments__state=AssignmentState.SUBMITTED),
                )
            )
            .filter(waiting__gt=0)
            .order_by("-waiting", "name")
        ),
        "edits": list(
            Revision.objects.filter(
                author=user,
                transcript__dataset__in=datasets.values("pk"),
                transcript__deleted_at__isnull=True,
            )
            .select_related("transcript__dataset")
            .only(
                "pk",
                "number",
                "kind",
                "note",
                "created_at",
                "transcript__title",
                "transcript__dataset__name",
            )
            .order_by("-created_at", "-pk")[:MY_EDITS]
        ),
    }


def _my_queues(user, editing, now):
    """Queues of the datasets ``user`` edits that name no assignees or name them, with their
    counts (the items open to them as ``claim_next`` would find them: ``_open_item_rows``)."""
    assigned = ReviewQueue.assignees.through.objects.filter(reviewqueue=OuterRef("pk"))
    open_items = (
        _open_item_rows(user, now)
        .filter(queue=OuterRef("pk"))
        .values("queue")
        .annotate(n=Count("pk"))
        .values("n")
    )
    mine = Q(items__assignments__annotator=user)
    return (
        ReviewQueue.objects.filter(dataset__in=editing)
        .filter(~Exists(assigned) | Exists(assigned.filter(user=user)))
        .select_related("dataset")
        .only("pk", "name", "created_at", "dataset__name", "dataset__slug")
        .annotate(
            open_for_me=Coalesce(Subquery(open_items), 0),
            held=Count(
                "items__assignments",
                filter=mine
                & Q(items__assignments__state=AssignmentState.CLAIMED)
                & Q(items__assignments__expires_at__gt=now),
            ),
            returned=Count(
                "items__assignments",
                filter=mine & Q(items__assignments__state=AssignmentState.REJECTED),
            ),
        )
        .order_by("-created_at", "-pk")
    )
