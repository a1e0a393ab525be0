"""Template tags of model assistance: which connections a user may regenerate a turn with."""

from django import template

from editor.models import ModelConnection

register = template.Library()

MEMO = "_regenerate_connections"


@register.simple_tag
def regenerate_connections(transcript, user) -> list[dict]:
    """The dataset's connections as {"id", "name", "model"} when ``user`` edits its
    transcripts, else none (the Regenerate item is offered to editors only). One query per
    transcript object, asked by the first assistant message rendered (the page, or a message
    swapped in alone); a page with no assistant message asks nothing."""
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


@register.filter
def regenerate_asked(transcript) -> list[dict]:
    """What ``regenerate_connections`` found while this rendering drew the messages (none
    when no assistant message asked): the page's script and settings come only with it."""
    return transcript.__dict__.get(MEMO) or [] if transcript is not None else []
