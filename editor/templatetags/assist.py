"""Template tags of model assistance: which connections a user may regenerate a turn with."""

from django import template

from editor.models import ModelConnection

register = template.Library()

MEMO = "_regenerate_connections"


@register.simple_tag
def regenerate_connections(transcript, user) -> list[dict]:
    """The dataset's connections as {"id", "name", "model"} when ``user`` edits its
    transcripts, else none (the Regenerate item is offered to editors only). One query per
    transcript object, asked by the first assistant message rendered (the page, a page of
    messages or a message swapped in); a page with no assistant message asks nothing. The
    page's script comes with every editor's page (templates/editor/regenerate.html#config),
    whether or not this asked."""
    if transcript is None:
        return []
    known = transcript.__dict__.get(MEMO)
    if known is None:
        known = []
        # A rendering without a request (an e-mail, a test's template) has no user to ask.
        if getattr(user, "is_authenticated", False) and transcript.dataset.can_edit(user):
            known = list(
                ModelConnection.objects.filter(dataset_id=transcript.dataset_id)
                .order_by("name")
                .values("id", "name", "model")
            )
        transcript.__dict__[MEMO] = known
    return known
