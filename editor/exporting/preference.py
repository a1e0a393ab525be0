"""The ``preference`` export: a dataset's preference pairs as TRL / HH-RLHF rows.

The pairs are ``editor.pairs.export_rows`` (edits, imports, pairwise majorities; excluded
pairs, ties and items without a majority left out and counted); this module writes each as
one row of the chosen shape (``editor.formats.preference.write_row``: conversational,
standard or hh), its messages converted to ``spec`` (conversational: ``openai-messages`` by
default), and adds the pair's ``provenance`` to the row. The summary says how many pairs
were written, how many were left out and why, and what the conversion lost.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from editor import formats
from editor.errors import InvalidContent
from editor.exporting.summarized import SummarizedExport
from editor.formats import preference
from editor.pairs import SOURCES, export_rows

if TYPE_CHECKING:
    from editor.models import Dataset, TranscriptQuerySet

MAX_KEPT_LOSSES = 1000


def check_options(shape: str, spec: str | None, sources: Iterable[str]) -> None:
    """Refuse (InvalidContent) a shape, spec or source the export cannot write."""
    if shape not in preference.SHAPES:
        raise InvalidContent(
            f"Unknown preference shape {shape!r}; expected one of: {', '.join(preference.SHAPES)}.",
            code="invalid-request",
        )
    if spec is not None and shape == preference.HH:
        raise InvalidContent("HH rows are plain text: they take no spec.", code="invalid-request")
    if shape == preference.STANDARD and spec is not None and spec not in formats.TEXT_SPECS:
        raise InvalidContent(
            f"Standard rows are strings: {spec} is not a text spec (pick a text spec, or "
            "conversational rows).",
            code="invalid-request",
        )
    unknown = sorted(set(sources) - set(SOURCES))
    if unknown or not sources:
        raise InvalidContent(
            f"Sources are any of {', '.join(SOURCES)} (got {', '.join(unknown) or 'none'}).",
            code="invalid-source",
            details={"sources": unknown, "allowed": list(SOURCES)},
        )


class PreferenceExport(SummarizedExport):
    """An iterable of JSON lines, one preference row each, in constant memory; ``rows()``
    gives the same rows as dicts (the Parquet writer's input). Counters (``count``,
    ``left_out``, ``loss_count``…) are complete once iterated."""

    def __init__(
        self,
        dataset: Dataset,
        *,
        transcripts: TranscriptQuerySet,
        shape: str,
        spec: str | None,
        sources: Iterable[str],
        chunk_size: int,
    ):
        self.dataset = dataset
        self.transcripts = transcripts
        self.shape = shape
        self.spec = spec
        self.sources = tuple(sources)
        self.chunk_size = chunk_size
        self.count = 0
        self.left_out: dict[str, int] = {}
        self.loss_count = 0
        self.losses: list[dict] = []
        self.loss_summary: dict[str, dict] = {}

    def rows(self) -> Iterator[dict]:
        pairs = export_rows(
            self.dataset,
            sources=self.sources,
            transcripts=self.transcripts.values("pk"),
            chunk_size=self.chunk_size,
        )
        for pair in pairs:
            spec = pair.provenance["spec"]
            written = preference.write_row(
                [formats.Message.from_dict(m) for m in pair.prompt],
                [formats.Message.from_dict(m) for m in pair.chosen],
                [formats.Message.from_dict(m) for m in pair.rejected],
                spec=spec,
                shape=self.shape,
                target=self.spec,
                tools=pair.tools,
            )
            self.count += 1
            self._keep_losses(pair.provenance, written.losses)
            yield {**written.row, "provenance": pair.provenance}
        self.left_out = dict(pairs.left_out)

    def __iter__(self) -> Iterator[str]:
        for row in self.rows():
            yield json.dumps(row, ensure_ascii=False) + "\n"

    def _keep_losses(self, provenance: dict, losses: list[dict]) -> None:
        self.loss_count += len(losses)
        for lost, detail in {loss["field"]: loss["detail"] for loss in losses}.items():
            kind = self.loss_summary.setdefault(lost, {"pairs": 0, "example": detail})
            kind["pairs"] += 1
        room = MAX_KEPT_LOSSES - len(self.losses)
        if room > 0:
            where = {"transcript": provenance["transcript"], "pair": provenance.get("pair")}
            self.losses.extend({**where, **loss} for loss in losses[:room])

    def summary(self) -> dict:
        """How many pairs were written, how many left out (by why: excluded, tie,
        no_majority, missing_alternative) and what the conversion lost."""
        return {
            "pairs": self.count,
            "left_out": self.left_out,
            "loss_count": self.loss_count,
            "losses": self.loss_summary,
        }
