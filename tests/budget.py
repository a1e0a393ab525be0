"""How hard the property and fuzz tests try: a small budget in ``make test``, a large one in
``make fuzz`` (which sets ``OCM_FUZZ_SCALE``)."""

from __future__ import annotations

import os

SCALE = max(1, int(os.environ.get("OCM_FUZZ_SCALE", "1")))


def examples(count: int) -> int:
    """``count`` examples in CI, ``SCALE`` times as many when fuzzing."""
    return count * SCALE
