"""Finding what the caller may see: one place for the lookups every router shares.

Membership decides (``for_user``); anything outside it is a 404, so the API does not tell
an outsider which datasets or transcripts exist. What a member may *do* is decided by the
domain (``Dataset.can_edit``/``audiences_for``, checked again by ``editor.storage``).
"""

from django.http import Http404

from editor.models import Dataset, ImportTask, Transcript
from editor.storage import TranscriptDeleted


def visible_dataset(user, slug: str, *, with_counts: bool = False) -> Dataset:
    """The dataset ``slug`` if ``user`` is a member, its ``user_role`` annotated."""
    datasets = Dataset.objects.for_user(user).with_roles(user)
    if with_counts:
        datasets = datasets.with_transcript_counts()
    dataset = datasets.filter(slug=slug).first()
    if dataset is None:
        raise Http404(f"No dataset {slug!r} among yours.")
    return dataset


def visible_transcript(user, pk: int, *, deleted_ok: bool = False) -> Transcript:
    """The transcript ``pk`` if ``user`` is a member of its dataset.

    A deleted one is a 410 (it can be brought back) unless ``deleted_ok``.
    """
    transcript = (
        Transcript.all_objects.for_user(user).select_related("dataset").filter(pk=pk).first()
    )
    if transcript is None:
        raise Http404(f"No transcript {pk} among yours.")
    if transcript.is_deleted and not deleted_ok:
        raise TranscriptDeleted("The transcript was deleted; a curator can undelete it.")
    return transcript


def visible_import_task(user, pk: int) -> ImportTask:
    task = (
        ImportTask.objects.select_related("dataset", "created_by")
        .filter(dataset__in=Dataset.objects.for_user(user), pk=pk)
        .first()
    )
    if task is None:
        raise Http404(f"No import {pk} among yours.")
    return task
