"""The fixture corpus: tests/fixtures/<spec>/valid|invalid/<name>.<ext> next to <name>.expected.json.

valid/<name>.expected.json    the canonical JSON of the input (Transcript.to_dict()); the input
                              parses without error diagnostics, detect() names <spec>, and a
                              text spec serializes back byte for byte.
invalid/<name>.expected.json  {"diagnostics": [{"code": …, "line"?: …, "column"?: …,
                              "message_index"?: …}, …]}: exactly these diagnostics of
                              severity error or warning, in order, compared on the keys given;
                              optionally "detect": false when detect() need not name <spec>.
spec-samples/<spec>/<name>.txt examples copied verbatim from the spec texts.
"""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# Examples taken verbatim from the spec texts, one file each: the tests never read the spec
# texts themselves, which a clone of the project does not carry.
SPEC_SAMPLES = FIXTURES / "spec-samples"


def spec_samples(spec: str) -> list[str]:
    """The examples of ``spec`` copied from its spec text (``spec-samples/<spec>/*.txt``)."""
    return [read_input(path) for path in sorted((SPEC_SAMPLES / spec).glob("*.txt"))]


def fixture_inputs(kind: str) -> list[tuple[str, Path]]:
    cases = []
    for spec_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        folder = spec_dir / kind
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.name.endswith(".expected.json") or path.name.startswith("."):
                continue
            cases.append((spec_dir.name, path))
    return cases


def expected_for(path: Path) -> dict:
    return json.loads(path.with_name(path.name.split(".")[0] + ".expected.json").read_text("utf-8"))


def read_input(path: Path) -> str:
    # newline="" keeps \r\n as written: round trips are byte for byte.
    with path.open(encoding="utf-8", newline="") as fh:
        return fh.read()
