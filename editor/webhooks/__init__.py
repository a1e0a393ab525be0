"""Webhooks: a dataset's events sent, signed, to the URLs its curators name (docs/webhooks.md).

- ``events``: the event types and ``emit`` (called by the use cases, in their transaction;
  ``one_read``: a change's several events read the endpoints once);
- ``endpoints``: curators' endpoints and their deliveries (add, change, delete, resend);
- ``sending``: one attempt claimed, signed (Standard Webhooks), sent, recorded; back-off,
  order per transcript, endpoints disabled after failures in a row;
- ``addresses``: which URLs may be called (no server-side request forgery);
- ``tasks``: the django-tasks task that sends, and the task worker's sweep;
- ``notices``: curators told of a disabled endpoint.
"""

from editor.webhooks.events import EVENTS, emit, one_read, status_changed

__all__ = ["EVENTS", "emit", "one_read", "status_changed"]
