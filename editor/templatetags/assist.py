"""Template tags of model assistance: which connections a user may regenerate a turn with."""

from django import template

from editor.assist.connections import connections_of

register = template.Library()


@register.simple_tag
def regenerate_connections(transcript, user) -> list[dict]:
    """The dataset's connections as {"id", "name", "model"} when ``user`` edits its
    transcripts, else none (the Regenerate item is offered to editors only)."""
    if transcript is None or not transcript.dataset.can_edit(user):
        return []
    return [
        {"id": c.pk, "name": c.name, "model": c.model}
        for c in connections_of(transcript.dataset).only("pk", "name", "model")
    ]
