"""Parsing time is linear in input size (docs/performance.md)."""

from __future__ import annotations

import gc
import time

from bench.bench_parse import build_messages, to_ocm22
from editor.formats.diagnostics import Diagnostics
from editor.formats.specs import get_codec


def best_time(codec, text: str, runs: int = 3) -> float:
    """The least CPU time of ``runs`` parses: CPU time, not wall time, so that other processes
    on a shared machine (which slow a long run more than a short one) cannot skew a ratio."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            start = time.process_time()
            codec.parse(text, Diagnostics(text))
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


def test_ten_megabytes_parse_in_about_ten_times_one_megabyte():
    big = to_ocm22(build_messages(10_000_000))
    small = to_ocm22(build_messages(1_000_000))
    codec = get_codec("openchatml-2.2")
    ratio = best_time(codec, big) / best_time(codec, small)
    assert ratio < 20, f"10 MB took {ratio:.1f}x the time of 1 MB"


# Below this a timing is mostly noise: a sub-millisecond baseline once made a linear parse
# look 28x slower under load. Inputs grow until the smaller one takes at least this long.
MIN_BASELINE_SECONDS = 0.02


def repeats_worth_timing(codec, unit: str) -> int:
    repeats = 8_000
    while best_time(codec, unit * repeats, runs=1) < MIN_BASELINE_SECONDS:
        repeats *= 2
    return repeats


def test_pathological_inputs_stay_linear():
    codec = get_codec("openchatml-2.2")
    for unit in ("<|literal|>", "<|start|>", "<<|end|>", "<|x|>", "< | <|"):
        repeats = repeats_worth_timing(codec, unit)
        small, big = unit * repeats, unit * repeats * 10
        ratio = best_time(codec, big, runs=3) / best_time(codec, small, runs=5)
        assert ratio < 25, (unit, repeats, ratio)  # quadratic would be ~100
