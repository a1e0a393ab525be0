"""Preference pairs (``editor.pairs``, docs/preference.md): a transcript's and a dataset's
stored pairs, and excluding one from exports or taking it back.

Pairs hold whole messages (hidden channels, system prompts): they are read by the roles that
see the annotator's rendering (viewers: 403). Excluding and including: a curator, or the
pair's own author."""

from ninja import Query, Router
from ninja.pagination import paginate

from editor import pairs
from editor.visibility import (
    require_pairs_reader,
    visible_dataset,
    visible_pair,
    visible_transcript,
)

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas import PairFilters, PairOut, PairSummaryOut

router = Router(tags=["pairs"])


@router.get(
    "/transcripts/{pk}/pairs",
    response={200: list[PairOut], **errors(403, 404, 410, 422)},
    summary="The transcript's preference pairs (from edits and imports), newest first",
)
@paginate(LimitOffset)
def transcript_pairs(request, pk: int):
    transcript = visible_transcript(request.auth, pk)
    require_pairs_reader(transcript.dataset, request.auth)
    return pairs.pairs_of_transcript(transcript)


@router.get(
    "/datasets/{slug}/pairs",
    response={200: list[PairSummaryOut], **errors(403, 404, 422)},
    summary="The dataset's preference pairs, newest first, without their messages",
    description="Filter by `source` (`edit`, `import`) and `excluded`. Pairs derived from "
    "pairwise answers are not stored: exports write them.",
)
@paginate(LimitOffset)
def dataset_pairs(request, slug: str, filters: Query[PairFilters]):
    dataset = visible_dataset(request.auth, slug)
    require_pairs_reader(dataset, request.auth)
    wanted = pairs.PairFilter(source=filters.source, excluded=filters.excluded)
    return pairs.pairs_of_dataset(dataset, wanted).defer("prompt", "chosen", "rejected")


@router.post(
    "/pairs/{pk}/exclude",
    response={200: PairOut, **errors(403, 404, 422)},
    summary="Leave a pair out of exports (a curator, or the pair's author)",
)
def exclude_pair(request, pk: int):
    return pairs.exclude_pair(visible_pair(request.auth, pk), request.auth)


@router.post(
    "/pairs/{pk}/include",
    response={200: PairOut, **errors(403, 404, 422)},
    summary="Take an excluded pair back into exports (a curator, or the pair's author)",
)
def include_pair(request, pk: int):
    return pairs.include_pair(visible_pair(request.auth, pk), request.auth)
