"""What a web worker does as it starts (``ocm_site.wsgi``, so gunicorn's workers and
runserver alike), so that its first request pays for nothing but itself.

* The URLconf, and with it the API: its routers, their schemas and operations (1.8 s on an
  idle core; a load test's first seconds showed it when the first request paid for it), and
  the table of names ``reverse()`` and ``{% url %}`` look up (filled on the first lookup).
* The templates of the pages a user meets first, compiled into the cached template loader
  (Django's default): the dataset page's template alone is about 0.4 s to compile, which the
  first visit of the page paid on each worker.

The API's OpenAPI document is not built here: each process builds it on the first request
for ``/api/v1/openapi.json`` and keeps it (``api.api.WorkbenchAPI``); 0.5 to 0.9 s that every
worker's start would pay for a document few users ask for.
"""

from django.template.loader import get_template
from django.urls import get_resolver

# The log-in, the landing page, a dataset, a transcript and a queue: where a user's first
# requests go; then what they extend and include (found when a page renders, not when it is
# compiled, so named here).
FIRST_PAGES = (
    "registration/login.html",
    "editor/dashboard.html",
    "editor/dataset.html",
    "editor/transcript.html",
    "editor/queue.html",
    "base.html",
    "editor/dataset_queues.html",
    "editor/labels.html",
    "editor/alternatives.html",
    "editor/regenerate.html",
)


def warm() -> None:
    """Read the URLconf and compile the first pages' templates in this process."""
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018 (a cached property: reading it builds it)
    resolver.reverse_dict  # noqa: B018 (the names {% url %} and reverse() look up: filled once)
    for name in FIRST_PAGES:
        get_template(name)
