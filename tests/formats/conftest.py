"""The fixture corpus: tests/fixtures/<spec>/valid|invalid/<name>.<ext> next to <name>.expected.json.

valid/<name>.expected.json    the canonical JSON of the input (Transcript.to_dict()); the input
                              parses without error diagnostics, detect() names <spec>, and a
                              text spec serializes back byte for byte.
invalid/<name>.expected.json  {"diagnostics": [{"code": …, "line"?: …, "column"?: …,
                              "message_index"?: …}, …]}: exactly these diagnostics of
                              severity error or warning, in order, compared on the keys given;
                              optionally "detect": false when detect() need not name <spec>.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# The spec texts live beside the repository (../shared/specs), as in CI's checkout.
SPECS_DIR = Path(
    os.environ.get("OCM_SPECS_DIR") or Path(__file__).resolve().parents[3] / "shared" / "specs"
)


def spec_text(name: str) -> str:
    path = SPECS_DIR / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: the spec texts must be at ../shared/specs (or set OCM_SPECS_DIR)"
        )
    return path.read_text("utf-8")


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
