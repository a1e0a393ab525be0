"""The task that sends an endpoint's deliveries, and the sweep that queues it again.

``emit`` queues ``send_deliveries`` for each endpoint it wrote a delivery for, once the
change commits. What that task cannot do at once (a retry after its back-off, an attempt
whose worker was killed mid-send, a delivery held behind an earlier one) waits for the sweep:
every few seconds the task worker (``manage.py task_worker``, through
``background.register_sweep``) queues the task for each endpoint with a delivery overdue, so
a retry goes out within a few seconds of its time. Sending twice at once is harmless: every
attempt is claimed (``editor.webhooks.sending``).
"""

from __future__ import annotations

from django_tasks import task

from editor import background
from editor.webhooks.sending import due_endpoints, send_due


@task()
def send_deliveries(endpoint_id: int) -> str | None:
    """Send what is due of the endpoint's deliveries; when the next one is due (ISO)."""
    due = send_due(endpoint_id)
    return due.isoformat() if due else None


def queue_overdue() -> int:
    """Queue the sending of every endpoint with an overdue delivery; how many."""
    endpoints = due_endpoints()
    for endpoint_id in endpoints:
        send_deliveries.enqueue(endpoint_id)
    return len(endpoints)


background.register_sweep(queue_overdue)
