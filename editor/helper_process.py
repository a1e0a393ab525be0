"""The start of a helper process of the app (``editor.importing.preparing``'s): Django set up
before anything of the app is unpickled in it, and an end with its parent. Nothing here
imports the app, which is why this is a module of its own: a process pool unpickles its
initializer before running it."""

from __future__ import annotations

import os
import signal
import threading
import time

# How often the helper looks whether its parent is still there.
PARENT_CHECK_SECONDS = 1.0


def start() -> None:
    # Ctrl-C in a terminal reaches the whole process group: the helper ends with its parent,
    # not with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch = threading.Thread(target=_end_with, args=(os.getppid(),), name="parent-watch")
    watch.daemon = True
    watch.start()
    import django

    django.setup()


def _end_with(parent: int) -> None:
    """A parent killed outright (``kill -9``, out of memory) never tells its pool's process to
    stop, and the pool's queue stays open in the helper itself: it would wait forever."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(0)
