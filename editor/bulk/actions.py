"""The bulk actions themselves: what a selection is (``select``) and what each action does to
the transcripts in it (``perform``), in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from django.db import transaction
from django.http import QueryDict

from editor import queues, workflow
from editor.db.storable import check_storable_text
from editor.editing import apply_transition
from editor.errors import InvalidContent, NotAllowed
from editor.listing import TranscriptList
from editor.listing.filters import TranscriptFilterForm
from editor.models import (
    Dataset,
    ReviewQueue,
    Status,
    Transcript,
)
from editor.storage.content import TranscriptContent
from editor.storage.save import delete_transcript, undelete_transcript

MAX_EXPLICIT_IDS = 100_000
ACTIONS = (
    "transition",
    "set_status",
    "delete",
    "undelete",
    "revalidate",
    "add_to_queue",
    "export",
)
CHUNK = 200  # transcripts read at a time (and progress reported)


@dataclass
class BulkResult:
    """What a bulk action did: ``changed`` ids, ``skipped`` ones with the reason, or the
    background task it became (``task``: kind and id)."""

    action: str
    matched: int
    changed: list[int] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    task: dict | None = None

    def to_dict(self) -> dict:
        return {
            "action": self.action,
            "matched": self.matched,
            "changed": self.changed,
            "skipped": self.skipped,
            "task": self.task,
        }

    def summary(self) -> str:
        """One sentence for the page: what happened to how many."""
        if self.task:
            return f"{self.matched} transcripts: running in the background ({self.task['kind']})."
        done = {
            "transition": "moved",
            "set_status": "moved",
            "delete": "deleted",
            "undelete": "brought back",
            "revalidate": "re-validated",
            "add_to_queue": "added to the queue",
        }[self.action]
        text = f"{len(self.changed)} transcript{'s' * (len(self.changed) != 1)} {done}"
        if self.skipped:
            text += f"; {len(self.skipped)} skipped ({self.skipped[0]['reason']}"
            text += ", …)" if len(self.skipped) > 1 else ")"
        return text + "."


def bulk_transitions(dataset: Dataset) -> list[workflow.Transition]:
    """The workflow moves the viewing user's role may make on many transcripts at once
    (``dataset`` annotated with ``with_roles``)."""
    role = getattr(dataset, "user_role", None)
    return [t for t in workflow.TRANSITIONS.values() if role in t.roles]


# --- selections ---------------------------------------------------------------------------


def select(
    dataset: Dataset,
    user,
    *,
    ids: Iterable[int] | None = None,
    filters: Mapping | QueryDict | None = None,
    deleted: bool = False,
) -> list[int]:
    """The ids of the selected transcripts of ``dataset``, in id order.

    Either ``ids`` (each must be a transcript of the dataset) or ``filters``: the dataset
    page's query parameters (q, status, spec, has_errors, code, has, updated_by,
    updated_since), "everything matching". ``deleted`` selects among deleted transcripts
    (to bring them back).
    """
    if (ids is None) == (filters is None):
        raise InvalidContent("Give either ids or a filter.", code="invalid-request")
    if ids is not None:
        rows = Transcript.all_objects.filter(dataset=dataset, deleted_at__isnull=not deleted)
        wanted = sorted(set(ids))
        if len(wanted) > MAX_EXPLICIT_IDS:
            raise InvalidContent(
                f"At most {MAX_EXPLICIT_IDS} ids; select by filter instead.", code="too-many-ids"
            )
        found = list(rows.filter(pk__in=wanted).order_by("pk").values_list("pk", flat=True))
        missing = sorted(set(wanted) - set(found))
        if missing:
            raise InvalidContent(
                f"{len(missing)} id(s) are not {'deleted ' if deleted else ''}transcripts of "
                f"this dataset: {', '.join(map(str, missing[:10]))}.",
                code="not-in-dataset",
                details={"ids": missing[:100]},
            )
        return found
    form = TranscriptFilterForm(filters, dataset=dataset)
    if not form.is_valid():
        raise InvalidContent(
            f"Invalid filter: {form.errors.as_text()}", code="invalid-filter", details=form.errors
        )
    return TranscriptList.of(dataset, user, form.to_filter(), deleted=deleted).ids()


# --- the actions --------------------------------------------------------------------------


def check_params(dataset: Dataset, user, action: str, params: dict) -> None:
    """Refuse up front what can be refused for the whole selection (role, unknown action)."""
    check_storable_text(params, "The parameters")  # a background task stores them
    role = dataset.role_of(user)
    if action not in ACTIONS:
        raise InvalidContent(
            f"Unknown bulk action {action!r}; one of: {', '.join(ACTIONS)}.", code="unknown-action"
        )
    if action == "transition":
        name = params.get("transition")
        if name not in workflow.TRANSITIONS:
            raise InvalidContent(
                f"Say which transition: one of {', '.join(workflow.TRANSITIONS)}.",
                code="unknown-transition",
            )
        if role not in workflow.TRANSITIONS[name].roles:
            raise NotAllowed(f"Your role may not {name} transcripts.")
    elif action == "set_status":
        target = params.get("status")
        if target not in Status.values:
            raise InvalidContent(
                f"Say which status: one of {', '.join(Status.values)}.", code="unknown-status"
            )
        if target not in workflow.reachable_statuses(role):
            raise NotAllowed(f"Your role may not move transcripts to {target}.")
    elif action in ("delete", "revalidate"):
        if not dataset.can_edit(user):
            raise NotAllowed(f"Your role may not {action} transcripts.")
    elif action in ("undelete", "add_to_queue"):
        if not dataset.can_curate(user):
            raise NotAllowed("Only curators may do that.")
        if action == "add_to_queue":
            _queue_of(dataset, params.get("queue"))


def _queue_of(dataset: Dataset, pk) -> ReviewQueue:
    queue = ReviewQueue.objects.filter(dataset=dataset, pk=pk).first() if pk else None
    if queue is None:
        raise InvalidContent("Say which queue of this dataset.", code="unknown-queue")
    return queue


def perform(
    dataset: Dataset,
    user,
    action: str,
    ids: list[int],
    params: dict,
    progress: Callable[[int], None] | None = None,
) -> BulkResult:
    """Do ``action`` on the transcripts ``ids`` of ``dataset``, all in one transaction."""
    check_params(dataset, user, action, params)
    result = BulkResult(action, len(ids))
    act = ACTING[action]
    if user is not None:
        dataset.know_role(user, dataset.role_of(user))  # asked once, not per transcript
    with transaction.atomic():
        if action == "add_to_queue":
            _add_to_queue(dataset, user, ids, params, result)
        else:
            manager = Transcript.all_objects if action == "undelete" else Transcript.objects
            for start_at in range(0, len(ids), CHUNK):
                chunk = ids[start_at : start_at + CHUNK]
                rows = manager.filter(dataset=dataset, pk__in=chunk).select_related("dataset")
                for transcript in rows.order_by("pk"):
                    transcript.dataset = dataset  # the caller's role is known on it
                    act(transcript, user, params, result)
                if progress is not None:
                    progress(start_at + len(chunk))
    return result


def _transition(transcript: Transcript, user, params: dict, result: BulkResult) -> None:
    name = params["transition"]
    if transcript.status not in workflow.TRANSITIONS[name].sources:
        result.skipped.append(
            {"id": transcript.pk, "reason": f"cannot {name} from {transcript.status}"}
        )
        return
    apply_transition(
        transcript,
        name,
        expected_version=transcript.version,
        author=user,
        note=params.get("note") or "",
    )
    result.changed.append(transcript.pk)


def _set_status(transcript: Transcript, user, params: dict, result: BulkResult) -> None:
    """The workflow move from the transcript's status to the one asked for, where there is
    one: "set status" is a transition chosen per transcript, never a jump past review."""
    target = params["status"]
    if transcript.status == target:
        result.skipped.append({"id": transcript.pk, "reason": f"already {target}"})
        return
    move = workflow.transition_to(transcript.status, target, transcript.dataset.role_of(user))
    if move is None:
        result.skipped.append(
            {"id": transcript.pk, "reason": f"no move from {transcript.status} to {target}"}
        )
        return
    _transition(transcript, user, {**params, "transition": move.name}, result)


def _delete(transcript: Transcript, user, params: dict, result: BulkResult) -> None:
    delete_transcript(transcript, author=user, note=params.get("note") or "bulk delete")
    result.changed.append(transcript.pk)


def _undelete(transcript: Transcript, user, params: dict, result: BulkResult) -> None:
    undelete_transcript(transcript, author=user, note=params.get("note") or "bulk undo")
    result.changed.append(transcript.pk)


def _revalidate(transcript: Transcript, user, params: dict, result: BulkResult) -> None:
    """Validate the stored content again (after the validator changed, say): its diagnostics
    and counts are updated; the content is not, so no revision is written."""
    if transcript.source_is_exact:
        content = TranscriptContent.from_text(transcript.source_text, transcript.spec)
    else:
        content = TranscriptContent.from_canonical(
            transcript.canonical,
            previous_text=transcript.source_text,
            previous_spec=transcript.spec,
        )
    if content.diagnostics == transcript.diagnostics:
        result.skipped.append({"id": transcript.pk, "reason": "diagnostics unchanged"})
        return
    Transcript.all_objects.filter(pk=transcript.pk).update(
        diagnostics=content.diagnostics,
        error_count=content.error_count,
        warning_count=content.warning_count,
    )
    result.changed.append(transcript.pk)


def _add_to_queue(dataset: Dataset, user, ids: list[int], params: dict, result) -> None:
    queue = _queue_of(dataset, params.get("queue"))
    added = set(queues.add_items(queue, ids, author=user))
    result.changed.extend(pk for pk in ids if pk in added)
    result.skipped.extend(
        {"id": pk, "reason": "already in the queue"} for pk in ids if pk not in added
    )


ACTING = {
    "transition": _transition,
    "set_status": _set_status,
    "delete": _delete,
    "undelete": _undelete,
    "revalidate": _revalidate,
    "add_to_queue": None,
}
