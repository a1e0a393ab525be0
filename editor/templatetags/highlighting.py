"""The markup of highlighted raw source: one filter for every page that shows it."""

from django import template
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

from editor.presentation.display import Segment

register = template.Library()


@register.filter
def token_marks(segments: list[Segment]) -> SafeString:
    """``display.token_segments`` as HTML: each control token in ``<mark class="tok
    tok-KIND">``, the text around escaped (one string, for the inside of a ``<pre>``)."""
    return mark_safe(
        "".join(
            format_html('<mark class="tok tok-{}">{}</mark>', segment.kind, segment.text)
            if segment.kind
            else conditional_escape(segment.text)
            for segment in segments
        )
    )
