"""What a user may see: one rule for every HTML view, API route and export.

* Which objects: membership decides (``Dataset.objects.for_user`` and the ``for_user`` of the
  other QuerySets); the ``visible_*`` lookups below find one object through it, and anything
  outside it is a 404, so nobody learns which datasets or transcripts exist beyond theirs.
* Which renderings: a role's come from ``Dataset.audiences_for`` (a viewer: the end user's
  only). The whole stored transcript (hidden channels, source text) is what the debug
  rendering shows, so reading a transcript whole needs that rendering too.

What a member may *do* is decided by the domain (``Dataset.can_edit``, ``editor.workflow``,
checked again by ``editor.storage``).
"""

from django.db.models import Exists, OuterRef
from django.http import Http404

from editor.background import current
from editor.errors import NotAllowed, TranscriptDeleted
from editor.models import (
    Annotation,
    BulkTask,
    Dataset,
    ExportTask,
    ImportTask,
    JudgeRun,
    LabelSchema,
    PreferencePair,
    ReviewQueue,
    Suggestion,
    Transcript,
    WebhookEndpoint,
)
from editor.pairs import with_names

END_USER = "end_user"
FULL_CONTENT = "debug"


def require_audience(dataset: Dataset, user, audience: str) -> None:
    """Raise ``NotAllowed`` (code ``E-PERM-VISIBILITY``, HTTP 403) unless ``user``'s role in
    ``dataset`` shows ``audience``'s rendering."""
    allowed = dataset.audiences_for(user)
    if audience not in allowed:
        raise NotAllowed(
            f"Your role in {dataset.name} shows only what the end user sees "
            f"(asked for: {audience}).",
            code="E-PERM-VISIBILITY",
            details={"audience": audience, "allowed": list(allowed)},
        )


def export_audience(dataset: Dataset, user, audience: str | None) -> None:
    """An export without ``audience`` carries everything; check the role allows that."""
    require_audience(dataset, user, audience or FULL_CONTENT)


def visible_dataset(
    user, slug: str, *, with_counts: bool = False, with_webhook_alert: bool = False
) -> Dataset:
    """The dataset ``slug`` if ``user`` is a member, its ``user_role`` annotated (and, with
    ``with_webhook_alert``, ``has_disabled_webhooks``: the banner's check, in the same query)."""
    datasets = Dataset.objects.for_user(user).with_roles(user)
    if with_counts:
        datasets = datasets.with_transcript_counts()
    if with_webhook_alert:
        disabled = WebhookEndpoint.objects.filter(dataset=OuterRef("pk"), disabled_at__isnull=False)
        datasets = datasets.annotate(has_disabled_webhooks=Exists(disabled))
    # No slug has a NUL, and PostgreSQL refuses one in a query.
    dataset = None if "\x00" in slug else datasets.filter(slug=slug).first()
    if dataset is None:
        raise Http404(f"No dataset {slug!r} among yours.")
    dataset.know_role(user, dataset.user_role)
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
    task = _in_visible_dataset(
        ImportTask.objects.select_related("dataset", "created_by"), user, pk, "import"
    )
    return current(task)


def visible_label_schema(user, pk: int) -> LabelSchema:
    rows = LabelSchema.objects.with_current_version().select_related("dataset")
    return _in_visible_dataset(rows, user, pk, "label schema")


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


# Preference pairs hold whole messages, hidden channels and system prompts included: they are
# read by the roles that see the annotator's rendering (viewers: 403).
PAIRS_AUDIENCE = "annotator"


def require_pairs_reader(dataset: Dataset, user) -> None:
    """Raise ``NotAllowed`` (403) unless ``user``'s role in ``dataset`` reads its pairs."""
    require_audience(dataset, user, PAIRS_AUDIENCE)


def visible_pair(user, pk: int) -> PreferencePair:
    """The preference pair ``pk`` if ``user`` is a member of its transcript's dataset (else,
    or when that transcript is deleted, a 404) whose role reads pairs (else a 403)."""
    pair = (
        with_names(PreferencePair.objects.select_related("transcript__dataset"))
        .filter(transcript__in=Transcript.objects.for_user(user), pk=pk)
        .first()
    )
    if pair is None:
        raise Http404(f"No preference pair {pk} among yours.")
    require_pairs_reader(pair.transcript.dataset, user)
    return pair


def _in_visible_dataset(rows, user, pk: int, what: str):
    """Row ``pk`` of ``rows`` if it belongs to a dataset ``user`` may see."""
    found = rows.filter(dataset__in=Dataset.objects.for_user(user), pk=pk).first()
    if found is None:
        raise Http404(f"No {what} {pk} among yours.")
    return found


def visible_export_task(user, pk: int) -> ExportTask:
    """A prepared export of a dataset ``user`` may see (whether their role may read it too is
    ``editor.exporting.tasks.check_may_see``'s)."""
    task = _in_visible_dataset(
        ExportTask.objects.select_related("dataset", "created_by"), user, pk, "export"
    )
    return current(task)


def visible_bulk_task(user, pk: int) -> BulkTask:
    return current(
        _in_visible_dataset(BulkTask.objects.select_related("dataset"), user, pk, "bulk action")
    )


def visible_queue(user, pk: int) -> ReviewQueue:
    return _in_visible_dataset(ReviewQueue.objects.select_related("dataset"), user, pk, "queue")


def visible_judge_run(user, pk: int) -> JudgeRun:
    """A judge run of a dataset ``user`` may see, as it stands (a dead worker's recovered)."""
    rows = JudgeRun.objects.select_related("dataset", "judge__schema", "judge__connection")
    return current(_in_visible_dataset(rows, user, pk, "judge run"))


def visible_suggestion(user, pk: int) -> Suggestion:
    """A model's suggestion about a live transcript ``user`` may see, if their role reads the
    model's answers (those that see hidden parts: the judge read them)."""
    found = (
        Suggestion.objects.select_related("transcript__dataset", "schema_version")
        .filter(
            pk=pk,
            transcript__deleted_at__isnull=True,
            transcript__dataset__in=Dataset.objects.for_user(user),
        )
        .first()
    )
    if found is None:
        raise Http404(f"No suggestion {pk} among yours.")
    if not found.transcript.dataset.sees_hidden(user):
        raise NotAllowed("Your role sees what the end user sees only: not the model's answers.")
    return found
