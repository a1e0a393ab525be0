"""Dataset validation throughput: ``ocm validate --jsonl`` against json.loads of the same lines.

The dataset is openai-messages records, one a line, the shape of a tool-use fine-tuning set:
a system prompt, user prose, an assistant turn with reasoning and a tool call, the tool's
reply and a final answer, with the tools declared. It is written to a temporary file, then
validated record by record (parse + every semantic rule) by ``jsonl.run`` with 1 and with 2
worker processes, as the CLI does; the baseline is ``json.loads`` of every line in one
process. Target: >= 0.3x json.loads' throughput on this 2-core machine.

    OCM_BENCH_JSONL_MB=1000 .venv/bin/python -c "from bench import bench_jsonl; bench_jsonl.run()"
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from functools import partial

from editor.formats import jsonl

TARGET_MB = int(os.environ.get("OCM_BENCH_JSONL_MB", "50"))

PROSE = (
    "The committee reviewed the quarterly figures and found that revenue grew in every region "
    "except the north, where a supplier dispute delayed shipments for most of March. "
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]


def build_record(rng: random.Random, number: int) -> dict:
    city = rng.choice(["Tokyo", "Lima", "Oslo", "Nairobi", "Québec"])
    call_id = f"call_{number}"
    return {
        "messages": [
            {"role": "system", "content": "You are a helpful assistant. " * rng.randint(1, 4)},
            {"role": "user", "content": PROSE * rng.randint(1, 8) + f"Weather in {city}?"},
            {
                "role": "assistant",
                "reasoning": "Need the weather first. " * rng.randint(1, 6),
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": json.dumps({"city": city, "unit": "celsius"}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps({"temp": 20})},
            {"role": "assistant", "content": PROSE * rng.randint(1, 4)},
        ],
        "tools": TOOLS,
    }


def write_dataset(path: str, target_bytes: int) -> int:
    rng = random.Random(7)
    written = records = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target_bytes:
            line = json.dumps(build_record(rng, records), ensure_ascii=False) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
            records += 1
    return records


def time_json_loads(path: str) -> float:
    start = time.perf_counter()
    with open(path, "rb") as lines:
        for line in lines:
            json.loads(line)
    return time.perf_counter() - start


def time_validation(path: str, jobs: int) -> tuple[float, int]:
    start = time.perf_counter()
    errors = 0
    with open(path, "rb") as lines:
        for report in jsonl.run(lines, partial(jsonl.validate_record, spec=None), jobs=jobs):
            errors += any(d.severity == "error" for d in report.diagnostics)
    return time.perf_counter() - start, errors


def run() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "dataset.jsonl")
        records = write_dataset(path, TARGET_MB * 1024 * 1024)
        size_mb = os.path.getsize(path) / 1024 / 1024
        baseline = time_json_loads(path)
        print(f"dataset: {records} records, {size_mb:.0f} MB")
        print(f"json.loads, 1 process: {baseline:.2f} s ({size_mb / baseline:.0f} MB/s)")
        for jobs in (1, 2):
            seconds, failed = time_validation(path, jobs)
            print(
                f"ocm validate -j {jobs}: {seconds:.2f} s ({size_mb / seconds:.1f} MB/s), "
                f"{baseline / seconds:.2f}x json.loads; records with errors: {failed}"
            )
