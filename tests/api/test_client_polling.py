"""How often a waiting client looks at a background task (editor.client.polling): backing
off while it knows nothing, and looking around the expected end once the task's progress
tells how far it is."""

from __future__ import annotations

import pytest

from editor.client import polling
from editor.client.polling import PollSchedule


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_without_progress_it_backs_off_to_two_seconds():
    schedule = PollSchedule(Clock())
    waits = [schedule.after(None) for _ in range(9)]
    assert waits[:4] == pytest.approx([0.2, 0.3, 0.45, 0.675])
    assert waits[-1] == polling.LONGEST
    assert waits == sorted(waits)


def test_it_looks_again_around_when_the_task_should_end():
    clock = Clock()
    schedule = PollSchedule(clock)
    assert schedule.after(0) == pytest.approx(0.2)  # the first sign: nothing to go on yet
    clock.now = 1.0
    # 40 % in a second: 60 % more is 1.5 s, more than the back-off allows (0.3 s).
    assert schedule.after(40) == pytest.approx(0.3)
    clock.now = 2.0
    # 80 % in two seconds: 0.5 s to go, still more than the back-off (0.45 s).
    assert schedule.after(80) == pytest.approx(0.45)
    clock.now = 2.3
    # 92 % at 2.3 s: 0.2 s to go, sooner than the back-off (0.675 s).
    assert schedule.after(92) == pytest.approx(0.2, abs=0.001)
    clock.now = 2.5
    # 99.5 %: about 0.01 s to go, but never more often than every tenth of a second.
    assert schedule.after(99.5) == polling.SHORTEST


def test_once_everything_is_read_it_looks_often_then_less_so():
    clock = Clock()
    schedule = PollSchedule(clock)
    for percent in (10, 50):
        schedule.after(percent)
        clock.now += 1
    tail = [schedule.after(100) for _ in range(3)]
    assert tail == pytest.approx([0.1, 0.15, 0.225])


def test_a_long_task_is_never_looked_at_less_often_than_every_two_seconds():
    clock = Clock()
    schedule = PollSchedule(clock)
    waits = []
    for percent in range(0, 100, 1):
        waits.append(schedule.after(percent))
        clock.now += 30  # 50 minutes for the whole task
    assert max(waits) == polling.LONGEST
    assert waits[-1] == polling.LONGEST  # 30 s to go at 99 %: the back-off's longest


def test_a_task_started_again_is_measured_afresh():
    clock = Clock()
    schedule = PollSchedule(clock)
    schedule.after(50)
    clock.now = 1.0
    schedule.after(60)
    clock.now = 2.0
    # Back to 5 % (queued again after its worker died): no estimate from the old rate.
    assert schedule.after(5) == pytest.approx(0.45)


def test_the_servers_estimate_of_the_time_left_is_taken_when_given():
    """``seconds_left`` is the server's, on its own clock: this client saw 65 % only at 2.6 s
    (the report was made at 2 s), which would make it think the task slower than it is."""
    clock = Clock()
    schedule = PollSchedule(clock)
    schedule.after(0)
    clock.now = 2.6
    # Its own view (65 % in 2.6 s: 1.4 s to go) would wait the whole back-off, 0.3 s.
    assert schedule.after(65, seconds_left=0.25) == pytest.approx(0.25)
    # Never sooner than the shortest, never later than the back-off.
    assert schedule.after(90, seconds_left=0.01) == polling.SHORTEST
    assert schedule.after(90, seconds_left=60) == pytest.approx(0.675)
