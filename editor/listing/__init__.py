"""The transcript list: one query for the dataset page, the API, bulk actions and exports.

``TranscriptList`` is a dataset's transcripts as a list asks for them — filtered (a
``TranscriptFilter``: status, spec, errors, codes, labels, words…), sorted, deleted or not —
and gives them as each caller needs: a page of the dataset page, the first rows of an API
list, every id for a bulk action. Whether the words are also looked for where the end user
cannot see is the user's role's (``Dataset.sees_hidden``), decided here for all of them.

``filters`` reads the filters from a query string; ``search`` finds a page of a text search
the cheapest way and cuts its snippets. The criteria themselves are
``TranscriptQuerySet.matching`` and ``sorted_by`` (editor/models/transcripts.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from django.core.cache import cache
from django.core.paginator import Page, Paginator

from editor.db.json_items import ItemValues, rows_per_item_value
from editor.errors import FilterNotAllowed
from editor.formats.diagnostics import CODES
from editor.listing import search
from editor.listing.filters import DEFAULT_SORT
from editor.models import Dataset, Transcript, TranscriptFilter, TranscriptQuerySet


def hidden_filters(wanted: TranscriptFilter) -> list[str]:
    """The filters of ``wanted`` that tell what the end user is not shown: kinds of hidden
    message (``has``), diagnostic codes (they point into hidden parts) and label answers
    (which only the roles that label may read). A count of errors names no part: allowed."""
    used = {
        "has": bool(wanted.contains),
        "code": bool(wanted.code),
        "label": bool(wanted.label),
        "judge": wanted.judge_disagrees,  # a model's answers: read by the roles that label
    }
    return [name for name, present in used.items() if present]


@dataclass(frozen=True)
class TranscriptList:
    dataset: Dataset
    wanted: TranscriptFilter
    sort: str = DEFAULT_SORT
    deleted: bool = False

    @classmethod
    def of(cls, dataset: Dataset, user, wanted: TranscriptFilter, **options) -> TranscriptList:
        """The list ``user`` asks for: their words searched where their role may see; a filter
        on what the role may not see is refused (``FilterNotAllowed``)."""
        sees_hidden = dataset.sees_hidden(user)
        refused = [] if sees_hidden else hidden_filters(wanted)
        if refused:
            raise FilterNotAllowed(
                f"Your role sees what the end user sees only: filtering by {', '.join(refused)}"
                " would tell what it does not show.",
                details={"filters": refused},
            )
        return cls(dataset, replace(wanted, search_hidden=sees_hidden), **options)

    @property
    def shows_diagnostics(self) -> bool:
        """Whether the rows may carry their diagnostic codes (they point into hidden parts)."""
        return self.wanted.search_hidden

    def _all(self) -> TranscriptQuerySet:
        if self.deleted:
            return Transcript.all_objects.filter(dataset=self.dataset).deleted()
        return Transcript.objects.filter(dataset=self.dataset)

    def rows(self) -> TranscriptQuerySet:
        """Every criterion but the words, sorted: only the columns a list shows."""
        wanted = replace(self.wanted, text=None)
        return self._all().summaries().matching(wanted).sorted_by(self.sort)

    def page(self, number, per_page: int) -> Page:
        """Page ``number`` as the dataset page shows it (with snippets when searching), each
        row with its diagnostic codes (``diagnostic_codes``: ``(code, severity)`` pairs)."""
        rows = self.rows().select_related("updated_by")
        if self.shows_diagnostics:
            rows = rows.annotate(codes=ItemValues("diagnostics", "code"))
        if not self.wanted.text:
            page = Paginator(rows, per_page).get_page(number)
        else:
            page = search.search_page(
                rows, self.wanted.text, self.wanted.search_hidden, number, per_page
            )
        page.object_list = list(page.object_list)
        for row in page.object_list:
            row.diagnostic_codes = [
                (code, CODES[code].severity if code in CODES else "error")
                for code in (getattr(row, "codes", None) or "").split()
            ]
        return page

    def first_rows(self, rows_needed: int) -> TranscriptQuerySet:
        """The rows in the form that gives the first ``rows_needed`` fastest and still counts
        exactly (the API's paginated lists)."""
        rows = self.rows()
        if not self.wanted.text:
            return rows
        return search.rows_containing(
            rows, self.wanted.text, self.wanted.search_hidden, rows_needed
        )

    def ids(self) -> list[int]:
        """Every match's id, in id order (a bulk action's selection)."""
        return list(self._all().matching(self.wanted).order_by("pk").values_list("pk", flat=True))

    def code_counts(self, matches: int) -> list[tuple[str, int]] | None:
        """The diagnostic codes the matching transcripts hold, each with how many hold it,
        most held first (the dataset page's facet; ``matches``: how many transcripts match,
        which the page has counted already).

        Counting walks every matching transcript's diagnostics (about 0.3 s at 100,000 on a
        busy machine: docs/performance.md), so the answer is kept in the shared cache until the
        dataset changes: the key holds the filters, the dataset's newest change (every write
        sets ``updated_at``; one step down an index) and ``matches`` (a transcript gone).
        None while words are searched: that count would cost what finding every match of the
        words costs (the page estimates it instead)."""
        if self.wanted.text or not self.shows_diagnostics:
            return None
        newest = (
            Transcript.all_objects.filter(dataset=self.dataset)
            .order_by("-updated_at")
            .values_list("updated_at", flat=True)
            .first()
        )
        wanted = repr((self.wanted, self.deleted, newest, matches)).encode()
        key = f"code-facet:{self.dataset.pk}:{hashlib.sha256(wanted).hexdigest()}"
        counts = cache.get(key)
        if counts is None:
            rows = self._all().matching(self.wanted)
            counts = rows_per_item_value(rows, "diagnostics", "code")
            cache.set(key, counts, CODE_FACET_SECONDS)
        return counts


# How long a facet's counts are kept at most (a write outside editor.storage, which would not
# set updated_at, is seen after this long).
CODE_FACET_SECONDS = 600
