"""Semantic validation: the rules beyond syntax (docs/formats.md, "Validation").

``validate(transcript, text=…)`` runs every rule that applies to the transcript's spec and
returns the diagnostics in text order (rule order at equal offsets: header, channels and
roles, calls, then the v0.1 / MMS rules). The rules and their codes are tabled in the docstrings of ``header``,
``calls`` and ``legacy``. Parse diagnostics are not repeated here.
"""

from __future__ import annotations

from operator import attrgetter

from ..diagnostics import Diagnostic
from ..model import Transcript
from ..parsing import parse
from ..specs import is_spec
from . import calls, header, legacy
from .context import Context

V01 = "openchatml-0.1"
MMS_SPECS = frozenset({"mms", "mms-tokens"})
BY_OFFSET = attrgetter("offset")


def validate_text(text: str, spec: str | None = None) -> tuple[Transcript, list[Diagnostic]]:
    """Parse ``text`` (its spec detected when not given) and validate it: the transcript and
    every diagnostic, syntax first, then the semantic ones (``ocm validate``, the API)."""
    return validate_parsed(text, parse(text, spec=spec))


def validate_parsed(text: str, parsed: tuple[Transcript, list[Diagnostic]]):
    """``validate_text`` of a ``text`` already parsed (a JSONL record is parsed from what
    was read to find its spec): the parse's diagnostics, then the semantic ones."""
    transcript, diagnostics = parsed
    if not is_spec(transcript.spec):  # nothing was detected: nothing to validate
        return transcript, diagnostics
    return transcript, diagnostics + validate(transcript, text=text)


def validate(transcript: Transcript, *, text: str | None = None) -> list[Diagnostic]:
    """Every semantic diagnostic of ``transcript``; positions refer to ``text`` when given."""
    ctx = Context(transcript, text)
    header.check(ctx)
    if transcript.spec == V01:
        legacy.check_v01(ctx)
    elif transcript.spec in MMS_SPECS:
        # MMS calls are tool formats answered by context messages: their own pairing rule.
        legacy.check_mms(ctx)
    else:
        calls.check(ctx, hip1=header.hip1_active(ctx))
    # In text order (stable: rule order among diagnostics at the same offset).
    return sorted(ctx.diagnostics, key=BY_OFFSET)
