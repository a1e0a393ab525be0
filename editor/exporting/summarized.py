"""What every dataset export does once it can write its lines and sum them up: a preview
(the summary, every line written and dropped, unless there are too many transcripts to wait
for) and the lines followed by their summary (a streamed export's trailer)."""

from __future__ import annotations

import json
from collections.abc import Iterator


class SummarizedExport:
    """A mixin for an export that iterates over its lines (``__iter__``), sums them up once
    iterated (``summary``) and reads from ``transcripts`` (a queryset)."""

    def summary(self) -> dict:
        raise NotImplementedError

    def __iter__(self) -> Iterator[str]:
        raise NotImplementedError

    def preview(self, limit: int) -> dict:
        """The summary of the whole export, computed before anything is downloaded (every line
        written and dropped, in constant memory), or only ``{"transcripts": n, "too_many":
        True}`` when more than ``limit`` transcripts would make the user wait: a prepared
        export then gives the summary."""
        total = self.transcripts.count()
        if total > limit:
            return {"transcripts": total, "too_many": True}
        for _line in self:
            pass
        return self.summary()

    def with_summary_line(self) -> Iterator[str]:
        """The lines, then ``{"summary": …}`` on one more line (a streamed export's trailer)."""
        yield from self
        yield json.dumps({"summary": self.summary()}, ensure_ascii=False) + "\n"
