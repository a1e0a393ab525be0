"""The recount of a dataset's token counts after its tokenizer changed, on a task worker.

Idempotent (``editor.tokens.recount_dataset`` writes only stale counts), so it needs no
task row: a worker that dies midway leaves stale counts that the next recount (or each
transcript's next save) brings up to date.
"""

from __future__ import annotations

from django_tasks import task

from editor import tokens


@task()
def recount_tokens(dataset_id: int) -> int:
    """Recount every transcript of the dataset under its tokenizer; how many were written."""
    return tokens.recount_dataset(dataset_id)
