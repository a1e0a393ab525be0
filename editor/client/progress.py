"""A one-line progress bar on a terminal: rewritten in place with ``\\r``, on standard error,
and only when that is a terminal (a pipeline's log gets nothing). No dependency."""

from __future__ import annotations

import sys
from typing import TextIO

WIDTH = 30


class ProgressBar:
    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.shown = False

    def update(self, percent: float | None, detail: str = "") -> None:
        if not self.enabled:
            return
        if percent is None:
            bar = "?" * WIDTH
            figure = "  ?%"
        else:
            percent = max(0.0, min(100.0, percent))
            done = round(WIDTH * percent / 100)
            bar = "#" * done + "-" * (WIDTH - done)
            figure = f"{percent:3.0f}%"
        line = f"{self.label} [{bar}] {figure} {detail}".rstrip()
        self.stream.write(f"\r{line}\033[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
