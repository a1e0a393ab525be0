"""Accepting a model's suggestion from the question panel (transcript page, queue item)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from editor.assist import suggestions
from editor.errors import DomainError, NotAllowed
from editor.labels import definition_of
from editor.models import LabelSchema
from editor.visibility import visible_suggestion


@require_POST
def suggestion_accept(request, pk):
    """Make the suggestion the person's answer; htmx gets the question back, answered."""
    try:
        suggestion = visible_suggestion(request.user, pk)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    transcript = suggestion.transcript
    try:
        annotation = suggestions.accept(suggestion, user=request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:  # an archived schema, a value the schema no longer takes
        if not request.htmx:
            messages.error(request, refused.message)
            return redirect("transcript", transcript.pk)
        return HttpResponse(refused.message, status=refused.status)
    if not request.htmx:
        return redirect("transcript", transcript.pk)
    schema = LabelSchema.objects.select_related("current_version").get(
        pk=annotation.schema_version.schema_id
    )
    question = definition_of(schema.current_version).question(suggestion.question)
    suggestion.refresh_from_db()
    return render(
        request,
        "editor/labels.html#question",
        {
            "transcript": transcript,
            "schema": schema,
            "question": question,
            "value": annotation.value,
            "index": suggestion.message_index,
            "suggestion": suggestion,
        },
    )
