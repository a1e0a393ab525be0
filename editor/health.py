"""``/healthz``: is this web worker able to serve? The database, the cache and the task queue.

For load balancers and orchestrators: 200 when all three answer, 503 naming what is down.
Public (no login; it shows counts, never content) and never cached.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.cache import cache
from django.db import DatabaseError, connection
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from editor import background
from editor.models import ImportTask, TaskStatus


def check_database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"ok": True, "vendor": connection.vendor}


def check_cache() -> dict:
    key, value = f"healthz:{uuid.uuid4().hex}", uuid.uuid4().hex
    cache.set(key, value, 10)
    answered = cache.get(key) == value
    cache.delete(key)
    backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    return {"ok": answered, "backend": backend}


def check_queue() -> dict:
    """Tasks are taken: some worker was seen lately (or tasks run within the request)."""
    if background.runs_in_request():
        return {"ok": True, "backend": "immediate"}
    workers = background.workers_seen_lately()
    queued = ImportTask.objects.filter(status=TaskStatus.QUEUED)
    oldest = queued.order_by("created_at").values_list("created_at", flat=True).first()
    return {
        "ok": workers > 0,
        "backend": "database",
        "workers": workers,
        "queued": queued.count(),
        "oldest_queued_seconds": round((timezone.now() - oldest).total_seconds()) if oldest else 0,
    }


CHECKS = {"database": check_database, "cache": check_cache, "queue": check_queue}


def run_checks() -> dict[str, dict]:
    results = {}
    for name, check in CHECKS.items():
        try:
            results[name] = check()
        except (DatabaseError, OSError, ConnectionError) as error:
            # Redis down raises ConnectionError (an OSError); a database down, DatabaseError.
            results[name] = {"ok": False, "error": f"{type(error).__name__}: {error}"[:300]}
    return results


@login_not_required
@never_cache
@require_GET
def healthz(request):
    results = run_checks()
    down = [name for name, result in results.items() if not result["ok"]]
    body = {"status": "ok" if not down else "down", "down": down, "checks": results}
    return JsonResponse(body, status=503 if down else 200)
