"""The editor's operations: one set of domain functions behind the HTML editor and the API.

Every write takes the transcript, the version the caller saw, the author and a note; it goes
through ``editor.storage.save.save_transcript`` (compare-and-swap on the version, exactly one
revision, only the edited messages' bytes change in the source text) and returns an
``EditResult``: the saved transcript, its new version and its fresh diagnostics.

A message edit from a stale version is merged when it can be (``merge_messages``: a
three-way merge per message of the version the caller saw, the stored one and the edit) and
saved on top, still version-checked, as one revision that says so; the result's
``merged_with`` names the revision it went on top of. When both changed the same message, or
either side inserted or deleted messages, it raises ``editor.errors.ConflictError`` (HTTP
409), as every other stale save does.

Drafts are validated without saving (``validate_message_draft``, ``validate_source_draft``):
the live-validation path of the editor, which must answer fast on long transcripts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from editor import formats, webhooks, workflow
from editor.errors import ConflictError, FixNotFound, HasErrors, InvalidContent, MessageNotFound
from editor.formats.convert import convert
from editor.formats.model import HEADER_FIELDS, SEMANTIC_FIELDS
from editor.models import HistoryBroken, Revision, Status, Transcript
from editor.storage.content import TranscriptContent, apply_edits, messages_from_input
from editor.storage.save import refusal, save_transcript

# The fields of a message an edit may set; anything else in a change is refused by name.
EDITABLE_FIELDS = frozenset(SEMANTIC_FIELDS)
NEW_MESSAGE = {"role": "user", "content": ""}
# Where a live diagnostic of the edited message is when it is in none of its fields.
MARKUP = "the message's markup"
# The text fields a diagnostic may point into besides the content (``_field_position``).
MESSAGE_HEADER_FIELDS = ("role", *HEADER_FIELDS)


@dataclass
class EditResult:
    transcript: Transcript
    losses: list[dict] = field(default_factory=list)
    # The revision a stale edit was merged on top of (``merge_messages``), else None.
    merged_with: Revision | None = None

    @property
    def merge_note(self) -> str:
        """ "merged with r12 by alice", or "" when the edit was not merged."""
        if self.merged_with is None:
            return ""
        author = self.merged_with.author
        return f"merged with r{self.merged_with.number}" + (
            f" by {author.get_username()}" if author is not None else ""
        )

    @property
    def version(self) -> int:
        return self.transcript.version

    @property
    def diagnostics(self) -> list[dict]:
        return self.transcript.diagnostics

    def to_dict(self) -> dict:
        return {
            "id": self.transcript.pk,
            "version": self.version,
            "status": self.transcript.status,
            "message_count": self.transcript.message_count,
            "diagnostics": self.diagnostics,
            "error_count": self.transcript.error_count,
            "warning_count": self.transcript.warning_count,
            "losses": self.losses,
            "merged_with": self.merged_with.number if self.merged_with is not None else None,
        }


# --- message operations ----------------------------------------------------------------------


def edit_message(
    transcript: Transcript,
    index: int,
    changes: Mapping[str, Any],
    *,
    expected_version: int,
    author,
    note: str = "",
) -> EditResult:
    """Set some canonical fields of message ``index`` (the others stay as they are)."""
    unknown = sorted(set(changes) - EDITABLE_FIELDS)
    if unknown:
        raise InvalidContent(f"Not a message field: {', '.join(unknown)}.", code="invalid-message")

    def change(messages: list[formats.Message]) -> None:
        check_index(messages, index)
        edited = {**messages[index].to_dict(), **changes}
        if "end" not in edited:  # to_dict omits a None terminator: keep it None (truncated)
            edited["end"] = None
        messages[index] = _one_message(edited, index)

    return _save(transcript, change, expected_version, author, note or f"edited message {index}")


def insert_message(
    transcript: Transcript,
    after: int | None,
    message: Mapping[str, Any] | None = None,
    *,
    expected_version: int,
    author,
    note: str = "",
) -> EditResult:
    """Insert ``message`` after message ``after`` (``None``: at the start)."""
    position = 0 if after is None else after + 1
    new = dict(NEW_MESSAGE if message is None else message)
    new.setdefault("end", formats.END)

    def change(messages: list[formats.Message]) -> None:
        if after is not None:
            check_index(messages, after)
        messages.insert(position, _one_message(new, position))

    return _save(
        transcript, change, expected_version, author, note or f"inserted message {position}"
    )


def delete_message(
    transcript: Transcript, index: int, *, expected_version: int, author, note: str = ""
) -> EditResult:
    def change(messages: list[formats.Message]) -> None:
        check_index(messages, index)
        del messages[index]

    return _save(transcript, change, expected_version, author, note or f"deleted message {index}")


def move_message(
    transcript: Transcript, index: int, to: int, *, expected_version: int, author, note: str = ""
) -> EditResult:
    """Move message ``index`` so that it ends up at index ``to``."""

    def change(messages: list[formats.Message]) -> None:
        check_index(messages, index)
        check_index(messages, to)
        messages.insert(to, messages.pop(index))

    return _save(
        transcript, change, expected_version, author, note or f"moved message {index} to {to}"
    )


def duplicate_message(
    transcript: Transcript, index: int, *, expected_version: int, author, note: str = ""
) -> EditResult:
    """Insert a copy of message ``index`` right after it."""

    def change(messages: list[formats.Message]) -> None:
        check_index(messages, index)
        messages.insert(index + 1, formats.Message.from_dict(messages[index].to_dict()))

    return _save(
        transcript, change, expected_version, author, note or f"duplicated message {index}"
    )


# An edit of the message list: changes the list it is given in place (or raises).
Change = Callable[[list[formats.Message]], None]


def _current_messages(transcript: Transcript, version: int) -> list[formats.Message]:
    """The messages an edit made from ``version`` starts from: as they were at that version,
    never a prefetch from an earlier read. When the transcript has moved on, that version's
    revision holds them (the edit may still be merged on top: ``merge_messages``)."""
    if transcript.version != version:
        base = _messages_of_revision(transcript, version)
        if base is not None:
            return base
    return transcript.messages_at(version)


def _messages_of_revision(transcript: Transcript, number: int) -> list[formats.Message] | None:
    state = _state_of_revision(transcript, number)
    return None if state is None else state.messages


def _state_of_revision(transcript: Transcript, number: int) -> formats.Transcript | None:
    """The canonical transcript revision ``number`` saved, None when there is no such state."""
    revision = Revision.objects.filter(transcript_id=transcript.pk, number=number).first()
    if revision is None:
        return None
    try:
        return revision.canonical()
    except HistoryBroken:  # a row moved on without its revisions: nothing to merge from
        return None


def check_index(messages: Sequence[formats.Message], index: int) -> None:
    if not 0 <= index < len(messages):
        raise MessageNotFound(
            f"No message {index}: the transcript has {len(messages)} "
            f"message{'s' if len(messages) != 1 else ''} (indexes from 0)."
        )


def _one_message(data: Mapping[str, Any], index: int) -> formats.Message:
    """One message from a JSON-like dict, checked like every message input (the index only
    names it in errors)."""
    if not isinstance(data, Mapping):
        raise InvalidContent(f"Message {index} is not an object.", code="invalid-message")
    try:
        [message] = messages_from_input([dict(data)])
    except InvalidContent as refused:
        raise InvalidContent(
            refused.message.replace("Message 0", f"Message {index}", 1), code=refused.code
        ) from None
    return message


def _save(
    transcript: Transcript, change: Change, expected_version: int, author, note: str
) -> EditResult:
    """Save ``change`` applied to the messages at ``expected_version``; from a stale version,
    merged onto the stored messages when no message was changed by both."""
    if transcript.version > expected_version:
        # Known stale already (the row read has moved past it): the change goes to the merge,
        # which applies it to the messages of that version (those read now are another
        # version's: an index may not be there).
        stale = refusal(transcript.pk, expected_version)
        if isinstance(stale, ConflictError):
            return _merged_save(transcript, change, stale, author, note)
        raise stale
    messages = _current_messages(transcript, expected_version)
    change(messages)
    try:
        saved = save_transcript(
            transcript,
            expected_version=expected_version,
            author=author,
            messages=messages,
            note=note,
        )
    except ConflictError as conflict:
        return _merged_save(transcript, change, conflict, author, note)
    return EditResult(saved)


def _merged_save(
    transcript: Transcript, change: Change, conflict: ConflictError, author, note: str
) -> EditResult:
    """Apply ``change``, made from ``conflict.expected_version``, on top of the stored
    version, or raise ``conflict`` when the two overlap.

    Mine is ``change`` applied again to that version as its revision saved it (the page's
    request may have read the messages after the other save). The save is version-checked
    like any other (on the version the merge read), so a third save in between is a
    conflict again."""
    theirs_revision = (
        Revision.objects.filter(transcript_id=transcript.pk, number=conflict.current_version)
        .select_related("author")
        .defer("snapshot")
        .first()
    )
    base = _state_of_revision(transcript, conflict.expected_version)
    theirs_doc = conflict.current["transcript"]
    # Rewritten in another spec meanwhile: the messages do not hold the same fields.
    if theirs_revision is None or base is None or theirs_doc["spec"] != base.spec:
        raise conflict
    theirs = [formats.Message.from_dict(data) for data in theirs_doc["messages"]]
    mine = list(base.messages)
    try:
        change(mine)
    except MessageNotFound:  # the message is not where the page had it
        raise conflict from None
    merged = merge_messages(base.messages, theirs, mine)
    if merged is None:
        raise conflict
    result = EditResult(transcript, merged_with=theirs_revision)
    saved = save_transcript(
        transcript,
        expected_version=conflict.current_version,
        author=author,
        messages=merged,
        note=f"{note} ({result.merge_note})"[:500],
    )
    result.transcript = saved
    return result


def merge_messages(
    base: Sequence[formats.Message],
    theirs: Sequence[formats.Message],
    mine: Sequence[formats.Message],
) -> list[formats.Message] | None:
    """The three-way merge of two edits of ``base``, message by message: a message changed
    on one side only takes that side's version; one changed alike on both sides is kept;
    one changed differently on both sides is a conflict (None).

    Messages are matched by index, so only edits that keep every index are merged: when
    either side inserted or deleted messages (the counts differ), this answers None and the
    caller shows the conflict view (docs/storage.md). A move keeps the count: it is the
    change of each message it shifted, merged like any edit of those messages.
    """
    if not len(base) == len(theirs) == len(mine):
        return None
    merged = []
    for old, their, my in zip(base, theirs, mine, strict=True):
        old_print, their_print, my_print = old.fingerprint(), their.fingerprint(), my.fingerprint()
        if my_print in (old_print, their_print):
            merged.append(their)
        elif their_print == old_print:
            merged.append(my)
        else:
            return None
    return merged


# --- quick fixes ----------------------------------------------------------------------------


def apply_fix(
    transcript: Transcript,
    *,
    code: str,
    message_index: int | None,
    fix_id: str,
    expected_version: int,
    author,
    note: str = "",
) -> EditResult:
    """Apply the quick fix ``fix_id`` of the diagnostic ``code`` on ``message_index``.

    The fix is looked up among the diagnostics of the transcript as it is stored now (so a
    fix computed for another version is never applied to the wrong bytes) and its edits are
    applied to the source text, which is then saved like a raw-mode edit.
    """
    if transcript.version != expected_version:
        # Checked first: a stale fix id would otherwise read as "not found", not a conflict.
        raise refusal(transcript.pk, expected_version)
    diagnostic = next(
        (
            d
            for d in transcript.diagnostics
            if d["code"] == code
            and d.get("message_index") == message_index
            and (d.get("fix") or {}).get("id") == fix_id
        ),
        None,
    )
    if diagnostic is None or not transcript.source_is_exact:
        raise FixNotFound(
            f"The transcript offers no fix {fix_id!r} for {code} on message {message_index} "
            "(it may have changed: reload it)."
        )
    fix = diagnostic["fix"]
    text = apply_edits(transcript.source_text, fix["edits"])
    saved = save_transcript(
        transcript,
        expected_version=expected_version,
        author=author,
        text=text,
        spec=transcript.spec,
        note=note or f"quick fix: {fix['title']} ({code})",
    )
    return EditResult(saved)


# --- review workflow ------------------------------------------------------------------------


def apply_transition(
    transcript: Transcript, name: str, *, expected_version: int, author, note: str = ""
) -> EditResult:
    """Move ``transcript`` along the workflow transition ``name`` (``editor.workflow``)."""
    transition = workflow.check_transition(transcript, name, author)
    previous = transcript.status
    with transaction.atomic():  # the webhook deliveries are written with the change
        saved = save_transcript(
            transcript,
            expected_version=expected_version,
            author=author,
            status=transition.target,
            note=note or transition.label.lower(),
        )
        webhooks.status_changed(saved, previous, author)
    return EditResult(saved)


# --- raw source -----------------------------------------------------------------------------


@dataclass
class Conversion:
    text: str
    spec: str
    losses: list[dict]


def convert_source(text: str, *, spec: str, to: str) -> Conversion:
    """``text`` (in ``spec``) written in ``to``, with what ``to`` cannot say: nothing saved."""
    for name in (spec, to):
        if not formats.is_spec(name):
            raise InvalidContent(f"Unknown spec id {name!r}.", code="unknown-spec")
    converted, losses = convert(formats.parse(text, spec).transcript, to)
    return Conversion(converted, to, [loss.to_dict() for loss in losses])


def replace_source(
    transcript: Transcript,
    text: str,
    *,
    spec: str | None = None,
    convert_to: str | None = None,
    as_draft: bool = False,
    expected_version: int,
    author,
    note: str = "",
) -> EditResult:
    """Replace the whole source text (raw mode), in ``spec`` (the transcript's own).

    ``convert_to``: convert the text to that spec first; the losses come back with the
    result. Text with errors is refused (``HasErrors``, whose details hold the diagnostics)
    unless ``as_draft``: then it is saved with its diagnostics and the status becomes draft.
    """
    spec = spec or transcript.spec
    losses: list[dict] = []
    if convert_to and convert_to != spec:
        conversion = convert_source(text, spec=spec, to=convert_to)
        text, spec, losses = conversion.text, conversion.spec, conversion.losses
    content = TranscriptContent.from_text(text, spec)
    if content.error_count and not as_draft:
        raise HasErrors(
            f"The text has {content.error_count} error"
            f"{'s' if content.error_count != 1 else ''}: fix "
            f"{'them' if content.error_count != 1 else 'it'} or save it as a draft. "
            f"First: {content.first_error()}",
            details={"diagnostics": content.diagnostics},
        )
    saved = save_transcript(
        transcript,
        expected_version=expected_version,
        author=author,
        text=text,
        spec=spec,
        status=Status.DRAFT if as_draft else None,
        note=note or ("saved the source as a draft" if as_draft else "edited the source"),
    )
    return EditResult(saved, losses=losses)


# --- drafts: validation without saving ------------------------------------------------------


@dataclass
class DraftCheck:
    """The diagnostics a draft would have, were it saved."""

    diagnostics: list[dict]
    message_index: int | None = None

    @property
    def error_count(self) -> int:
        return sum(1 for d in self.diagnostics if d["severity"] == "error")

    @property
    def warning_count(self) -> int:
        return sum(1 for d in self.diagnostics if d["severity"] == "warning")

    def for_message(self, index: int) -> list[dict]:
        return [d for d in self.diagnostics if d.get("message_index") == index]

    def placed(self, text: str, message: formats.Message) -> DraftCheck:
        """Each diagnostic of the message being edited (``message``, in ``text``) also says
        which of its fields it is in and where in that field (``field``, ``field_line``,
        ``field_column``, from 1): the annotator types in a field, not in the file. One in
        none of the fields is about the message's markup (its start, a token between the
        fields, its end): ``field`` says so, with no position (the form has no such text)."""
        for diagnostic in self.for_message(self.message_index):
            found = _field_position(text, diagnostic.get("offset"), message)
            if found is None:
                diagnostic["field"] = MARKUP
            else:
                diagnostic["field"], diagnostic["field_line"], diagnostic["field_column"] = found
        return self

    def to_dict(self) -> dict:
        return {
            "diagnostics": self.diagnostics,
            "error_count": self.error_count,
            "warning_count": self.warning_count,
        }


def validate_message_draft(
    transcript: Transcript, index: int, changes: Mapping[str, Any]
) -> DraftCheck:
    """The diagnostics of ``transcript`` with message ``index`` changed as ``changes`` says.

    Whole-transcript rules (call pairing, header, profiles) see the whole draft; positions
    refer to the text the draft would be saved as, and those in message ``index`` also to the
    field they are in (``field``, ``field_line``, ``field_column``: ``DraftCheck.placed``).
    """
    content, message = _message_draft(transcript, index, changes)
    return DraftCheck(content.diagnostics, message_index=index).placed(content.source_text, message)


def _message_draft(
    transcript: Transcript, index: int, changes: Mapping[str, Any]
) -> tuple[TranscriptContent, formats.Message]:
    """The content ``transcript`` would have with message ``index`` changed, and that message."""
    unknown = sorted(set(changes) - EDITABLE_FIELDS)
    if unknown:
        raise InvalidContent(f"Not a message field: {', '.join(unknown)}.", code="invalid-message")
    messages = _current_messages(transcript, transcript.version)
    check_index(messages, index)
    edited = {**messages[index].to_dict(), **changes}
    if "end" not in edited:
        edited["end"] = None
    messages[index] = _one_message(edited, index)
    draft = formats.Transcript(
        spec=transcript.spec, header=transcript.header, messages=messages, attrs=transcript.attrs
    )
    content = TranscriptContent.from_canonical(
        draft, previous_text=transcript.source_text, previous_spec=transcript.spec
    )
    return content, messages[index]


def validate_source_draft(text: str, spec: str) -> DraftCheck:
    """The diagnostics of a whole draft source text in ``spec`` (raw mode)."""
    return DraftCheck(TranscriptContent.from_text(text, spec).diagnostics)


# --- quick fixes of drafts: applied to what is being typed, nothing saved --------------------


def fix_message_draft(
    transcript: Transcript, index: int, changes: Mapping[str, Any], *, code: str, fix_id: str
) -> formats.Message:
    """Message ``index`` of the draft (``changes``) with the quick fix ``fix_id`` of its
    diagnostic ``code`` applied: what the edit form shows next (nothing is saved).

    A fix that would change anything but this message (another message, the header) is
    refused: the form holds this message only; it is offered once the draft is saved."""
    content, _message = _message_draft(transcript, index, changes)
    fix = _offered_fix(content.diagnostics, code, index, fix_id)
    fixed = TranscriptContent.from_text(
        apply_edits(content.source_text, fix["edits"]), content.spec
    )
    before, after = content.canonical, fixed.canonical
    others_kept = len(after.messages) == len(before.messages) and all(
        old.fingerprint() == new.fingerprint()
        for number, (old, new) in enumerate(zip(before.messages, after.messages, strict=True))
        if number != index
    )
    if not others_kept or after.header != before.header or after.attrs != before.attrs:
        raise InvalidContent(
            f"“{fix['title']}” changes more than message {index}: save your edit, then apply "
            "the fix from the diagnostics.",
            code="fix-outside-message",
        )
    return after.messages[index]


def fix_source_draft(
    text: str, spec: str, *, code: str, message_index: int | None, fix_id: str
) -> str:
    """The raw-mode text ``text`` (in ``spec``) with the quick fix ``fix_id`` of its
    diagnostic ``code`` applied (nothing is saved)."""
    if not formats.is_spec(spec):
        raise InvalidContent(f"Unknown spec id {spec!r}.", code="unknown-spec")
    diagnostics = TranscriptContent.from_text(text, spec).diagnostics
    return apply_edits(text, _offered_fix(diagnostics, code, message_index, fix_id)["edits"])


def _offered_fix(diagnostics: list[dict], code: str, message_index: int | None, fix_id: str):
    for diagnostic in diagnostics:
        fix = diagnostic.get("fix") or {}
        if (
            diagnostic["code"] == code
            and diagnostic.get("message_index") == message_index
            and fix.get("id") == fix_id
        ):
            return fix
    raise FixNotFound(
        f"The text offers no fix {fix_id!r} for {code} any more (it changed): see the "
        "diagnostics again."
    )


def _field_position(
    text: str, offset: int | None, message: formats.Message
) -> tuple[str, int, int] | None:
    """The field of ``message`` whose written value is at ``offset`` of ``text`` and the line
    and column there, or None. Each value is looked for only around ``offset`` (never across
    the whole text: this runs on every keystroke of long transcripts); in JSON specs a value
    is written as a string literal, whose escapes count as one character each."""
    if offset is None:
        return None
    for name in ("content", *MESSAGE_HEADER_FIELDS):
        value = getattr(message, name)
        if not isinstance(value, str) or not value:
            continue
        for written in (value, json.dumps(value, ensure_ascii=False)[1:-1]):
            start = text.rfind(written, max(0, offset - len(written)), offset + len(written))
            if start < 0 or not start <= offset <= start + len(written):
                continue
            before = written[: offset - start]
            if written is not value:  # the literal's escapes: count the characters they say
                try:
                    before = json.loads(f'"{before}"')
                except ValueError:
                    continue
            line = before.count("\n") + 1
            return name, line, len(before) - (before.rfind("\n") + 1) + 1
    return None
