"""An idle task worker woken the moment a task is queued, instead of at its next poll.

django-tasks-db's worker finds queued tasks by polling the database; between two polls a
task just queued waits (``OCM_TASK_POLL_SECONDS``, 0.1 s on average at the default 0.2 s:
part of every import, export and bulk action a user waits for). Queuing a task also rings
the idle workers (``announce``), which wait on an ``Alarm`` rather than sleeping:

- PostgreSQL: ``NOTIFY`` on ``CHANNEL``; each worker ``LISTEN``\\s on a connection of its own,
  so workers on any host hear it;
- SQLite (one host, as its file is): each worker binds a Unix datagram socket in a folder of
  the temporary directory named after the database; queuing sends a byte to each socket there.

The poll stays: a worker that missed a ring (not yet listening, a dropped connection, another
database) still finds the task at its next poll. Nothing here raises into the code that
queued the task or stops a worker: a ring that cannot be sent is skipped, an alarm that
cannot listen sleeps.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import os
import select
import socket
import tempfile
import time
from pathlib import Path

from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

CHANNEL = "ocm_task_queued"
SOCKET_SUFFIX = ".sock"
# After a failure to listen, the alarm only sleeps (the worker polls) this long.
RETRY_SECONDS = 30
# Numbers the alarms of a process (each socket's name: short, as a socket path must be).
_alarms = itertools.count()


def announce(using: str) -> None:
    """Wake the task workers of database ``using``: a task was queued there and committed."""
    connection = connections[using]
    if connection.vendor == "postgresql":
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"NOTIFY {CHANNEL}")
        except DatabaseError as error:  # the task is queued; the workers' poll will find it
            logger.info("Could not wake the task workers: %s", error)
    elif connection.vendor == "sqlite":
        _ring_sockets(socket_folder(connection.settings_dict["NAME"]))


def socket_folder(database_name) -> Path:
    """Where the task workers of the SQLite database ``database_name`` wait: one folder per
    database file (or in-memory name), private to this user."""
    name = str(database_name)
    if not name.startswith("file:") and name != ":memory:":
        name = str(Path(name).resolve())
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"ocm-wake-{os.getuid()}-{digest}"


def _ring_sockets(folder: Path) -> None:
    try:
        paths = [path for path in folder.iterdir() if path.name.endswith(SOCKET_SUFFIX)]
        bell = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    except OSError:  # no worker has waited on this database yet
        return
    with bell:
        bell.setblocking(False)
        for path in paths:
            try:
                bell.sendto(b"!", str(path))
            except ConnectionRefusedError:  # its worker was killed before removing it
                path.unlink(missing_ok=True)
            except OSError:  # gone meanwhile, or already rung and not yet awake: enough
                pass


class Alarm:
    """What an idle task worker waits on: ``wait`` returns early when a task is announced.

    A context manager: the socket or the listening connection is released on exit."""

    def __init__(self, using: str):
        self.using = using
        self.vendor = connections[using].vendor
        self._socket: socket.socket | None = None
        self._socket_path: Path | None = None
        self._listener = None  # a DatabaseWrapper of its own, LISTENing (PostgreSQL)
        self._next_try = 0.0  # when to try listening again after a failure (monotonic)

    def __enter__(self) -> Alarm:
        # Listening before the first poll: a task queued between that poll and the first
        # wait rings this alarm too.
        self._listening()
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds; True if a task was announced meanwhile (or
        while this worker was busy), False if the time ran out."""
        if self._listening():
            try:
                if self._socket is not None:
                    return self._wait_on_socket(timeout)
                return self._wait_for_notify(timeout)
            except (OSError, DatabaseError) as error:
                self._unavailable(error)
        time.sleep(timeout)
        return False

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._socket_path is not None:
            self._socket_path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # other workers still wait there
                self._socket_path.parent.rmdir()
            self._socket_path = None
        if self._listener is not None:
            with contextlib.suppress(DatabaseError):  # already dropped by the server
                self._listener.close()
            self._listener = None

    def _listening(self) -> bool:
        """Whether this alarm can be rung: listening already, or started now (not again
        within ``RETRY_SECONDS`` of a failure)."""
        if time.monotonic() < self._next_try:
            return False
        try:
            return self._listen()
        except (OSError, DatabaseError) as error:
            self._unavailable(error)
            return False

    def _unavailable(self, error: Exception) -> None:
        """Polling only for a while (a folder not writable, the database server restarting),
        said once, not at every poll."""
        logger.info(
            "Task worker alarm unavailable (%s): polling only, listening again in %s s",
            error,
            RETRY_SECONDS,
        )
        self.close()
        self._next_try = time.monotonic() + RETRY_SECONDS

    def _listen(self) -> bool:
        """Start listening if not yet; False where there is nothing to listen to."""
        if self._socket is not None or self._listener is not None:
            return True
        if self.vendor == "sqlite":
            folder = socket_folder(connections[self.using].settings_dict["NAME"])
            folder.mkdir(mode=0o700, exist_ok=True)
            path = folder / f"{os.getpid()}-{next(_alarms)}{SOCKET_SUFFIX}"
            path.unlink(missing_ok=True)
            # Both set first, so that a failure (a path past the 107 bytes a socket's name may
            # take, under a deep TMPDIR) leaves neither socket nor folder behind.
            self._socket_path = path
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._socket.setblocking(False)
            self._socket.bind(str(path))
            return True
        if self.vendor == "postgresql":
            listener = connections.create_connection(self.using)
            listener.ensure_connection()
            self._listener = listener  # closed by close() if LISTEN fails
            with listener.wrap_database_errors:
                listener.connection.execute(f"LISTEN {CHANNEL}")
            return True
        return False

    def _wait_on_socket(self, timeout: float) -> bool:
        readable, _, _ = select.select([self._socket], [], [], timeout)
        if not readable:
            return False
        while True:  # one poll answers every ring received so far
            try:
                self._socket.recv(16)
            except BlockingIOError:
                return True

    def _wait_for_notify(self, timeout: float) -> bool:
        raw = self._listener.connection
        with self._listener.wrap_database_errors:
            # Rings heard while the worker was busy wake it at once; then the rest of them are
            # taken, so that one poll answers them all (a later ring stays for the next wait).
            woken = any(True for _ in raw.notifies(timeout=timeout, stop_after=1))
            if woken:
                for _ in raw.notifies(timeout=0):
                    pass
        return woken
