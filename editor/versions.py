"""Dataset versions: a dataset, or a filter of it, frozen under a name (docs/api.md,
"Dataset versions").

A version holds no text: ``members`` = ``[[transcript id, version, status], …]`` in id
order. A transcript's version names its content for ever: while the transcript is still at
it, its own row holds it; once it moves on, the revision of that number holds the copy
(``editor.storage.save._write`` stores it before writing anything else, for every write:
edits, transitions, imports over it, deletes). The status is kept beside the version because
revisions record content, title and metadata, not the status. So creating a version of
100,000 transcripts is one query and one compressed row (bench/bench_versions.py), and
``export_version`` gives the same bytes for ever: after edits, imports and deletes (a deleted
transcript's rows stay, soft-deleted); only deleting the dataset for good takes its versions
with it.

``content_hash``: SHA-256 over the members, ``"id:version:status\\n"`` each, in id order —
within this database, the same hash means the same transcripts at the same states.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.urls import reverse

from editor import formats, webhooks
from editor.errors import InvalidContent, NotAllowed, VersionNameTaken, VersionNotFound
from editor.exporting import CHUNK_SIZE, MESSAGES_SPEC, DatasetExport, Format
from editor.listing import TranscriptList
from editor.listing.filters import TranscriptFilterForm
from editor.models import Dataset, DatasetVersion, Revision, Transcript

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise InvalidContent(
            "A version's name: 1 to 100 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit (it goes in URLs).",
            code="invalid-version-name",
        )
    return name


def versions_of(dataset: Dataset):
    """Newest first, without their members."""
    return dataset.versions.defer("members").select_related("created_by").order_by("-created_at")


def version_of(dataset: Dataset, name: str) -> DatasetVersion:
    version = dataset.versions.filter(name=name).first() if isinstance(name, str) else None
    if version is None:
        raise VersionNotFound(f"No version {name!r} of this dataset.")
    return version


def _selection(dataset: Dataset, author, filters: dict | None):
    """The live transcripts the filters select (all of them without filters), as the dataset
    page selects them for ``author`` (``TranscriptList``)."""
    if not filters:
        return Transcript.objects.filter(dataset=dataset)
    form = TranscriptFilterForm(filters, dataset=dataset)
    if not form.is_valid():
        raise InvalidContent(
            f"Invalid filter: {form.errors.as_text()}", code="invalid-filter", details=form.errors
        )
    wanted = TranscriptList.of(dataset, author, form.to_filter()).wanted
    return Transcript.objects.filter(dataset=dataset).matching(wanted)


def members_hash(members: list) -> str:
    digest = hashlib.sha256()
    for pk, number, status in members:
        digest.update(f"{pk}:{number}:{status}\n".encode())
    return digest.hexdigest()


def create_version(
    dataset: Dataset, name: str, *, filters: dict | None = None, author, description: str = ""
) -> DatasetVersion:
    """Freeze the live transcripts of ``dataset`` (those ``filters`` select: the dataset
    page's query parameters) as version ``name``; curators. One query reads the members."""
    if not dataset.can_curate(author):
        raise NotAllowed("Only curators create versions of the dataset.")
    check_name(name)
    if len(description) > 2000:
        raise InvalidContent("The description is longer than 2000 characters.")
    filters = {key: value for key, value in (filters or {}).items() if value not in ("", [], None)}
    rows = _selection(dataset, author, filters)
    try:
        with transaction.atomic():
            if dataset.versions.filter(name=name).exists():
                raise VersionNameTaken(f"The dataset has a version {name!r} already.")
            members = [list(m) for m in rows.order_by("pk").values_list("pk", "version", "status")]
            version = DatasetVersion.objects.create(
                dataset=dataset,
                name=name,
                description=description,
                filters=filters,
                members=members,
                transcript_count=len(members),
                content_hash=members_hash(members),
                created_by=author,
            )
            webhooks.emit(
                dataset,
                webhooks.events.DATASET_VERSION_CREATED,
                {
                    "version": name,
                    "transcripts": len(members),
                    "content_hash": version.content_hash,
                },
            )
    except IntegrityError:  # created meanwhile under the same name
        raise VersionNameTaken(f"The dataset has a version {name!r} already.") from None
    return version


# --- export ---------------------------------------------------------------------------------


class VersionExport(DatasetExport):
    """The dataset export's lines (``editor.exporting.DatasetExport``) for a version's members,
    each at its version: the row while the transcript is still there, else the revision."""

    def __init__(self, version: DatasetVersion, *, spec, format, chunk_size: int = CHUNK_SIZE):
        super().__init__(
            Transcript.all_objects.none(),
            spec=spec,
            format=format,
            audience=None,
            chunk_size=chunk_size,
        )
        self.version = version

    def __iter__(self) -> Iterator[str]:
        spec = MESSAGES_SPEC if self.format == Format.MESSAGES else self.spec
        yield from self._lines(self.states(), spec, text_only=True)

    def states(self) -> Iterator[Transcript]:
        """Each member as it was, a ``Transcript`` whose ``canonical()`` is that state's."""
        for chunk in batched(self.version.members, self.chunk_size):
            rows = Transcript.all_objects.defer("diagnostics").in_bulk([m[0] for m in chunk])
            moved = [(pk, number) for pk, number, _ in chunk if rows[pk].version != number]
            revisions = _revisions(moved)
            for pk, number, status in chunk:
                row = rows[pk]
                if row.version == number:
                    row.status = status
                    row.canonical = _checked_canonical(row, number)
                    yield row
                else:
                    yield _as_of(row, revisions[(pk, number)], status)


def batched(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _revisions(wanted: list[tuple[int, int]]) -> dict[tuple[int, int], Revision]:
    if not wanted:
        return {}
    match = Q()
    for pk, number in wanted:
        match |= Q(transcript_id=pk, number=number)
    return {(r.transcript_id, r.number): r for r in Revision.objects.filter(match)}


def _checked_canonical(row: Transcript, number: int):
    """The row's canonical transcript, read from its messages; if a save moved it on
    meanwhile, the revision's copy instead (the save stored it first)."""
    read = Transcript.canonical.__get__(row)

    def load() -> formats.Transcript:
        canonical = read()
        if Transcript.all_objects.filter(pk=row.pk, version=number).exists():
            return canonical
        revision = Revision.objects.get(transcript_id=row.pk, number=number)
        return revision.canonical()

    return load


def _as_of(row: Transcript, revision: Revision, status: str) -> Transcript:
    """The transcript as revision ``revision`` saved it (not saved: only exported)."""
    stored = revision.snapshot
    if stored.get("current"):  # the row moved on after its read: the copy is stored now
        revision.refresh_from_db(fields=["snapshot"])
        stored = revision.snapshot
    exact = "transcript" not in stored
    state = Transcript(
        pk=row.pk,
        dataset_id=row.dataset_id,
        external_id=row.external_id,
        title=stored["title"],
        metadata=stored["metadata"],
        spec=stored["spec"] if exact else stored["transcript"]["spec"],
        source_text=stored["source_text"],
        source_is_exact=exact,
        status=status,
        version=revision.number,
    )
    state.canonical = revision.canonical
    return state


def export_version(
    version: DatasetVersion, *, spec: str | None = None, format: Format | str = Format.JSONL
) -> VersionExport:
    """The version's lines, as ``export_dataset`` writes them (``jsonl`` or ``messages``);
    the same bytes every time."""
    if spec is not None and not formats.is_spec(spec):
        raise InvalidContent(
            f"Unknown spec id {spec!r}; expected one of: {', '.join(formats.spec_ids())}.",
            code="unknown-spec",
        )
    if format not in (Format.JSONL, Format.MESSAGES):
        raise InvalidContent(
            "A version exports its transcripts: format jsonl or messages.",
            code="invalid-request",
        )
    return VersionExport(version, spec=spec, format=Format(format))


# --- comparing ------------------------------------------------------------------------------


@dataclass
class ChangedMember:
    id: int
    from_version: int
    to_version: int
    from_status: str
    to_status: str

    @property
    def history_url(self) -> str:
        """The per-message diff of the two states, on the transcript's history page."""
        path = reverse("transcript-history", args=[self.id])
        return f"{path}?from={self.from_version}&to={self.to_version}"


@dataclass
class VersionDiff:
    old: DatasetVersion
    new: DatasetVersion
    added: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    changed: list[ChangedMember] = field(default_factory=list)
    unchanged: int = 0

    def to_dict(self) -> dict:
        return {
            "from_name": self.old.name,
            "to_name": self.new.name,
            "added": self.added,
            "removed": self.removed,
            "changed": [
                {
                    "id": c.id,
                    "from_version": c.from_version,
                    "to_version": c.to_version,
                    "from_status": c.from_status,
                    "to_status": c.to_status,
                    "history_url": c.history_url,
                }
                for c in self.changed
            ],
            "unchanged": self.unchanged,
        }


def diff_versions(old: DatasetVersion, new: DatasetVersion) -> VersionDiff:
    """Transcripts added, removed and changed (another version: content, title, metadata or
    status) from ``old`` to ``new``, in id order."""
    before = {pk: (number, status) for pk, number, status in old.members}
    after = {pk: (number, status) for pk, number, status in new.members}
    diff = VersionDiff(old, new)
    diff.added = [pk for pk in after if pk not in before]
    diff.removed = [pk for pk in before if pk not in after]
    for pk, (number, status) in after.items():
        if pk not in before:
            continue
        was_number, was_status = before[pk]
        if (was_number, was_status) == (number, status):
            diff.unchanged += 1
        else:
            diff.changed.append(ChangedMember(pk, was_number, number, was_status, status))
    return diff
