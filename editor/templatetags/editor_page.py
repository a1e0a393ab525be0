"""Filters of the transcript page and its editor."""

from django import template

from editor.presentation.transcript_view import PAGE_SIZE, body_kind, span_segments

register = template.Library()

MIN_ROWS, MAX_ROWS = 3, 24


@register.filter(name="body_kind")
def body_kind_filter(item) -> str:
    return body_kind(item)


@register.filter
def rows_for(text: str) -> int:
    """Rows for a textarea holding ``text``: all of it, within bounds."""
    lines = text.count("\n") + 1 + len(text) // 100
    return max(MIN_ROWS, min(MAX_ROWS, lines))


@register.filter
def page_start(page: int) -> int:
    """The index of the first message on ``page``."""
    return page * PAGE_SIZE


@register.filter
def rating_range(scale: int) -> range:
    """The answers of a rating question: 1 to ``scale``."""
    return range(1, (scale or 0) + 1)


BAR_ROW, BAR_MAX = 20, 240


@register.filter
def bar_height(rows: int) -> int:
    """The height of a bar chart of ``rows`` bars."""
    return rows * BAR_ROW + 4


@register.filter
def bar_y(row: int) -> int:
    return row * BAR_ROW


@register.filter
def bar_width(count: int, distribution) -> int:
    """A bar's length, the largest count filling the chart."""
    largest = max((c for _, c in distribution), default=0)
    return round(count * BAR_MAX / largest) if largest else 0


@register.filter
def get_item(mapping, key):
    """``mapping[key]``, or None (templates cannot index a dict by a variable)."""
    return mapping.get(key) if mapping else None


@register.filter
def span_pieces(text: str, spans) -> list:
    """A message's text cut at its tagged spans (``transcript_page.span_segments``)."""
    return span_segments(text, spans or [])


@register.filter
def answer_value(value) -> str:
    """An answer as a reviewer reads it: a multi-choice answer's options joined."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
