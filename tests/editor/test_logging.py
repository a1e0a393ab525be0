"""The logging settings: each record is written once (``make run`` printed every line twice)."""

import logging


def consoles_reached(logger: logging.Logger) -> list[logging.Handler]:
    """The console handlers a record of ``logger`` reaches (pytest's own handlers aside)."""
    reached = []
    current: logging.Logger | None = logger
    while current is not None:
        reached += [h for h in current.handlers if type(h) is logging.StreamHandler]
        current = current.parent if current.propagate else None
    return reached


def test_a_django_warning_reaches_one_console():
    assert len(consoles_reached(logging.getLogger("django.request"))) == 1
