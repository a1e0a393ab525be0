import json

from django import template
from django.utils.safestring import SafeString

from editor.presentation.markup import pretty_json_body, render_markdown

register = template.Library()


@register.filter
def pretty_json(value) -> str:
    """A JSON value as indented text (for headers and metadata shown to humans)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


@register.filter
def markdown(text: str) -> SafeString:
    """A message body as sanitized HTML (editor.presentation.markup.render_markdown)."""
    return render_markdown(text or "")


@register.filter
def json_body(text: str) -> str | None:
    """A body that is one JSON object or array, indented; None for any other body."""
    return pretty_json_body(text or "")


@register.filter
def next_look(task, progress=None) -> str:
    """When a page polling an unfinished task asks again, for ``hx-trigger="every …"``: in
    milliseconds, which no locale writes with a decimal comma."""
    return f"{round(task.seconds_to_next_look(progress) * 1000)}ms"
