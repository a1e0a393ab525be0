"""Preference pairs: recorded from edits, listed, excluded one by one, derived from pairwise
answers, and read out for export (docs/preference.md).

* ``pairs_of_edit`` (pure) says which assistant messages an edit changed; ``record_edit_pairs``
  stores one ``PreferencePair`` each and, for a turn that has alternatives, keeps the turn
  before and after the edit among them (``keep_edited_turns``). The write path
  (``editor.storage.save._write``) calls it on every change of content, so it sits below
  storage, beside ``editor.labels`` (whose ``follow_edit`` is called from the same place for
  the same reason) and ``editor.turns``.
* ``pairs_of_transcript`` / ``pairs_of_dataset`` list the stored pairs;
  ``exclude_pair`` / ``include_pair`` take one out of exports and back (a curator, or the
  pair's own author).
* ``pairwise_pairs`` derives pairs from submitted pairwise answers (never stored);
  ``export_rows`` streams every kind as ``PairRow``s with their provenance and what was
  left out, the interface the preference-data exports build on.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from django.db.models import F, QuerySet
from django.utils import timezone

from editor import formats
from editor.errors import InvalidContent, NotAllowed
from editor.formats.canonical import message_dict
from editor.formats.model import SEMANTIC_FIELDS
from editor.formats.tools.schemas import DECLARING_ROLES, FUNCTIONS_PREFIX, collect
from editor.models import (
    Alternative,
    AlternativeSource,
    Annotation,
    Dataset,
    LabelSchemaVersion,
    PairSource,
    PreferencePair,
    Revision,
    RevisionKind,
    Transcript,
)
from editor.turns import keep_alternative, turn_messages, turn_start_of

ASSISTANT = "assistant"
PAIRWISE_KIND = "pairwise"
TIE = "tie"
SUBMITTED = "submitted"
EDIT, IMPORT, PAIRWISE = "edit", "import", "pairwise"
SOURCES = (EDIT, IMPORT, PAIRWISE)
# Which saves are corrections: a message edit, raw mode, a quick fix, a merged edit (all
# RevisionKind.EDIT). A restore puts an older state back (not a judgement that it is better);
# an import writes someone else's data; neither records pairs.
RECORDED_KINDS = frozenset({RevisionKind.EDIT})
CHUNK_SIZE = 500


# --- which messages an edit changed ----------------------------------------------------------


@dataclass(frozen=True)
class EditPair:
    """One assistant message an edit changed: its index before the edit, the messages before
    it as they were (``prompt``), the message before (``rejected``) and after (``chosen``),
    and its index after the edit (``chosen_index``; the same unless messages before it were
    inserted or deleted in the same save)."""

    index: int
    prompt: list[formats.Message]
    rejected: formats.Message
    chosen: formats.Message
    chosen_index: int


def pairs_of_edit(
    before: Sequence[formats.Message], after: Sequence[formats.Message]
) -> list[EditPair]:
    """The assistant messages changed from ``before`` to ``after`` (any semantic field).

    Aligned like the history's comparison (``editor.revisions``): equal messages anchor the
    alignment, and the messages of a replaced stretch are paired in order; a paired message
    is changed. Inserted, deleted and moved messages are not edits; neither is a message
    whose role was changed or that is not the assistant's. Only the stretch between the
    common beginning and end is compared, so editing one message of 2,000 compares one.
    """
    start = 0
    shortest = min(len(before), len(after))
    while start < shortest and _same(before[start], after[start]):
        start += 1
    old_end, new_end = len(before), len(after)
    while old_end > start and new_end > start and _same(before[old_end - 1], after[new_end - 1]):
        old_end -= 1
        new_end -= 1
    if old_end == start or new_end == start:
        return []  # only insertions or only deletions
    old_prints = [_print(m) for m in before[start:old_end]]
    new_prints = [_print(m) for m in after[start:new_end]]
    matcher = difflib.SequenceMatcher(None, old_prints, new_prints, autojunk=False)
    candidates: list[tuple[int, int]] = []
    unmatched_old: set[tuple] = set()
    unmatched_new: set[tuple] = set()
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        unmatched_old.update(old_prints[a0:a1])
        unmatched_new.update(new_prints[b0:b1])
        candidates.extend((a0 + k, b0 + k) for k in range(min(a1 - a0, b1 - b0)))
    pairs = []
    for a, b in candidates:
        old, new = before[start + a], after[start + b]
        if old.role != ASSISTANT or new.role != ASSISTANT or old_prints[a] == new_prints[b]:
            continue
        # The old message is still there elsewhere, or the new one was there before: a move
        # shifted the alignment, not an edit.
        if old_prints[a] in unmatched_new or new_prints[b] in unmatched_old:
            continue
        index = start + a
        pairs.append(EditPair(index, list(before[:index]), old, new, start + b))
    return pairs


def _print(message: formats.Message) -> tuple:
    """The message's fingerprint, no content and empty content alike (stored rows give back
    an absent content as "": not an edit)."""
    found = message.fingerprint()
    return found if found[1] is not None else (found[0], "", *found[2:])


def _same(a: formats.Message, b: formats.Message) -> bool:
    return a == b or _print(a) == _print(b)


def record_edit_pairs(
    transcript: Transcript,
    before: Sequence[formats.Message],
    after: Sequence[formats.Message],
    revision: Revision,
    author,
    *,
    respec: bool = False,
) -> list[PreferencePair]:
    """Store a pair for each assistant message the save that wrote ``revision`` changed.

    Called by the write path inside the save's transaction. Only corrections record pairs
    (``RECORDED_KINDS``); a save that rewrites the transcript in another spec (``respec``)
    records none, since the messages before and after are not written in the same terms.
    The same corrections keep their turns among the turns' alternatives (``keep_edited_turns``).
    """
    if revision.kind not in RECORDED_KINDS or respec:
        return []
    found = pairs_of_edit(before, after)
    if not found:
        return []
    keep_edited_turns(transcript, before, after, found, author)
    spec = transcript.spec
    rows = [
        PreferencePair(
            transcript=transcript,
            message_index=pair.index,
            source=PairSource.EDIT,
            prompt=[message_dict(m, spec) for m in pair.prompt],
            chosen=[message_dict(pair.chosen, spec)],
            rejected=[message_dict(pair.rejected, spec)],
            revision=revision,
            author=author,
        )
        for pair in found
    ]
    return PreferencePair.objects.bulk_create(rows)


def keep_edited_turns(
    transcript: Transcript,
    before: Sequence[formats.Message],
    after: Sequence[formats.Message],
    edited: Sequence[EditPair],
    author,
) -> list[Alternative]:
    """Keep the turns an edit corrected among their alternatives, when they have some.

    A turn compared in pairwise items (it has alternatives) keeps the answer as it was before
    the edit and the corrected one: the original and the correction become two completions
    a pairwise question can set side by side, like the pair the edit recorded. Each content
    is kept once per turn (``content_hash``): saving the same answer again, or going back to
    an earlier one, adds nothing. A turn with no alternatives gets none (its correction is
    the recorded pair), nor does one whose start moved in the same save (the alternatives
    are keyed by the turn's first index, which no longer names the same turn).
    """
    # Each edited turn's first index before the edit, and after it (both messages of a pair
    # are the assistant's, so each is in a turn).
    starts = {}
    for pair in edited:
        starts.setdefault(
            turn_start_of(before, pair.index), turn_start_of(after, pair.chosen_index)
        )
    compared = set(
        Alternative.objects.filter(
            transcript=transcript, message_index__in=list(starts)
        ).values_list("message_index", flat=True)
    )
    kept = []
    for start in sorted(compared):
        kept.append(
            keep_alternative(
                transcript,
                start,
                turn_messages(before, start),
                AlternativeSource.TRANSCRIPT,
                author,
                note="the turn before an edit",
            )
        )
        if starts[start] == start:
            kept.append(
                keep_alternative(
                    transcript,
                    start,
                    turn_messages(after, start),
                    AlternativeSource.TRANSCRIPT,
                    author,
                    note="the turn as an edit corrected it",
                )
            )
    return kept


# --- listing and exclusion -------------------------------------------------------------------


@dataclass(frozen=True)
class PairFilter:
    """Which stored pairs a dataset's list shows: by source (``edit`` / ``import``; None:
    both) and by whether they are excluded (None: both)."""

    source: str | None = None
    excluded: bool | None = None

    def __post_init__(self) -> None:
        if self.source is not None and self.source not in PairSource.values:
            raise InvalidContent(
                f"Not a source of stored pairs: {self.source!r} (one of "
                f"{', '.join(PairSource.values)}; pairs from pairwise answers are derived "
                "when exported).",
                code="invalid-filter",
                details={"source": self.source, "allowed": list(PairSource.values)},
            )


def with_names(pairs: QuerySet) -> QuerySet:
    """``pairs`` with their authors and, as ``revision_number`` and ``transcript_title``, what
    a list shows of their revision and transcript, in the same query: never a revision's
    snapshot nor a transcript's text (both can be megabytes)."""
    return pairs.select_related("author", "excluded_by").annotate(
        revision_number=F("revision__number"), transcript_title=F("transcript__title")
    )


def _listed(pairs: QuerySet) -> QuerySet:
    return with_names(pairs).order_by("-created_at", "-pk")


def pairs_of_transcript(transcript: Transcript) -> QuerySet:
    """The transcript's stored pairs, newest first, with their authors."""
    return _listed(PreferencePair.objects.filter(transcript=transcript))


def pairs_of_dataset(dataset: Dataset, filters: PairFilter | None = None) -> QuerySet:
    """The stored pairs of the dataset's transcripts (deleted ones' left out), newest first;
    the caller pages them."""
    filters = filters or PairFilter()
    pairs = PreferencePair.objects.filter(
        transcript__dataset=dataset, transcript__deleted_at__isnull=True
    )
    if filters.source is not None:
        pairs = pairs.filter(source=filters.source)
    if filters.excluded is not None:
        pairs = pairs.filter(excluded_at__isnull=not filters.excluded)
    return _listed(pairs)


def excluder(dataset: Dataset, user) -> Callable[[PreferencePair], bool]:
    """Whether ``user`` may exclude (and include) each pair of ``dataset``: a curator any, the
    pair's own author theirs (while still a member who edits: a viewer changes nothing). The
    role is read once, for a whole list."""
    curates, edits = dataset.can_curate(user), dataset.can_edit(user)

    def may(pair: PreferencePair) -> bool:
        return curates or (edits and pair.author_id is not None and pair.author_id == user.pk)

    return may


def may_exclude(pair: PreferencePair, user) -> bool:
    return excluder(pair.transcript.dataset, user)(pair)


def exclude_pair(pair: PreferencePair, user) -> PreferencePair:
    """Leave the pair out of exports, saying who and when (excluding twice keeps the first)."""
    _require_excluder(pair, user)
    if pair.excluded_at is None:
        pair.excluded_at = timezone.now()
        pair.excluded_by = user
        pair.save(update_fields=["excluded_at", "excluded_by"])
    return pair


def include_pair(pair: PreferencePair, user) -> PreferencePair:
    """Take an excluded pair back into exports."""
    _require_excluder(pair, user)
    if pair.excluded_at is not None:
        pair.excluded_at = None
        pair.excluded_by = None
        pair.save(update_fields=["excluded_at", "excluded_by"])
    return pair


def _require_excluder(pair: PreferencePair, user) -> None:
    if not may_exclude(pair, user):
        raise NotAllowed("Only a curator or the pair's own author may exclude or include it.")


@dataclass(frozen=True)
class PairDifference:
    """What tells a pair's chosen message from its rejected one, for showing it: the fields
    that differ (name, rejected's value, chosen's value) and a unified diff of the content."""

    fields: list[tuple[str, Any, Any]]
    content_diff: str


def difference(pair: PreferencePair) -> PairDifference:
    """The difference between the first messages of ``pair.rejected`` and ``pair.chosen``
    (an edit pair holds one each)."""
    old = pair.rejected[0] if pair.rejected else {}
    new = pair.chosen[0] if pair.chosen else {}
    fields = [
        (name, old.get(name), new.get(name))
        for name in SEMANTIC_FIELDS
        if name != "content" and old.get(name) != new.get(name)
    ]
    before, after = str(old.get("content") or ""), str(new.get("content") or "")
    content_diff = ""
    if before != after:
        content_diff = "\n".join(
            difflib.unified_diff(
                before.splitlines(),
                after.splitlines(),
                fromfile="rejected",
                tofile="chosen",
                lineterm="",
            )
        )
    return PairDifference(fields, content_diff)


# --- pairs from pairwise answers ---------------------------------------------------------------


@dataclass(frozen=True)
class PairwisePair:
    """One (winner, loser) of a pairwise item: the turn at ``message_index`` of a transcript,
    asked by question ``question`` (``"schema id:key"``)."""

    transcript_id: int
    message_index: int
    question: str
    chosen: Alternative
    rejected: Alternative
    votes: dict[str, int]
    annotators: list[str]


@dataclass
class PairwiseOutcome:
    """The pairs a set of pairwise items gives, and how many items gave none, by why."""

    pairs: list[PairwisePair] = field(default_factory=list)
    tie: int = 0
    no_majority: int = 0
    missing_alternative: int = 0


def pairwise_questions(dataset: Dataset) -> dict[int, set[str]]:
    """The pairwise questions of the dataset's schemas: version pk -> question keys. Read
    from the stored questions, so this needs no more of the kind than its name."""
    found: dict[int, set[str]] = {}
    versions = LabelSchemaVersion.objects.filter(schema__dataset=dataset).values_list(
        "pk", "questions"
    )
    for pk, questions in versions:
        keys = {
            q.get("key")
            for q in questions or []
            if isinstance(q, dict) and q.get("kind") == PAIRWISE_KIND
        }
        if keys:
            found[pk] = keys
    return found


def winner_of(choices: Iterable[Any]) -> tuple[Any | None, str | None]:
    """The majority choice of an item's submitted answers: ``(winner, None)``, or
    ``(None, "tie")`` when every answer is a tie, ``(None, "no_majority")`` when no
    alternative has more than half of the answers that are not ties."""
    votes = Counter(choice for choice in choices if choice != TIE)
    total = sum(votes.values())
    if not total:
        return None, "tie"
    winner, count = votes.most_common(1)[0]
    if count * 2 <= total:
        return None, "no_majority"
    return winner, None


def pairwise_pairs(
    dataset: Dataset, transcripts: Iterable[int] | None = None
) -> Iterator[PairwisePair | str]:
    """Derive pairs from the submitted pairwise answers of the dataset's transcripts (or of
    ``transcripts``, ids): yields each ``PairwisePair``, and for each item that gives none
    the reason (``"tie"``, ``"no_majority"``, ``"missing_alternative"``). Streams: one
    transcript's answers and alternatives at a time."""
    questions = pairwise_questions(dataset)
    if not questions:
        return
    answers = Annotation.objects.filter(
        transcript__dataset=dataset,
        transcript__deleted_at__isnull=True,
        schema_version_id__in=list(questions),
        state=SUBMITTED,
        message_index__isnull=False,
    )
    if transcripts is not None:
        answers = answers.filter(transcript_id__in=transcripts)
    rows = (
        answers.order_by("transcript_id", "message_index", "pk")
        .values_list(
            "transcript_id",
            "message_index",
            "schema_version_id",
            "schema_version__schema_id",
            "question",
            "value",
            "annotator__username",
        )
        .iterator(chunk_size=CHUNK_SIZE)
    )
    for transcript_id, of_transcript in groupby(rows, key=lambda row: row[0]):
        items: dict[tuple[int, str], list[tuple[dict, str]]] = {}
        for _, index, version, schema, key, value, who in of_transcript:
            if key in questions[version] and isinstance(value, dict):
                items.setdefault((index, f"{schema}:{key}"), []).append((value, who))
        if not items:
            continue
        alternatives = {
            alt.pk: alt for alt in Alternative.objects.filter(transcript_id=transcript_id)
        }
        for (index, question), given in items.items():
            yield from _pairs_of_item(transcript_id, index, question, given, alternatives)


def _pairs_of_item(
    transcript_id: int,
    index: int,
    question: str,
    given: list[tuple[dict, str]],
    alternatives: dict[int, Alternative],
) -> Iterator[PairwisePair | str]:
    choices = [_as_id(value.get("choice")) for value, _ in given]
    winner, reason = winner_of(choices)
    if reason is not None:
        yield reason
        return
    shown: list[int] = []
    for value, _ in given:
        for alt in value.get("order") or []:
            alt = _as_id(alt)
            if alt not in shown:
                shown.append(alt)
    losers = sorted(alt for alt in shown if alt != winner and isinstance(alt, int))
    if winner not in alternatives or not losers or any(a not in alternatives for a in losers):
        yield "missing_alternative"
        return
    votes = Counter(str(choice) for choice in choices)
    annotators = sorted({who for _, who in given})
    for loser in losers:
        yield PairwisePair(
            transcript_id,
            index,
            question,
            alternatives[winner],
            alternatives[loser],
            dict(votes),
            annotators,
        )


def _as_id(value: Any) -> Any:
    """An alternative id as given (an int, or its digits as a string), or the value as is."""
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value


# --- export rows -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairRow:
    """One exported pair: message lists in the canonical dict form (in ``provenance["spec"]``),
    the tools the prompt declares (OpenAI's ``tools`` shape; None when it declares none) and
    where the pair comes from."""

    prompt: list[dict]
    chosen: list[dict]
    rejected: list[dict]
    tools: list[dict] | None
    provenance: dict


class PairExport:
    """The rows of a dataset's preference pairs, streamed: iterate it once; ``left_out``
    (what was not written, by why) is complete when the iteration ends."""

    def __init__(
        self,
        dataset: Dataset,
        *,
        sources: Iterable[str] = SOURCES,
        transcripts: Iterable[int] | QuerySet | None = None,
        chunk_size: int = CHUNK_SIZE,
    ) -> None:
        self.sources = frozenset(sources)
        unknown = sorted(self.sources - set(SOURCES))
        if unknown:
            raise InvalidContent(
                f"Not a source of pairs: {', '.join(unknown)} (one of {', '.join(SOURCES)}).",
                code="invalid-source",
                details={"sources": unknown, "allowed": list(SOURCES)},
            )
        self.dataset = dataset
        self.transcripts = transcripts
        self.chunk_size = chunk_size
        self.count = 0
        self.left_out = {"excluded": 0, "tie": 0, "no_majority": 0, "missing_alternative": 0}

    def __iter__(self) -> Iterator[PairRow]:
        stored = self.sources & {EDIT, IMPORT}
        if stored:
            yield from self._stored(sorted(stored))
        if PAIRWISE in self.sources:
            yield from self._pairwise()

    def _in_scope(self, rows: QuerySet, prefix: str = "transcript__") -> QuerySet:
        rows = rows.filter(
            **{f"{prefix}dataset": self.dataset, f"{prefix}deleted_at__isnull": True}
        )
        if self.transcripts is not None:
            rows = rows.filter(**{f"{prefix}pk__in": self.transcripts})
        return rows

    def _stored(self, sources: list[str]) -> Iterator[PairRow]:
        pairs = self._in_scope(PreferencePair.objects.filter(source__in=sources))
        self.left_out["excluded"] += pairs.filter(excluded_at__isnull=False).count()
        rows = (
            pairs.included()
            .annotate(revision_number=F("revision__number"), author_name=F("author__username"))
            .order_by("transcript_id", "created_at", "pk")
            .iterator(chunk_size=self.chunk_size)
        )
        tools = _ToolsOfPrompt()
        transcript: Transcript | None = None
        for pair in rows:
            if transcript is None or transcript.pk != pair.transcript_id:
                transcript = _header_of(pair.transcript_id)
            self.count += 1
            yield PairRow(
                prompt=pair.prompt,
                chosen=pair.chosen,
                rejected=pair.rejected,
                tools=tools.of(transcript, pair.prompt),
                provenance={
                    "source": pair.source,
                    "spec": transcript.spec,
                    "transcript": transcript.pk,
                    "external_id": transcript.external_id or None,
                    "message_index": pair.message_index,
                    "revision": pair.revision_number,
                    "author": pair.author_name,
                    "pair": pair.pk,
                    "created_at": pair.created_at.isoformat(),
                },
            )

    def _pairwise(self) -> Iterator[PairRow]:
        ids = None
        if self.transcripts is not None:
            ids = self._in_scope(Transcript.objects.all(), prefix="").values("pk")
        tools = _ToolsOfPrompt()
        current: Transcript | None = None
        canonical: formats.Transcript | None = None
        for found in pairwise_pairs(self.dataset, ids):
            if isinstance(found, str):
                self.left_out[found] += 1
                continue
            if current is None or current.pk != found.transcript_id:
                current = _header_of(found.transcript_id)
                canonical = current.canonical()
            prompt = [
                message_dict(m, current.spec) for m in canonical.messages[: found.message_index]
            ]
            self.count += 1
            yield PairRow(
                prompt=prompt,
                chosen=found.chosen.messages,
                rejected=found.rejected.messages,
                tools=tools.of(current, prompt),
                provenance={
                    "source": PAIRWISE,
                    "spec": current.spec,
                    "transcript": current.pk,
                    "external_id": current.external_id or None,
                    "message_index": found.message_index,
                    "revision": None,
                    "annotators": found.annotators,
                    "votes": found.votes,
                    "question": found.question,
                    "chosen_alternative": found.chosen.pk,
                    "rejected_alternative": found.rejected.pk,
                    "pair": None,
                    "created_at": None,
                },
            )


def export_rows(
    dataset: Dataset,
    *,
    sources: Iterable[str] = SOURCES,
    transcripts: Iterable[int] | QuerySet | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> PairExport:
    """The dataset's pairs as ``PairRow``s (``sources``: any of ``edit``, ``import``,
    ``pairwise``; ``transcripts``: only those, ids or a queryset), streamed in constant
    memory. Excluded pairs, ties and items without a majority are left out and counted in
    the export's ``left_out``."""
    return PairExport(dataset, sources=sources, transcripts=transcripts, chunk_size=chunk_size)


def _header_of(pk: int) -> Transcript:
    """A transcript without its source text and diagnostics (what a row needs: its spec,
    header, attrs and external id; ``canonical()`` reads the message rows)."""
    return Transcript.objects.only("pk", "spec", "header", "attrs", "external_id").get(pk=pk)


class _ToolsOfPrompt:
    """The tools a prompt declares (the transcript's document-level ``tools`` and its
    developer and system messages), in OpenAI's ``tools`` shape; the last answer is kept,
    since consecutive pairs of a transcript mostly share their declarations."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._tools: list[dict] | None = None

    def of(self, transcript: Transcript, prompt: list[dict]) -> list[dict] | None:
        declaring = [m for m in prompt if m.get("role") in DECLARING_ROLES]
        key = (transcript.pk, transcript.spec, tuple(m.get("content") for m in declaring))
        if key != self._key:
            self._key = key
            self._tools = tools_of(
                formats.Transcript(
                    spec=transcript.spec,
                    header=transcript.header,
                    messages=[formats.Message.from_dict(m) for m in declaring],
                    attrs=transcript.attrs,
                )
            )
        return self._tools


def tools_of(transcript: formats.Transcript) -> list[dict] | None:
    """The tools ``transcript`` declares as OpenAI ``tools`` entries, or None."""
    declared = collect(transcript)
    if not declared:
        return None
    tools = []
    for schema in declared.values():
        function: dict[str, Any] = {"name": schema.key.removeprefix(FUNCTIONS_PREFIX)}
        if schema.description:
            function["description"] = schema.description
        function["parameters"] = schema.parameters
        tools.append({"type": "function", "function": function})
    return tools
