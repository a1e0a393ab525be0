"""The bulk action task: a big selection's action run by a task worker, in one transaction as a
small one is in a request."""

from __future__ import annotations

from django_tasks import task

from editor import background
from editor.bulk.actions import perform
from editor.errors import DomainError
from editor.models import BulkTask, TaskStatus


def run_bulk_task(task_pk: int) -> BulkTask | None:
    """Run a queued bulk action on this worker; None if it was not queued (any more)."""
    if not background.claim(BulkTask, task_pk):
        return None
    task = BulkTask.objects.select_related("dataset", "created_by").get(pk=task_pk)
    total = len(task.transcript_ids)
    with background.Heartbeat(BulkTask, task_pk) as heartbeat:
        heartbeat.progress = {"done": 0, "total": total}
        try:
            result = perform(
                task.dataset,
                task.created_by,
                task.action,
                task.transcript_ids,
                task.params,
                progress=lambda done: setattr(
                    heartbeat, "progress", {"done": done, "total": total}
                ),
            )
        except DomainError as refused:
            background.finish(BulkTask, task_pk, TaskStatus.FAILED, error=refused.message)
        else:
            background.finish(
                BulkTask,
                task_pk,
                TaskStatus.SUCCEEDED,
                result=result.to_dict(),
                progress={"done": total, "total": total},
            )
    task.refresh_from_db()
    return task


@task()
def bulk_action(bulk_task_pk: int) -> str | None:
    """Run the bulk action of a ``BulkTask`` (one transaction, as a small one in a request)."""
    done = run_bulk_task(bulk_task_pk)
    return done.status if done else None


# A bulk action is one transaction: a dead attempt left nothing.
background.register(
    background.Recovery(
        model=BulkTask, requeue=lambda pk: bulk_action.enqueue(pk), give_up=lambda task: None
    )
)
