"""When a waiting client looks at a background task again (``Client._wait``).

Soon at first, then less and less often (every 0.2 s growing to 2 s), which keeps a long wait
cheap for the server; but a task that tells how far it is (its progress ``percent``) is looked
at around when it should end, so that the end is seen within a tenth of a second rather than
up to two seconds late: an import of 10,000 chats takes about 3 s, of which a plain back-off
could add 1.5 s to what the pipeline waits. The server's estimate of the time left
(``seconds_left``, from its own clock) is used where it gives one; otherwise the pace is told
from the percentages this client saw. Once a task has read everything (100 % but not ended:
its last writes and its commit) it is looked at often again, from a tenth of a second.
No dependency, no clock of its own (given, for tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable

FIRST = 0.2
LONGEST = 2.0
SHORTEST = 0.1
GROWTH = 1.5


class PollSchedule:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._backoff = FIRST
        self._tail = SHORTEST  # once everything is read
        self._seen: tuple[float, float] | None = None  # (when, percent) progress was first seen

    def after(self, percent: float | None, seconds_left: float | None = None) -> float:
        """Seconds to wait before the next look, the last one having seen ``percent`` (None:
        the task does not tell) and, where the server estimates it, ``seconds_left``."""
        backoff, self._backoff = self._backoff, min(self._backoff * GROWTH, LONGEST)
        if percent is None:
            return backoff
        if percent >= 100:
            tail, self._tail = self._tail, min(self._tail * GROWTH, LONGEST)
            return tail
        if seconds_left is not None:  # the server's own clock: better than this one's view
            return max(SHORTEST, min(backoff, seconds_left))
        now = self._clock()
        if self._seen is None or percent < self._seen[1]:
            self._seen = (now, percent)  # the first sign of progress (or a task started again)
            return backoff
        since, first = self._seen
        if percent == first:
            return backoff
        remaining = (100 - percent) * (now - since) / (percent - first)
        return max(SHORTEST, min(backoff, remaining))
