"""Raw-source mode (the whole text in its spec) and the transcript's export menu: thin views
over ``editor.editing`` and ``editor.exporting``. A very long source is shown a window at a
time, read-only (``editor.presentation.source_window``).

Saving the source is a plain form post (it works without JavaScript): on an error or a
conflict the page comes back with the user's text as typed, never with it replaced.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from editor import editing, formats
from editor.errors import ConflictError, DomainError
from editor.exporting import export_transcript
from editor.models import Transcript
from editor.models.revisions import snapshot
from editor.presentation.display import token_segments
from editor.presentation.source_window import is_windowed, source_window
from editor.presentation.transcript_view import ordered_diagnostics
from editor.revisions import diff_snapshots
from editor.storage.content import TranscriptContent
from editor.views.shared import editable_transcript, int_param, transcript_for
from editor.visibility import export_audience

TEMPLATE = "editor/source.html"
JSON_EXTENSION, TEXT_EXTENSION = "json", "txt"


def _context(transcript: Transcript, text: str, spec: str, diagnostics: list[dict]) -> dict:
    return {
        "transcript": transcript,
        "text": text,
        "spec": spec,
        "segments": token_segments(text, spec),
        "line_numbers": range(1, text.count("\n") + 2),
        "diagnostics": ordered_diagnostics(diagnostics),
        "error_lines": sorted({d["line"] for d in diagnostics if d["severity"] == "error"}),
        "spec_ids": formats.spec_ids(),
    }


def _window_context(request, transcript: Transcript) -> dict:
    """A source too long to edit whole: the window asked for (``at``, or ``line`` from a
    diagnostic's link), read-only, with the diagnostics of its lines."""
    window = source_window(
        transcript.source_text,
        transcript.spec,
        at=int_param(request.GET.get("at")),
        line=int_param(request.GET.get("line")),
    )
    shown = [
        d for d in transcript.diagnostics if window.first_line <= d["line"] <= window.last_line
    ]
    return {
        "transcript": transcript,
        "spec": transcript.spec,
        "window": window,
        "segments": token_segments(window.text, transcript.spec),
        "line_numbers": window.line_numbers,
        "diagnostics": ordered_diagnostics(shown),
        "diagnostic_count": len(transcript.diagnostics),
        "error_lines": sorted({d["line"] for d in shown if d["severity"] == "error"}),
    }


@require_http_methods(["GET", "POST"])
def source_editor(request, pk):
    """GET: the source in its spec. POST: save it (``draft`` to keep errors; ``convert_to``
    to convert it first); a refusal or a conflict shows the page again with the text kept."""
    transcript = editable_transcript(request, pk)
    if request.method == "GET" and is_windowed(transcript.source_text):
        return render(request, TEMPLATE, _window_context(request, transcript))
    if request.method == "GET":
        context = _context(
            transcript, transcript.source_text, transcript.spec, transcript.diagnostics
        )
        return render(request, TEMPLATE, context)
    text = request.POST.get("text", "").replace("\r\n", "\n")
    if transcript.source_text.count("\r\n") and "\r\n" not in text:
        text = text.replace("\n", "\r\n")  # a CRLF document stays CRLF
    spec = request.POST.get("spec") or transcript.spec
    convert_to = request.POST.get("convert_to") or None
    try:
        result = editing.replace_source(
            transcript,
            text,
            spec=spec,
            convert_to=convert_to,
            as_draft=bool(request.POST.get("draft")),
            expected_version=int_param(request.POST.get("version"), 0),
            author=request.user,
            note=request.POST.get("note", ""),
        )
    except ConflictError as conflict:
        return _conflict_page(request, transcript, text, spec, conflict)
    except editing.HasErrors as refused:
        context = _context(transcript, text, spec, refused.details["diagnostics"])
        context.update(refusal=refused, offer_draft=True)
        return render(request, TEMPLATE, context, status=refused.status)
    except DomainError as refused:
        context = _context(transcript, text, spec, [])
        context["refusal"] = refused
        return render(request, TEMPLATE, context, status=refused.status)
    saved = result.transcript
    note = f"Saved as version {saved.version}"
    if result.losses:
        note += f" in {saved.spec}; {len(result.losses)} thing(s) could not be carried over"
    messages.success(request, note + ("; status: draft" if saved.status == "draft" else "") + ".")
    return redirect("transcript-source", pk=saved.pk)


def _conflict_page(request, transcript, text, spec, conflict: ConflictError):
    """Theirs (the current text) and mine side by side, message by message; my text stays in
    the editor, and the form now carries their version, so saving puts mine on top."""
    current = conflict.current
    context = _context(transcript, text, spec, [])
    try:
        mine = TranscriptContent.from_text(text, spec)
        mine_snapshot = {**snapshot(transcript), "source_text": text}
        mine_snapshot["transcript"] = mine.canonical.to_dict()
        context["conflict_diff"] = diff_snapshots(
            current, mine_snapshot, old_label="theirs", new_label="yours"
        )
    except DomainError:
        context["conflict_diff"] = None
    context.update(
        conflict=conflict, their_text=current["source_text"], version=conflict.current_version
    )
    return render(request, TEMPLATE, context, status=conflict.status)


@require_POST
def source_validate(request, pk):
    """Live validation of the text being typed: the diagnostics panel and the text
    highlighted, both swapped in out of band (the textarea itself is never replaced while
    the user types). With ``fix_id``, a quick fix the panel offers: the text comes back with
    it applied, the textarea too (the user clicked; nothing is saved)."""
    transcript = editable_transcript(request, pk)
    text = request.POST.get("text", "").replace("\r\n", "\n")
    spec = request.POST.get("spec") or transcript.spec
    if not formats.is_spec(spec):
        spec = transcript.spec
    fixed, refused = None, None
    if request.POST.get("fix_id"):
        try:
            text = editing.fix_source_draft(
                text,
                spec,
                code=request.POST.get("code", ""),
                message_index=int_param(request.POST.get("message_index")),
                fix_id=request.POST["fix_id"],
            )
            fixed = request.POST.get("fix_title") or request.POST.get("code", "")
        except DomainError as refusal:
            refused = refusal
    check = editing.validate_source_draft(text, spec)
    context = _context(transcript, text, spec, check.diagnostics)
    context.update(draft=True, fixed=fixed, fix_refusal=refused)
    return render(request, TEMPLATE + "#live-check", context)


@require_POST
def source_convert_preview(request, pk):
    """What converting the text being typed to another spec gives, and what it loses:
    shown before anything changes."""
    transcript = editable_transcript(request, pk)
    text = request.POST.get("text", "").replace("\r\n", "\n")
    spec = request.POST.get("spec") or transcript.spec
    to = request.POST.get("convert_to") or ""
    try:
        conversion = editing.convert_source(text, spec=spec, to=to)
    except DomainError as refused:
        return render(request, TEMPLATE + "#conversion-preview", {"refusal": refused}, status=200)
    return render(
        request,
        TEMPLATE + "#conversion-preview",
        {"conversion": conversion, "transcript": transcript, "spec": spec},
    )


@require_GET
def transcript_export(request, pk):
    """The export menu: with ``preview`` (or from htmx) the losses of writing the transcript
    in ``spec``; otherwise the file itself, to download."""
    transcript = transcript_for(request, pk)
    spec = request.GET.get("spec") or transcript.spec
    audience = request.GET.get("audience") or None
    try:
        export_audience(transcript.dataset, request.user, audience)
        exported = export_transcript(transcript, spec=spec, audience=audience)
    except DomainError as refused:
        if request.htmx:
            return render(
                request, "editor/transcript.html#export-losses", {"refusal": refused}, status=200
            )
        context = {"refusal": refused, "transcript": transcript, "exported": None}
        return render(request, "editor/export_preview.html", context, status=refused.status)
    if request.htmx or request.GET.get("preview"):
        context = {"exported": exported, "transcript": transcript, "audience": audience}
        if request.htmx:
            return render(request, "editor/transcript.html#export-losses", context)
        return render(request, "editor/export_preview.html", context)
    extension = TEXT_EXTENSION if formats.spec_info(exported.spec).text else JSON_EXTENSION
    name = f"transcript-{transcript.pk}.{exported.spec}.{extension}"
    response = HttpResponse(exported.text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
