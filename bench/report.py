"""What the benchmarks share to time a step and print it, and to start: ``timed`` (p50 / p95
of a step run ``rounds`` times, after a warm-up), ``get_page`` (a page the way a browser
asks for it) and ``main`` (a benchmark module's ``__main__``: its child's work with
``--child``, as ``bench.databases`` starts it, else ``run``)."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

ROUNDS = 30


def timed(label: str, step: Callable[[int], object], rounds: int = ROUNDS) -> None:
    """Run ``step(n)`` ``rounds`` times (``step(-1)`` first, a warm-up: first queries,
    template compilation) and print the label with the median and the 95th percentile."""
    step(-1)
    times = []
    for n in range(rounds):
        started = time.perf_counter()
        step(n)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p95 = times[int(len(times) * 0.95) - 1]
    print(
        f"  {label:58} p50 {statistics.median(times):7.1f} ms   p95 {p95:7.1f} ms",
        flush=True,
    )


def get_page(client, path: str, params: dict | None = None):
    """GET ``path`` over HTTPS (with DJANGO_DEBUG=false the site redirects plain http: this
    timed a redirect until the fifteenth session); anything but a 200 (a redirect, an error)
    would time the wrong thing."""
    response = client.get(path, params or {}, secure=True)
    assert response.status_code == 200, (path, response.status_code)
    return response


def main(run: Callable[[], None], child: Callable[[], None]) -> None:
    """A benchmark module run as ``python -m bench.bench_x``: ``run()``, which starts the
    module again as a child process per database (``bench.databases``), or, in that child
    (``--child``), ``child()``."""
    if "--child" in sys.argv:
        child()
    else:
        run()
