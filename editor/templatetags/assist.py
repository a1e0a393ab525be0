"""Template tags of model assistance: which connections a user may regenerate a turn with."""

from django import template

from editor.assist.connections import connections_of

register = template.Library()


@register.simple_tag(takes_context=True)
def regenerate_connections(context, transcript, user) -> list[dict]:
    """The dataset's connections as {"id", "name", "model"} when ``user`` edits its
    transcripts, else none (the Regenerate item is offered to editors only). Read once per
    rendering: every assistant message's menu asks, the page and a message swapped in alone
    alike."""
    if transcript is None:
        return []
    key = ("assist-connections", transcript.pk)
    known = context.render_context.get(key)
    if known is None:
        known = []
        if transcript.dataset.can_edit(user):
            known = [
                {"id": c.pk, "name": c.name, "model": c.model}
                for c in connections_of(transcript.dataset).only("pk", "name", "model")
            ]
        context.render_context[key] = known
    return known
