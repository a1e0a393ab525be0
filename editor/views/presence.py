"""The transcript page's heartbeat: who else has the transcript open, and the History panel
again when someone saved meanwhile (``editor.presence``)."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_POST

from editor import presence
from editor.models import Revision
from editor.views.shared import int_param, transcript_for
from editor.views.transcripts import RECENT_REVISIONS, TEMPLATE
from editor.visibility import FULL_CONTENT


@require_POST
def transcript_presence(request, pk):
    """One ping of an open page (every ``presence.PING_SECONDS``): the others who have it
    open, and, when the transcript is no longer at the version the page last heard of
    (``seen``), the History panel out of band and who saved. Nothing the user types in is
    swapped: the page's messages and its version stay as they are (a save from them is
    merged or shows the conflict view)."""
    transcript = transcript_for(request, pk)
    context = {
        "transcript": transcript,
        "pinged": True,
        "others": presence.heartbeat(transcript.pk, request.user),
        "can_see_all": FULL_CONTENT in transcript.dataset.audiences_for(request.user),
    }
    seen = int_param(request.POST.get("seen"))
    if seen is not None and seen != transcript.version:
        revisions = list(Revision.objects.for_transcript(transcript)[:RECENT_REVISIONS])
        newest = revisions[0] if revisions else None
        context.update(
            revisions=revisions,
            history_changed=True,
            saved_by_other=newest if newest and newest.author_id != request.user.pk else None,
        )
    return render(request, TEMPLATE + "#presence-answer", context)
