"""The spec core must stay importable, and usable, with no Django settings."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import sys
import editor.formats as formats
from editor.formats.specs import codecs
codecs()  # imports every codec module
import pkgutil, importlib, editor.formats as pkg
for info in pkgutil.walk_packages(pkg.__path__, "editor.formats."):
    importlib.import_module(info.name)
leaked = sorted(m for m in sys.modules if m == "django" or m.startswith("django."))
assert not leaked, leaked
print("ok")
"""


def test_formats_imports_in_a_fresh_interpreter_without_django():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
