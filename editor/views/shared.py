"""What the HTML views share: finding the transcript a URL names among the user's (through
``editor.visibility``, as the API does), refusing viewers where editing is asked, and reading
numeric parameters."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from editor.errors import TranscriptDeleted
from editor.models import Transcript
from editor.visibility import visible_transcript


def transcript_for(request, pk: int) -> Transcript:
    """Transcript ``pk`` if the user may see it; a deleted one is not found here (its page is
    gone until a curator undeletes it from the dataset page)."""
    try:
        return visible_transcript(request.user, pk)
    except TranscriptDeleted:
        raise Http404(f"No transcript {pk} among yours.") from None


def editable_transcript(request, pk: int) -> Transcript:
    """A transcript the user may edit: its editors see everything; viewers are refused here,
    in the view, not only by a template that hides the controls."""
    transcript = transcript_for(request, pk)
    if not transcript.dataset.can_edit(request.user):
        raise PermissionDenied("Your role in this dataset does not allow editing.")
    return transcript


def int_param(value, default: int | None = None) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
