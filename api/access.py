"""Finding what the caller may see: one place for the lookups every router shares.

Membership decides (``for_user``); anything outside it is a 404, so the API does not tell
an outsider which datasets or transcripts exist. What a member may *do* is decided by the
domain (``Dataset.can_edit``/``audiences_for``, checked again by ``editor.storage``).
"""

from django.http import Http404

from editor.errors import NotAllowed, TranscriptDeleted
from editor.models import Annotation, Dataset, ImportTask, LabelSchema, Transcript
from editor.tasks import current


def visible_dataset(user, slug: str, *, with_counts: bool = False) -> Dataset:
    """The dataset ``slug`` if ``user`` is a member, its ``user_role`` annotated."""
    datasets = Dataset.objects.for_user(user).with_roles(user)
    if with_counts:
        datasets = datasets.with_transcript_counts()
    # No slug has a NUL, and PostgreSQL refuses one in a query.
    dataset = None if "\x00" in slug else datasets.filter(slug=slug).first()
    if dataset is None:
        raise Http404(f"No dataset {slug!r} among yours.")
    return dataset


def visible_transcript(user, pk: int, *, deleted_ok: bool = False) -> Transcript:
    """The transcript ``pk`` if ``user`` is a member of its dataset.

    A deleted one is a 410 (it can be brought back) unless ``deleted_ok``.
    """
    transcript = Transcript.all_objects.visible_one(user, pk)
    if transcript is None:
        raise Http404(f"No transcript {pk} among yours.")
    if not user.is_superuser:
        transcript.dataset.know_role(user, transcript.caller_role)
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
    return current(task)


def visible_label_schema(user, pk: int) -> LabelSchema:
    schema = (
        LabelSchema.objects.with_current_version()
        .select_related("dataset")
        .filter(dataset__in=Dataset.objects.for_user(user), pk=pk)
        .first()
    )
    if schema is None:
        raise Http404(f"No label schema {pk} among yours.")
    return schema


def visible_annotation(user, pk: int) -> Annotation:
    """The annotation ``pk`` if ``user`` may read it; another annotator's is a 404 to an
    annotator (as if it did not exist), any is a 403 to a viewer (who reads no annotations)."""
    annotation = (
        Annotation.objects.select_related(
            "transcript__dataset", "schema_version__schema__dataset", "annotator"
        )
        .filter(transcript__in=Transcript.all_objects.for_user(user), pk=pk)
        .first()
    )
    if annotation is None:
        raise Http404(f"No annotation {pk} among yours.")
    if not annotation.transcript.dataset.can_edit(user):
        raise NotAllowed("Your role in this dataset does not read annotations.")
    if not annotation.readable_by(user):
        raise Http404(f"No annotation {pk} among yours.")
    return annotation
