"""POST /render of a 50,000-message Harmony text (``tests/support/huge.py``): what the route
does per request, in the spec core, before and after it was paged: the parse (the floor: the
text is posted whole), the whole rendering it built before (``render`` /
``render_training``), and a page of 1,000 items as it builds now (``render_text_page``), the
first and the last.

Prints, per step: the median of 3 runs (seconds) and the peak of Python memory allocated
during it (tracemalloc, a separate run: it slows what it watches). ``OCM_BENCH_MESSAGES``
sets the size (default 50,000, the most one transcript may hold).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_posted_render
"""

from __future__ import annotations

import os
import statistics
import time
import tracemalloc

from editor import formats
from editor.formats.pages import render_text_page
from editor.formats.render import render
from editor.formats.training import render_training
from tests.support.huge import huge_harmony

MESSAGES = int(os.environ.get("OCM_BENCH_MESSAGES", "50000"))
PAGE = 1_000
RUNS = 3
MB = 1024 * 1024


def run() -> None:
    text = huge_harmony(MESSAGES)
    print(f"text: {MESSAGES:,} messages, {len(text.encode()) / MB:.1f} MB")
    _report("parse", lambda: formats.parse(text, spec="harmony"))
    transcript = formats.parse(text, spec="harmony").transcript
    for audience in ("end_user", "annotator", "debug", "training"):

        def whole(audience=audience):
            if audience == "training":
                return render_training(transcript, None, text=text)
            return render(transcript, audience, source_text=text).to_dict()

        def page(offset: int, audience=audience):
            return render_text_page(transcript, text, audience, offset=offset, limit=PAGE)

        last = page(0)["total"] - 1
        _report(f"{audience}: whole rendering (before)", whole)
        _report(f"{audience}: first page", lambda page=page: page(0))
        _report(f"{audience}: last page", lambda page=page, last=last: page(last))


def _report(step: str, action) -> None:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    try:
        action()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    print(f"{step:40} {statistics.median(times):7.3f} s   peak {peak / MB:7.1f} MB")


if __name__ == "__main__":
    run()
