"""The transcript page's in-place editor (htmx): thin views over ``editor.editing``.

Every write posts the version the page shows (``#transcript-version``, kept current by
out-of-band swaps) and answers fragments: the changed message or the message list, the
diagnostics panel and the new version. A stale version answers the conflict view (409); bad
input answers the form's error box (422) without touching what the user typed.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from editor import editing, formats
from editor.errors import ConflictError, DomainError, InvalidContent, NotAllowed
from editor.formats.model import SEMANTIC_FIELDS
from editor.models import ALL_AUDIENCES, END_USER_AUDIENCE, Transcript
from editor.presentation.transcript_view import (
    end_choices,
    form_fields,
    ordered_diagnostics,
    transcript_view,
)
from editor.revisions import diff_snapshots, restore_revision
from editor.views.shared import editable_transcript, int_param, transcript_for
from editor.views.transcripts import TEMPLATE, message_list_context, transcript_context
from editor.visibility import FULL_CONTENT, require_audience

OPTIONAL_FIELDS = tuple(f for f in SEMANTIC_FIELDS if f not in ("role", "content", "attrs"))


def _audience(request) -> str:
    audience = request.GET.get("audience") or request.POST.get("audience") or END_USER_AUDIENCE
    return audience if audience in ALL_AUDIENCES else END_USER_AUDIENCE


# --- one message ------------------------------------------------------------------------------


@require_GET
def message_detail(request, pk, index):
    """One message's card (what "cancel" and "discard mine" swap back in)."""
    transcript = transcript_for(request, pk)
    audience = _audience(request)
    require_audience_or_403(transcript, request.user, audience)
    return _card_response(request, transcript, index, audience)


def require_audience_or_403(transcript: Transcript, user, audience: str) -> None:
    try:
        require_audience(transcript.dataset, user, audience)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None


def _card_response(request, transcript, index, audience, *, extra: dict | None = None, status=200):
    if not 0 <= index < transcript.message_count:
        raise Http404("No such message.")
    context = transcript_context(request, transcript, audience)
    context.update(extra or {})
    if not request.htmx:
        return redirect(_page_url(transcript, audience, index))
    context["card"] = transcript_view(transcript, audience).card(index)
    context["message_index"] = index
    return render(request, TEMPLATE + "#message-saved", context, status=status)


@require_GET
def message_edit(request, pk, index):
    """The edit form of one message (swapped in place of its card); without JavaScript, the
    page with the form in the message's place."""
    transcript = editable_transcript(request, pk)
    message = transcript.stored_message(index) if index >= 0 else None
    if message is None:
        raise Http404("No such message.")
    if not request.htmx:
        url = reverse("transcript", args=[transcript.pk])
        return redirect(f"{url}?audience={_audience(request)}&edit={index}#message-{index}")
    return render(
        request, TEMPLATE + "#message-form", _form_context(request, transcript, index, message)
    )


def _form_context(request, transcript, index, message, *, new_after: int | None = None) -> dict:
    return {
        **transcript_context(request, transcript, _audience(request)),
        "message_index": index,
        "message": message,
        "fields": form_fields(transcript.spec, message),
        "end_choices": end_choices(transcript.spec),
        "new_after": new_after,
    }


def _posted_fields(request) -> dict:
    """The canonical fields of the edit form: empty optional fields are absent (None)."""
    post = request.POST
    changes: dict = {}
    if "role" in post:
        changes["role"] = post["role"].strip()
    if "content" in post:
        # Browsers send textarea line breaks as CRLF; the transcript's own are LF.
        changes["content"] = post["content"].replace("\r\n", "\n")
    for name in OPTIONAL_FIELDS:
        if name in post:
            changes[name] = post[name].strip() or None
    if "attrs" in post:
        text = post["attrs"].strip()
        try:
            attrs = json.loads(text) if text else {}
        except json.JSONDecodeError as error:
            raise InvalidContent(
                f"More fields: attrs is not JSON: {error.msg} (line {error.lineno}, column "
                f"{error.colno}).",
                code="invalid-message",
            ) from None
        if not isinstance(attrs, dict):
            raise InvalidContent("attrs must be a JSON object.", code="invalid-message")
        changes["attrs"] = attrs
    return changes


@require_POST
def message_validate(request, pk, index):
    """Live validation of the form being typed: the diagnostics panel and the message's badge,
    out of band; the form itself (and its textarea) is never swapped. With ``fix_id``, a
    quick fix the panel offers for the draft: the form comes back with it applied (the user
    clicked; nothing is saved)."""
    transcript = editable_transcript(request, pk)
    require_audience_or_403(transcript, request.user, FULL_CONTENT)
    if request.POST.get("fix_id"):
        return _fixed_draft(request, transcript, index)
    try:
        check = editing.validate_message_draft(transcript, index, _posted_fields(request))
    except InvalidContent as refused:
        return _form_error(request, index, refused.message)
    except editing.MessageNotFound:
        raise Http404("No such message.") from None
    context = transcript_context(request, transcript, _audience(request))
    context.update(
        diagnostics=ordered_diagnostics(check.diagnostics),
        draft=True,
        message_index=index,
        draft_errors=sum(1 for d in check.for_message(index) if d["severity"] == "error"),
        draft_warnings=sum(1 for d in check.for_message(index) if d["severity"] == "warning"),
    )
    return render(request, TEMPLATE + "#draft-checked", context)


def _fixed_draft(request, transcript, index):
    """The edit form again with a quick fix applied to the draft, and its diagnostics."""
    try:
        fixed = editing.fix_message_draft(
            transcript,
            index,
            _posted_fields(request),
            code=request.POST.get("code", ""),
            fix_id=request.POST.get("fix_id", ""),
        )
        fields = {name: getattr(fixed, name) for name in SEMANTIC_FIELDS}
        check = editing.validate_message_draft(transcript, index, fields)
    except DomainError as refused:
        return _form_error(request, index, refused.message, status=refused.status)
    context = _form_context(request, transcript, index, fixed)
    context.update(
        diagnostics=ordered_diagnostics(check.diagnostics),
        draft=True,
        draft_errors=sum(1 for d in check.for_message(index) if d["severity"] == "error"),
        draft_warnings=sum(1 for d in check.for_message(index) if d["severity"] == "warning"),
    )
    response = HttpResponse(
        render_to_string(TEMPLATE + "#message-form", context, request)
        + render_to_string(TEMPLATE + "#draft-checked", context, request)
    )
    response["HX-Retarget"] = f"#message-{index}"
    response["HX-Reswap"] = "outerHTML"
    return response


def _form_error(request, index, message: str, *, status: int = 422) -> HttpResponse:
    """The form's error box, out of band; nothing else of the form changes."""
    response = render(
        request,
        TEMPLATE + "#form-error",
        {"message_index": index, "error": message},
        status=status,
    )
    response["HX-Reswap"] = "none"
    return response


@require_POST
def message_save(request, pk, index):
    transcript = editable_transcript(request, pk)
    audience = _audience(request)
    expected = int_param(request.POST.get("version"), 0)
    try:
        changes = _posted_fields(request)
        result = editing.edit_message(
            transcript,
            index,
            changes,
            expected_version=expected,
            author=request.user,
            note=request.POST.get("note", ""),
        )
    except ConflictError as conflict:
        return _conflict(request, transcript, index, conflict, changes, audience)
    except editing.MessageNotFound as missing:
        return _form_error(request, index, missing.message, status=404)
    except DomainError as refused:
        return _form_error(request, index, refused.message, status=refused.status)
    if result.merged_with is not None:
        # Someone else's save went in meanwhile: the whole list, with theirs, and say so.
        return _list_response(
            request,
            result.transcript,
            audience,
            focus=index,
            extra={"toast": f"Saved: {result.merge_note}."},
        )
    return _card_response(request, result.transcript, index, audience, extra={"saved": True})


# --- conflicts --------------------------------------------------------------------------------


def _conflict(request, transcript, index, conflict: ConflictError, changes: dict, audience):
    """Theirs and mine side by side: their version of the message (found again by aligning
    the version I edited with theirs), my draft, and what else they changed."""
    base = transcript.revisions.filter(number=conflict.expected_version).first()
    theirs = conflict.current
    their_index, other_changes = _their_index(base.full_snapshot if base else None, theirs, index)
    their_messages = theirs["transcript"]["messages"]
    their_message = their_messages[their_index] if their_index is not None else None
    mine = {**(their_message or {}), **{k: v for k, v in changes.items() if v is not None}}
    context = transcript_context(request, transcript, audience)
    context.update(
        conflict=conflict,
        message_index=index,
        their_index=their_index,
        their_message=their_message,
        my_changes=changes,
        my_message=mine,
        other_changes=[c for c in other_changes if c.new_index != their_index],
        current_version=conflict.current_version,
        mine_json=json.dumps(changes, ensure_ascii=False),
    )
    return render(request, TEMPLATE + "#message-conflict", context, status=conflict.status)


def _their_index(base: dict | None, theirs: dict, index: int):
    """Where message ``index`` of the version I edited is in theirs, and their changes."""
    if base is None:
        return (index if index < len(theirs["transcript"]["messages"]) else None), []
    diff = diff_snapshots(base, theirs)
    changed = [m for m in diff.messages if m.status != "unchanged"]
    for change in diff.messages:
        if change.old_index == index:
            return change.new_index, changed
    return None, changed


@require_POST
def message_resolve(request, pk, index):
    """Resolve a conflict: "mine on top of theirs" saves my draft onto their version (their
    other changes stay; theirs of this message stays in the history); "discard mine" shows
    theirs. Either way the page takes the current version."""
    transcript = editable_transcript(request, pk)
    audience = _audience(request)
    if request.POST.get("choice") == "mine":
        try:
            changes = json.loads(request.POST.get("mine", "{}") or "{}")
        except ValueError:
            changes = None
        if not isinstance(changes, dict):
            return _form_error(request, index, "Your draft did not come through; edit again.")
        target = int_param(request.POST.get("their_index"))
        try:
            if target is None:  # they deleted the message: mine comes back as a new one
                result = editing.insert_message(
                    transcript,
                    index - 1 if index > 0 else None,
                    {"role": "user", **changes},
                    expected_version=int_param(request.POST.get("version"), 0),
                    author=request.user,
                    note="conflict: my version of a message they deleted",
                )
                target = index
            else:
                result = editing.edit_message(
                    transcript,
                    target,
                    changes,
                    expected_version=int_param(request.POST.get("version"), 0),
                    author=request.user,
                    note=request.POST.get("note", "") or "conflict: my change on top of theirs",
                )
        except ConflictError as conflict:
            return _conflict(request, transcript, index, conflict, changes, audience)
        except DomainError as refused:
            return _form_error(request, index, refused.message, status=refused.status)
        return _list_response(request, result.transcript, audience, focus=target)
    return _list_response(
        request, transcript, audience, focus=int_param(request.POST.get("their_index"))
    )


# --- structure: insert, delete, move, duplicate, undo ------------------------------------------


def _list_response(request, transcript, audience, *, focus: int | None, extra: dict | None = None):
    """The whole messages section again (indexes shift), through the page of ``focus``, with
    the diagnostics and version out of band; the client scrolls to ``focus``."""
    transcript.refresh_from_db()
    view = transcript_view(transcript, audience)
    context = transcript_context(request, transcript, audience)
    context.update(message_list_context(view, view.page_holding(focus or 0)))
    context.update(extra or {})
    context["oob"] = True
    if not request.htmx:
        return redirect(_page_url(transcript, audience, focus))
    response = render(request, TEMPLATE + "#messages-changed", context)
    if focus is not None:
        response["HX-Trigger-After-Settle"] = json.dumps({"ocm:focus-message": {"index": focus}})
    response["HX-Reswap"] = "none"  # every part of the answer is out of band
    return response


def _page_url(transcript, audience: str, focus: int | None) -> str:
    """Where a write made without JavaScript lands: the page, at the message it touched."""
    url = f"{reverse('transcript', args=[transcript.pk])}?audience={audience}"
    if focus is None:
        return url
    return f"{url}&upto={focus}#message-{focus}"


@require_GET
def message_new(request, pk):
    """A form for a new message after ``?after=i`` (at the start without it)."""
    transcript = editable_transcript(request, pk)
    after = int_param(request.GET.get("after"))
    messages = transcript.stored_messages()
    if after is not None and not 0 <= after < len(messages):
        raise Http404("No such message.")
    previous = messages[after] if after is not None else None
    role = "assistant" if previous is not None and previous.role == "user" else "user"
    # In a spec with channels, a new assistant message starts on the spec's default one.
    channel = formats.spec_info(transcript.spec).default_channel if role == "assistant" else None
    draft = formats.Message(role=role, channel=channel)
    position = 0 if after is None else after + 1
    context = _form_context(
        request, transcript, position, draft, new_after=-1 if after is None else after
    )
    return render(request, TEMPLATE + "#message-form", context)


def _write_and_show(
    request,
    transcript: Transcript,
    operation: Callable[[int], editing.EditResult],
    *,
    focus: Callable[[editing.EditResult], int | None] | None = None,
    toast: Callable[[editing.EditResult], str] | None = None,
    undo: bool = False,
) -> HttpResponse:
    """Run one write of the message list (``operation(expected_version)``) and answer the list
    again; a stale page, a refusal or a missing message answers without changing anything."""
    audience = _audience(request)
    try:
        result = operation(int_param(request.POST.get("version"), 0))
    except ConflictError as conflict:
        return _stale_list(request, transcript, audience, conflict)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:
        return _toast(request, refused.message, status=refused.status)
    extra = {}
    if toast is not None:
        extra["toast"] = toast(result)
    if undo:
        extra["undo_revision"] = result.version - 1
    return _list_response(
        request,
        result.transcript,
        audience,
        focus=None if focus is None else focus(result),
        extra=extra,
    )


def _stale_list(request, transcript, audience, conflict: ConflictError):
    """A structural change on a stale page: nothing changed; show the current list and say so."""
    return _list_response(
        request,
        transcript,
        audience,
        focus=None,
        extra={
            "toast": f"Not done: {conflict.message} The list now shows the current version; "
            "try again.",
            "toast_conflict": True,
        },
    )


def _toast(request, message: str, *, status: int = 200):
    response = render(request, TEMPLATE + "#toast", {"toast": message, "oob": True}, status=status)
    response["HX-Reswap"] = "none"
    return response


@require_POST
def message_insert(request, pk):
    transcript = editable_transcript(request, pk)
    after = int_param(request.POST.get("after"))
    after = None if after is None or after < 0 else after
    try:
        fields = _posted_fields(request)
    except InvalidContent as refused:
        return _form_error(request, "new", refused.message)
    return _write_and_show(
        request,
        transcript,
        lambda version: editing.insert_message(
            transcript, after, fields, expected_version=version, author=request.user
        ),
        focus=lambda _: 0 if after is None else after + 1,
    )


@require_POST
def message_delete(request, pk, index):
    transcript = editable_transcript(request, pk)
    return _write_and_show(
        request,
        transcript,
        lambda version: editing.delete_message(
            transcript, index, expected_version=version, author=request.user
        ),
        focus=lambda _: max(index - 1, 0),
        toast=lambda _: f"Message #{index} deleted.",
        undo=True,
    )


@require_POST
def message_move(request, pk, index):
    transcript = editable_transcript(request, pk)
    to = int_param(request.POST.get("to"), index)
    return _write_and_show(
        request,
        transcript,
        lambda version: editing.move_message(
            transcript, index, to, expected_version=version, author=request.user
        ),
        focus=lambda _: to,
    )


@require_POST
def message_duplicate(request, pk, index):
    transcript = editable_transcript(request, pk)
    return _write_and_show(
        request,
        transcript,
        lambda version: editing.duplicate_message(
            transcript, index, expected_version=version, author=request.user
        ),
        focus=lambda _: index + 1,
    )


@require_POST
def transcript_fix(request, pk):
    """Apply one diagnostic's quick fix (as the diagnostics panel names it)."""
    transcript = editable_transcript(request, pk)
    message_index = int_param(request.POST.get("message_index"))
    return _write_and_show(
        request,
        transcript,
        lambda version: editing.apply_fix(
            transcript,
            code=request.POST.get("code", ""),
            message_index=message_index,
            fix_id=request.POST.get("fix_id", ""),
            expected_version=version,
            author=request.user,
        ),
        focus=lambda _: message_index,
        toast=lambda _: "Fixed.",
        undo=True,
    )


@require_POST
def transcript_transition(request, pk):
    """Move the transcript along the review workflow (submit, approve, reject, reopen)."""
    transcript = transcript_for(request, pk)
    return _write_and_show(
        request,
        transcript,
        lambda version: editing.apply_transition(
            transcript,
            request.POST.get("name", ""),
            expected_version=version,
            author=request.user,
            note=request.POST.get("note", ""),
        ),
        toast=lambda result: f"Status: {result.transcript.get_status_display().lower()}.",
    )


@require_POST
def transcript_undo(request, pk):
    """Undo the last change by restoring the revision before it (a new revision)."""
    transcript = editable_transcript(request, pk)
    number = int_param(request.POST.get("revision"), 0)
    revision = get_object_or_404(transcript.revisions, number=number)
    return _write_and_show(
        request,
        transcript,
        lambda version: editing.EditResult(
            restore_revision(
                revision,
                expected_version=version,
                author=request.user,
                note=f"undo: back to revision {number}",
            )
        ),
        toast=lambda _: f"Undone: back to revision {number}.",
    )
