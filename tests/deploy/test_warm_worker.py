"""A web worker is warm once it has imported its WSGI module (``ocm_site.wsgi``, what gunicorn
and runserver load): the URLconf is read, the names ``reverse()`` looks up are filled and the
first pages' templates are compiled, so its first request pays for none of them. Checked in a fresh interpreter, whose caches start empty."""

import json
import os
import subprocess
import sys
from pathlib import Path

from ocm_site.warmup import FIRST_PAGES

PROJECT = Path(__file__).resolve().parents[2]

# What the process holds after the import, read without building anything more.
PROBE = """
import json
import ocm_site.wsgi
from django.template import engines
from django.urls import get_resolver

resolver = get_resolver()
compiled = set()
def walk(loader):
    compiled.update(name for name in getattr(loader, "get_template_cache", {}))
    for inner in getattr(loader, "loaders", []):
        walk(inner)
for loader in engines["django"].engine.template_loaders:
    walk(loader)
print(json.dumps({
    "urlconf_read": "url_patterns" in resolver.__dict__,
    "names_read": bool(resolver._reverse_dict),
    "api_imported": __import__("sys").modules.get("api.api") is not None,
    "templates": sorted(compiled),
}))
"""


def test_a_web_worker_is_warm_before_its_first_request(tmp_path):
    environment = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_DEBUG": "false",  # production's settings: the cached template loader
        "DJANGO_SETTINGS_MODULE": "ocm_site.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=PROJECT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state["urlconf_read"] and state["api_imported"] and state["names_read"]
    assert set(FIRST_PAGES) <= set(state["templates"])
