"""The review workflow of a transcript: its statuses and every move between them, in one table.

    draft ──submit──▶ in_review ──approve──▶ approved
      ▲                 │  ▲                    │
      │               reject│resubmit            │ an edit of its content
      │                 ▼  │                    ▼
      └──reopen──── rejected          in_review (back to review)

| transition | from | to | who |
|---|---|---|---|
| ``submit`` | draft | in_review | annotator, reviewer, curator |
| ``resubmit`` | rejected | in_review | annotator, reviewer, curator |
| ``approve`` | in_review | approved | reviewer, curator |
| ``reject`` | in_review | rejected | reviewer, curator |
| ``reopen`` | approved, rejected | draft | curator |

Edits follow one rule (``status_after_edit``): a change to the content of an approved transcript
sends it back to review, so that an export of approved data never holds content nobody
reviewed. Saving text with errors as a draft (raw mode) makes it a draft, from any status.
Every move is a save (``editing.apply_transition`` → ``storage.save_transcript``):
version-checked, one revision each. This module holds the rules only; it imports no storage.

A transcript in a review queue follows its item, and an item may be worked on by several
annotators (the queue's ``overlap``): each submission is reviewed on its own, and the
transcript's status is decided by all of them together (``item_status``):

- **rejected** as soon as any submission of the item is rejected (its annotator gets it back
  with the comment; approving another submission does not override that);
- **approved** only once every required submission is approved: as many approved
  submissions as the queue's overlap asks for, none rejected;
- otherwise **in review** (a submission waits for its review, or a place of the item is not
  handed in yet: still claimed, skipped back to the pool, or never taken).

A rejected submission that is resubmitted waits for review again, so the transcript goes back
to review (or to approved, once that submission is approved and the others were).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from editor.errors import NotAllowed, TransitionRefused
from editor.models import AssignmentState, Role, Status, Transcript

EDITORS = frozenset({Role.ANNOTATOR, Role.REVIEWER, Role.CURATOR})
REVIEWERS = frozenset({Role.REVIEWER, Role.CURATOR})
CURATORS = frozenset({Role.CURATOR})


@dataclass(frozen=True)
class Transition:
    name: str
    sources: frozenset[str]
    target: str
    roles: frozenset[str]
    label: str


TRANSITIONS: dict[str, Transition] = {
    t.name: t
    for t in (
        Transition(
            "submit", frozenset({Status.DRAFT}), Status.IN_REVIEW, EDITORS, "Submit for review"
        ),
        Transition("resubmit", frozenset({Status.REJECTED}), Status.IN_REVIEW, EDITORS, "Resubmit"),
        Transition("approve", frozenset({Status.IN_REVIEW}), Status.APPROVED, REVIEWERS, "Approve"),
        Transition("reject", frozenset({Status.IN_REVIEW}), Status.REJECTED, REVIEWERS, "Reject"),
        Transition(
            "reopen",
            frozenset({Status.APPROVED, Status.REJECTED}),
            Status.DRAFT,
            CURATORS,
            "Reopen as a draft",
        ),
    )
}


def status_after_edit(status: str) -> str:
    """The status a transcript takes when its content changes: approved content that changes
    is no longer approved."""
    return Status.IN_REVIEW if status == Status.APPROVED else status


def transition_to(status: str, target: str, role: str | None) -> Transition | None:
    """The one move that takes a transcript from ``status`` to ``target`` and that ``role``
    may make, if there is one (no two moves share a source and a target)."""
    for transition in TRANSITIONS.values():
        if (
            status in transition.sources
            and transition.target == target
            and role in transition.roles
        ):
            return transition
    return None


def reachable_statuses(role: str | None) -> frozenset[str]:
    """The statuses ``role`` can move a transcript to (in one move from some status)."""
    return frozenset(t.target for t in TRANSITIONS.values() if role in t.roles)


def allowed_transitions(transcript: Transcript, user) -> list[Transition]:
    """The moves ``user`` may make on ``transcript`` now (for buttons and the API)."""
    role = transcript.dataset.role_of(user)
    return [t for t in TRANSITIONS.values() if transcript.status in t.sources and role in t.roles]


def check_transition(transcript: Transcript, name: str, user) -> Transition:
    """The transition ``name`` if ``user`` may make it on ``transcript`` now; else raises
    ``TransitionRefused`` (409: not from this status, or no such move) or ``NotAllowed``
    (403: not for this role)."""
    transition = TRANSITIONS.get(name)
    if transition is None:
        raise TransitionRefused(
            f"No transition {name!r}; one of: {', '.join(TRANSITIONS)}.",
            code="unknown-transition",
        )
    if transcript.dataset.role_of(user) not in transition.roles:
        raise NotAllowed(f"Your role may not {name} transcripts.")
    if transcript.status not in transition.sources:
        raise TransitionRefused(
            f"Cannot {name} a transcript that is {Status(transcript.status).label.lower()} "
            f"(only from: {', '.join(sorted(Status(s).label.lower() for s in transition.sources))})."
        )
    return transition


# --- queue assignments ------------------------------------------------------------------------
#
# One annotator's turn at one queue item (``models.QueueAssignment``):
#
# | move | from | to | who |
# |---|---|---|---|
# | ``claim`` | (none), expired | claimed | an editor the queue lets work (``ReviewQueue.may_work``) |
# | ``submit`` | claimed, rejected | submitted | the assignment's annotator |
# | ``skip`` | claimed | skipped | the assignment's annotator |
# | ``expire`` | claimed | expired | the clock: its reservation ran out |
# | ``approve`` | submitted | approved | reviewer, curator |
# | ``reject`` | submitted | rejected | reviewer, curator (with a comment) |
#
# Skipped and expired assignments give their place back (the item returns to the pool); the
# others keep it, so an item never has more than ``overlap`` of them. A rejected assignment
# goes back to its annotator, who fixes and resubmits it.

A = AssignmentState
ASSIGNMENT_TRANSITIONS: dict[str, tuple[frozenset[str], str]] = {
    "claim": (frozenset({A.EXPIRED}), A.CLAIMED),
    "submit": (frozenset({A.CLAIMED, A.REJECTED}), A.SUBMITTED),
    "skip": (frozenset({A.CLAIMED}), A.SKIPPED),
    "expire": (frozenset({A.CLAIMED}), A.EXPIRED),
    "approve": (frozenset({A.SUBMITTED}), A.APPROVED),
    "reject": (frozenset({A.SUBMITTED}), A.REJECTED),
}
# States that hold one of the item's places.
HOLDS_A_PLACE = frozenset({A.CLAIMED, A.SUBMITTED, A.APPROVED, A.REJECTED})
ANNOTATOR_MOVES = frozenset({"submit", "skip"})
REVIEW_MOVES = frozenset({"approve", "reject"})


def check_assignment_move(state: str, move: str) -> str:
    """The state ``move`` leads to from ``state``; ``TransitionRefused`` (409) otherwise."""
    sources, target = ASSIGNMENT_TRANSITIONS[move]
    if state not in sources:
        raise TransitionRefused(
            f"Cannot {move} an assignment that is {AssignmentState(state).label.lower()} "
            f"(only from: {', '.join(sorted(AssignmentState(s).label.lower() for s in sources))})."
        )
    return target


def item_status(states: Iterable[str], *, required: int) -> str:
    """The status of a transcript whose queue item has assignments in ``states`` (any states:
    only submitted, approved and rejected ones count), ``required`` of them to be approved
    (the queue's overlap): the rule of the module docstring."""
    states = list(states)
    if A.REJECTED in states:
        return Status.REJECTED
    if states.count(A.APPROVED) >= required:
        return Status.APPROVED
    return Status.IN_REVIEW
