"""A message's fields in its spec's own words: the badges shown beside a message.

The canonical model is 2.2-shaped, so without its spec's words a Chat Completions message
would show Harmony's channels, and a Harmony message the model's ``recipient`` instead of
``to=``. Each spec's ``SpecInfo.part_badges`` (declared beside its codec) says how its file
names one canonical message's fields; this module holds what those functions share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from .model import Message, Transcript

if TYPE_CHECKING:
    from .render import RenderedItem

TRUNCATED = "truncated"  # no terminator: the text stopped inside the message


class Badge(NamedTuple):
    label: str  # the spec's word for the field
    value: str | None = None  # None: the label says it all (e.g. "content")


class PartContext(NamedTuple):
    """What a spec's ``part_badges`` needs besides the message and its rendering."""

    transcript: Transcript  # as read: carries layout (the openchatml-json variant) when known
    group: list[Message]  # the canonical messages of the same file message, in order
    end_user: bool  # rendered for end users: end markers are not known, show none


# ``part_badges(message, item, context)``: ``message``'s fields in its spec's words. Values
# come from ``item`` (the rendering for the audience, which leaves out what that audience
# may not see); labels and the ways the file wrote them come from ``message``.
PartBadges = Callable[[Message, "RenderedItem", PartContext], list[Badge]]


def optional_badges(*pairs: tuple[str, str | None]) -> list[Badge]:
    """A badge for each ``(label, value)`` pair that has a value."""
    return [Badge(label, value) for label, value in pairs if value is not None]


def role_and_body_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """The words of a spec that writes a role and a body and nothing else: all there is to
    say is that a message is open (the text stopped inside it)."""
    if not context.end_user and item.end is None:
        return [Badge(TRUNCATED)]
    return []


def role_as_read(message: Message) -> str:
    """The role as the model holds it: how a spec that spells roles as the model does
    writes them."""
    return message.role
