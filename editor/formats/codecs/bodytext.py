"""Message bodies as written in a spec versus their logical text.

Only OpenChatML 2.2 distinguishes the two (§3): a body may write a control token as text with
the ``<<|`` escape or inside a ``<|literal|>…<|endliteral|>`` block. Every other spec's body is
its logical text; in those, control-token text cannot be written at all (it would be read as
a token), so conversion reports it (``convert.lower``).
"""

from __future__ import annotations

from .scanner import escape, unescape

OCM22 = "openchatml-2.2"
# The nine 2.2 control tokens (§3).
OCM22_VOCABULARY = frozenset(
    {"start", "channel", "message", "call", "constrain", "return", "end", "literal", "endliteral"}
)


def logical_text(spec: str, content: str) -> str:
    """The text a reader sees: escapes and literal blocks resolved for 2.2, else as is."""
    return unescape(content, OCM22_VOCABULARY) if spec == OCM22 else content


def written_text(spec: str, text: str) -> str:
    """``text`` as a ``spec`` body: control tokens escaped with ``<<|`` for 2.2, else as is."""
    return escape(text, OCM22_VOCABULARY) if spec == OCM22 else text
