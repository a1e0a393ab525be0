import json

from django import template

register = template.Library()


@register.filter
def pretty_json(value) -> str:
    """A JSON value as indented text (for headers and metadata shown to humans)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
