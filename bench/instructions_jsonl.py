"""JSONL validation counted in instructions, for when timings are noise.

On a shared VM, identical timed runs of the same code can differ by tens of per cent, more
than most changes to a record's validation gain. This counts instead the instructions
``valgrind --tool=callgrind`` sees for ``RECORDS`` of ``bench_jsonl``'s records: one run that
only builds the lines, one that also validates them (``jsonl.validate_record``), one that also
decodes them with ``json.loads``; the differences, per record, are repeatable to about 1 %.
Not part of ``make bench``: valgrind is not one of the project's dependencies
(``apt-get install valgrind``).

    .venv/bin/python -m bench.instructions_jsonl
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys

RECORDS = 1000
COLLECTED = re.compile(r"Collected : (\d+)")


def _lines() -> list[bytes]:
    from bench.bench_jsonl import build_record

    rng = random.Random(7)
    return [json.dumps(build_record(rng, n), ensure_ascii=False).encode() for n in range(RECORDS)]


def _work(mode: str) -> None:
    """What one counted run does: build the lines, then ``mode`` them."""
    from editor.formats import jsonl

    lines = _lines()
    jsonl.validate_record(0, lines[0], None)  # imports and caches, in every mode alike
    if mode == "validate":
        for number, line in enumerate(lines, start=1):
            jsonl.validate_record(number, line, None)
    elif mode == "json.loads":
        for line in lines:
            json.loads(line)


def _count(mode: str) -> int:
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "bench.instructions_jsonl",
        mode,
    ]
    finished = subprocess.run(command, capture_output=True, text=True, check=True)
    return int(COLLECTED.search(finished.stderr).group(1))


def run() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    baseline = _count("build")
    per_record = {mode: (_count(mode) - baseline) / RECORDS for mode in ("validate", "json.loads")}
    validate, decode = per_record["validate"], per_record["json.loads"]
    print(f"jsonl.validate_record: {validate / 1000:.1f}k instructions a record")
    print(f"json.loads:            {decode / 1000:.1f}k instructions a record")
    print(f"ratio:                 {validate / decode:.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        _work(sys.argv[1])
    else:
        run()
